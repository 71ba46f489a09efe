//===- FuseElementwise.cpp - Fuse producer-consumer elementwise generics --===//
//
// This file implements kiln-fuse-elementwise (see Passes.td): linalg's
// elementwise fusion, applied where it saves work: a producer is fused into an
// elementwise consumer only when that consumer is its sole user, so nothing is
// computed twice (not even per reduction step).
// Chains of elementwise ops (bias, activation, residual add, normalization
// arithmetic) become one generic and therefore one kernel. Reshapes between them
// fold into the generics' loops (linalg's fold-by-collapsing).
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A generic that computes nothing: it only moves its one input (a transpose).
bool movesOnly(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1)
    return false;
  Block &body = generic.getRegion().front();
  return body.getTerminator()->getOperand(0) == body.getArgument(0);
}

/// A generic that only converts its one input between float types (the Cast of a
/// graph input to f16): one instruction a load, nothing to recompute.
bool convertsOnly(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  Operation &convert = body.front();
  return isa<arith::ExtFOp, arith::TruncFOp>(convert) &&
         convert.getOperand(0) == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == convert.getResult(0);
}

bool isReductionResult(Value v) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  return op && op.getNumReductionLoops() > 0;
}

/// An elementwise generic that narrows a reduction's result (the truncf that
/// brings an f32 accumulator back to f16, perhaps with more fused in).
bool narrowsReduction(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 || generic->getNumResults() != 1)
    return false;
  unsigned width = getElementTypeOrSelf(generic->getResult(0).getType()).getIntOrFloatBitWidth();
  return llvm::any_of(generic.getDpsInputs(), [&](Value in) {
    return isReductionResult(in) &&
           getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth() > width;
  });
}

/// A transpose of a reduction's result (attention heads permuted back) becomes
/// the reduction's own output layout: its output map is permuted and the
/// transpose goes, so no copy kernel runs.
struct TransposeIntoProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp transpose,
                                PatternRewriter &rewriter) const override {
    if (!movesOnly(transpose) || transpose.getNumReductionLoops() != 0)
      return failure();
    AffineMap in = transpose.getMatchingIndexingMap(transpose.getDpsInputOperand(0));
    AffineMap out = transpose.getMatchingIndexingMap(transpose.getDpsInitOperand(0));
    if (!out.isIdentity() || !in.isPermutation())
      return failure();
    auto producer = transpose.getDpsInputOperand(0)->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->getNumResults() != 1 || !producer->getResult(0).hasOneUse() ||
        producer.getNumReductionLoops() == 0)
      return failure();
    // The producer's init: a fill of an empty tensor (its value carries over).
    auto fill = producer.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return failure();
    // transpose[c] = producer[in(c)]: the producer writes element i at in^-1(i).
    AffineMap inverse = inversePermutation(in);
    AffineMap producerOut = producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
    AffineMap permuted = inverse.compose(producerOut);
    auto type = cast<RankedTensorType>(transpose->getResult(0).getType());
    Location loc = producer.getLoc();
    rewriter.setInsertionPoint(producer);
    Value empty = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    Value init = rewriter.create<linalg::FillOp>(loc, fill.getInputs()[0], empty).getResult(0);
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.back() = permuted;
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, producer.getDpsInputs(), ValueRange{init}, maps,
        producer.getIteratorTypesArray());
    rewriter.inlineRegionBefore(producer.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    rewriter.replaceOp(transpose, generic->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// pad(convert(x)) -> convert(pad(x)) for a constant padding value: the
/// conversion then meets the Conv or pooling that reads the pad (and fuses into
/// it), and the pad joins that kernel by FormKernels' pad rule. The padding value
/// is converted exactly (zero, or -inf for a max pool).
struct ConvertAfterPad : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    auto convert = pad.getSource().getDefiningOp<linalg::GenericOp>();
    if (!convert || !convertsOnly(convert) || !convert->hasOneUse())
      return failure();
    auto value = pad.getConstantPaddingValue();
    FloatAttr attr;
    if (!value || !matchPattern(value, m_Constant(&attr)))
      return failure();
    Value source = convert.getDpsInputOperand(0)->get();
    auto from = cast<FloatType>(getElementTypeOrSelf(source.getType()));
    APFloat v = attr.getValue();
    bool losesInfo = false;
    v.convert(from.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    Location loc = pad.getLoc();
    auto padType = cast<RankedTensorType>(pad.getType());
    auto widePadType = RankedTensorType::get(padType.getShape(), from);
    Value padValue = rewriter.create<arith::ConstantOp>(loc, rewriter.getFloatAttr(from, v));
    auto newPad = rewriter.create<tensor::PadOp>(loc, widePadType, source, pad.getMixedLowPad(),
                                                 pad.getMixedHighPad(), padValue);
    Value empty = rewriter.create<tensor::EmptyOp>(loc, padType.getShape(),
                                                   padType.getElementType());
    auto identity = rewriter.getMultiDimIdentityMap(padType.getRank());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{padType}, ValueRange{newPad.getResult()}, ValueRange{empty},
        ArrayRef<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(padType.getRank(), utils::IteratorType::parallel));
    rewriter.cloneRegionBefore(convert.getRegion(), generic.getRegion(),
                               generic.getRegion().begin());
    rewriter.replaceOp(pad, generic->getResults());
    rewriter.eraseOp(convert);
    return success();
  }
};

struct FuseElementwisePass
    : kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    // Transposes as generics, so that the fusion below can fold them into their
    // consumers' indexing (a transpose before a MatMul costs no copy).
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::TransposeOp> named;
    if (transposes)
      getOperation().walk([&](linalg::TransposeOp t) { named.push_back(t); });
    for (linalg::TransposeOp t : named) {
      rewriter.setInsertionPoint(t);
      if (failed(linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(t.getOperation()))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [&](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          // Into a consumer with reduction loops (a matmul, a reduction) the
          // producer would be recomputed on every reduction step: only fuse into
          // elementwise consumers, unless the producer computes nothing.
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          if (!producer || !producer->hasOneUse() || !consumer)
            return false;
          // A consumer of two reductions (a residual Add of two convolutions) is
          // the epilogue of one of them at most: the other's narrowing stays out,
          // to be its own reduction's epilogue, so that its accumulator never
          // reaches memory.
          if (narrowsReduction(producer) &&
              llvm::any_of(consumer->getOpOperands(), [&](OpOperand &other) {
                return &other != fused && isReductionResult(other.get());
              }))
            return false;
          // A transpose (a generic that only moves its one input) costs a
          // reduction consumer nothing to absorb: its loads read the source; a
          // float conversion costs one instruction a load.
          return consumer.getNumReductionLoops() == 0 || (transposes && movesOnly(producer)) ||
                 convertsOnly(producer);
        });
    // A reshape between elementwise generics (a Flatten, the unit dims of a
    // keepdims reduction) is folded into the generic's loops, so that the chain
    // meets: expand_shape -> generic becomes a generic over the collapsed dims.
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, [](OpOperand *fused) {
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      auto producer = fused->get().getDefiningOp<linalg::LinalgOp>();
      return (!consumer || consumer.getNumReductionLoops() == 0) &&
             (!producer || producer.getNumReductionLoops() == 0);
    });
    if (transposes)
      patterns.add<TransposeIntoProducer>(&getContext());
    patterns.add<ConvertAfterPad>(&getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
