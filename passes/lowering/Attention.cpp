//===- Attention.cpp - Lower kiln.attention -------------------------------===//
//
// The attention family of kiln-convert-onnx-to-linalg: kiln.attention (recognized by
// kiln-recognize-composites) becomes the batched contraction Q Kt, the scale and
// mask, a Softmax over the last axis and the contraction P V — the generics the
// `attention` fusion rule makes one kernel (one row per batch index and query).
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Reduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

/// out[batch..., i, j] = sum_k a[batch..., i, k] * b[batch..., k, j]: loops
/// (batch..., i, j, k), the reduction last, summed in the accumulator type
/// (accumulatorType: f32 for f16) and converted back.
Value batchedMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto a = cast<RankedTensorType>(lhs.getType()), c = cast<RankedTensorType>(rhs.getType());
  int64_t r = a.getRank();
  SmallVector<int64_t> shape(a.getShape());
  shape[r - 1] = c.getDimSize(r - 1);
  auto type = RankedTensorType::get(shape, a.getElementType());
  RankedTensorType accType = accumulatorTensorType(type);
  Type acc = accType.getElementType();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> batch;
  for (int64_t d = 0; d < r - 2; ++d)
    batch.push_back(getAffineDimExpr(d, ctx));
  AffineExpr i = getAffineDimExpr(r - 2, ctx), j = getAffineDimExpr(r - 1, ctx),
             k = getAffineDimExpr(r, ctx);
  auto map = [&](AffineExpr x, AffineExpr y) {
    SmallVector<AffineExpr> results(batch);
    results.push_back(x);
    results.push_back(y);
    return AffineMap::get(r + 1, 0, results, ctx);
  };
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{accType}, ValueRange{lhs, rhs}, ValueRange{filledTensor(b, loc, accType, 0)},
      ArrayRef<AffineMap>{map(i, k), map(k, j), map(i, j)}, iters,
      [acc](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, multiplyAdd(nb, l, castFloat(nb, l, args[0], acc),
                                                  castFloat(nb, l, args[1], acc), args[2]));
      });
  return fromAccumulator(b, loc, generic.getResult(0), type);
}

struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto qType = cast<RankedTensorType>(adaptor.getQ().getType());
    auto elem = dyn_cast<FloatType>(qType.getElementType());
    if (!elem)
      return rewriter.notifyMatchFailure(op, "attention needs float tensors");
    Location loc = op.getLoc();
    Value scores = batchedMatMul(rewriter, loc, adaptor.getQ(), adaptor.getKt());
    auto scoresType = cast<RankedTensorType>(scores.getType());
    double scale = op.getScale().convertToDouble(), fill = op.getFill().convertToDouble();
    StringRef kind = op.getMaskKind();
    SmallVector<Value> inputs{scores};
    if (adaptor.getMask())
      inputs.push_back(adaptor.getMask());
    Value masked = buildElementwise(
        rewriter, loc, scoresType, inputs, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value s = b.create<arith::MulFOp>(l, a[0], scalarConstant(b, l, elem, scale));
          if (kind == "add")
            return b.create<arith::AddFOp>(l, s, a[1]);
          if (kind == "keep")
            return b.create<arith::SelectOp>(l, a[1], s, scalarConstant(b, l, elem, fill));
          return s;
        });
    SmallVector<bool> lastAxis(scoresType.getRank(), false);
    lastAxis.back() = true;
    Value probs = softmax(rewriter, loc, masked, lastAxis);
    rewriter.replaceOp(op, batchedMatMul(rewriter, loc, probs, adaptor.getV()));
    return success();
  }
};

} // namespace

void populateAttentionLoweringPatterns(RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<AttentionLowering>(converter, patterns.getContext());
}

} // namespace kiln
