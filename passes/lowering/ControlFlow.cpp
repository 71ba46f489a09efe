//===- ControlFlow.cpp - Lower Scan to a loop ------------------------------===//
//
// This file implements the control-flow family: an onnx.Scan that reaches the
// tensor phase (kiln-decompose makes one per direction of RNN, GRU and LSTM; the
// graph phase unrolls a model's own) becomes an scf.for over the scan length. The
// states are loop-carried (each step's new state copied into the state's tensor,
// so that bufferization updates one buffer in place), each scan input is sliced at the step (from the end for
// a reverse direction), each scan output is carried whole and the step's value
// inserted at its position. The body's onnx ops are moved into the loop and lowered
// by the same conversion; the kernels phase keeps the loop as one kernel.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln {
namespace {

struct ScanLowering : OpConversionPattern<onnx::ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ScanOp scan, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = scan.getLoc();
    ValueRange operands = adaptor.getInitialStateAndScanInputs();
    Block &body = scan.getBody().front();
    int64_t m = scan.getNumScanInputs();
    int64_t n = static_cast<int64_t>(operands.size()) - m;
    int64_t k = static_cast<int64_t>(body.getTerminator()->getNumOperands()) - n;
    if (n < 0 || k < 0 || m < 1 || scan->getNumResults() != static_cast<unsigned>(n + k))
      return failure();
    // Static, signless shapes only (the graph phase unrolls every other Scan).
    auto legal = [&](Type t) {
      auto r = dyn_cast<RankedTensorType>(t);
      return r && r.hasStaticShape() && getTypeConverter()->convertType(t) == t;
    };
    if (!llvm::all_of(scan->getOperandTypes(), legal) ||
        !llvm::all_of(scan->getResultTypes(), legal) ||
        !llvm::all_of(body.getArgumentTypes(), legal))
      return failure();
    auto ints = [&](std::optional<ArrayAttr> a, int64_t count) {
      SmallVector<int64_t> v(count, 0);
      if (a)
        for (auto [i, e] : llvm::enumerate(*a))
          if (static_cast<int64_t>(i) < count)
            v[i] = cast<IntegerAttr>(e).getInt();
      return v;
    };
    SmallVector<int64_t> inAxes = ints(scan.getScanInputAxes(), m),
                         inDirs = ints(scan.getScanInputDirections(), m),
                         outAxes = ints(scan.getScanOutputAxes(), k),
                         outDirs = ints(scan.getScanOutputDirections(), k);
    int64_t length = -1;
    for (int64_t j = 0; j < m; ++j) {
      auto t = cast<RankedTensorType>(operands[n + j].getType());
      if (!normalizeAxis(inAxes[j], t.getRank()))
        return failure();
      if (length >= 0 && t.getDimSize(inAxes[j]) != length)
        return failure();
      length = t.getDimSize(inAxes[j]);
    }
    for (int64_t j = 0; j < k; ++j) {
      auto t = cast<RankedTensorType>(scan->getResult(n + j).getType());
      if (!normalizeAxis(outAxes[j], t.getRank()) || t.getDimSize(outAxes[j]) != length)
        return failure();
    }

    // The slice of `type` at `pos` along `axis` (rank-reduced).
    auto sliceAt = [&](OpBuilder &b, RankedTensorType type, int64_t axis, Value pos) {
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
          strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t d = 0; d < type.getRank(); ++d)
        sizes.push_back(b.getIndexAttr(d == axis ? 1 : type.getDimSize(d)));
      offsets[axis] = pos;
      return std::make_tuple(offsets, sizes, strides);
    };

    SmallVector<Value> inits(operands.take_front(n));
    for (int64_t j = 0; j < k; ++j)
      inits.push_back(emptyTensor(rewriter, loc,
                                  cast<RankedTensorType>(scan->getResult(n + j).getType())));
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value end = rewriter.create<arith::ConstantIndexOp>(loc, length);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rewriter.create<scf::ForOp>(loc, zero, end, one, inits);
    Block *loopBody = loop.getBody();
    rewriter.setInsertionPointToStart(loopBody);
    Value step = loop.getInductionVar();
    Value last = rewriter.create<arith::ConstantIndexOp>(loc, length - 1);
    Value backwards = rewriter.create<arith::SubIOp>(loc, last, step);
    SmallVector<Value> args(loop.getRegionIterArgs().take_front(n));
    for (int64_t j = 0; j < m; ++j) {
      Value in = operands[n + j];
      auto [offsets, sizes, strides] =
          sliceAt(rewriter, cast<RankedTensorType>(in.getType()), inAxes[j],
                  inDirs[j] ? backwards : step);
      args.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, cast<RankedTensorType>(body.getArgument(n + j).getType()), in, offsets,
          sizes, strides));
    }
    rewriter.mergeBlocks(&body, loopBody, args);
    Operation *yield = loopBody->getTerminator();
    rewriter.setInsertionPoint(yield);
    // Each new state is copied into the state's own tensor, which bufferizes to one
    // buffer the loop updates in place.
    SmallVector<Value> next;
    for (int64_t j = 0; j < n; ++j)
      next.push_back(rewriter
                         .create<linalg::CopyOp>(loc, yield->getOperand(j),
                                                 loop.getRegionIterArgs()[j])
                         .getResult(0));
    for (int64_t j = 0; j < k; ++j) {
      Value out = loop.getRegionIterArgs()[n + j];
      auto [offsets, sizes, strides] =
          sliceAt(rewriter, cast<RankedTensorType>(out.getType()), outAxes[j],
                  outDirs[j] ? backwards : step);
      next.push_back(rewriter.create<tensor::InsertSliceOp>(loc, yield->getOperand(n + j),
                                                            out, offsets, sizes, strides));
    }
    rewriter.create<scf::YieldOp>(loc, next);
    rewriter.eraseOp(yield);
    rewriter.replaceOp(scan, loop.getResults());
    return success();
  }
};

/// kiln.if stays (kiln-build-plan guards its branches); its types become signless
/// like its branch functions'.
struct IfTypes : OpConversionPattern<IfOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), results)))
      return failure();
    rewriter.replaceOpWithNewOp<IfOp>(op, results, adaptor.getCond(), adaptor.getInputs(),
                                      op.getThenBranchAttr(), op.getElseBranchAttr());
    return success();
  }
};

} // namespace

void populateControlFlowLoweringPatterns(RewritePatternSet &patterns,
                                         TypeConverter &converter) {
  patterns.add<ScanLowering, IfTypes>(converter, patterns.getContext());
}

} // namespace kiln
