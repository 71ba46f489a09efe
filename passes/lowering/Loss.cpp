//===- Loss.cpp - Lower the loss ops to linalg ----------------------------===//
//
// This file implements the loss family. NegativeLogLikelihoodLoss is one generic
// over the targets that gathers each target's input (negated) and weight (zero
// where the target is ignore_index), then for `sum` and `mean` reductions of both:
// mean = sum of losses / sum of weights, as ONNX defines it with and without class
// weights. SoftmaxCrossEntropyLoss is, as its ONNX function says, LogSoftmax over
// the class axis followed by NegativeLogLikelihoodLoss (its optional second output
// is that LogSoftmax); the new onnx ops are lowered in the same conversion.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Reduction.h"

using namespace mlir;

namespace kiln {
namespace {

struct NegativeLogLikelihoodLossLowering
    : OpConversionPattern<onnx::NegativeLogLikelihoodLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::NegativeLogLikelihoodLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput(), target = adaptor.getTarget();
    Value weight = adaptor.getWeight();
    bool weighted = !isa<NoneType>(weight.getType());
    auto inType = cast<RankedTensorType>(input.getType());
    auto targetType = cast<RankedTensorType>(target.getType());
    auto lossType = resultTypeOf(getTypeConverter(), op);
    StringRef reduction = op.getReduction();
    if (!lossType || !inType.hasStaticShape() || !targetType.hasStaticShape() ||
        inType.getRank() < 2 || targetType.getRank() != inType.getRank() - 1 ||
        !llvm::is_contained({"none", "sum", "mean"}, reduction))
      return failure();
    Location loc = op.getLoc();
    Type elem = inType.getElementType();
    int64_t classes = inType.getDimSize(1), rank = targetType.getRank();
    std::optional<int64_t> ignore;
    if (std::optional<uint64_t> i = op.getIgnoreIndex())
      ignore = static_cast<int64_t>(*i);
    // Per target: (-input[n, t, d...] * w, w), w = weight[t] (or 1), 0 if ignored.
    auto perTarget = RankedTensorType::get(targetType.getShape(), elem);
    MLIRContext *ctx = getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{perTarget, perTarget}, ValueRange{target},
        ValueRange{emptyTensor(rewriter, loc, perTarget), emptyTensor(rewriter, loc, perTarget)},
        ArrayRef<AffineMap>{identity, identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value t = args[0];
          Value cls = wrapIndex(b, l, t, classes);
          SmallVector<Value> coords{b.create<linalg::IndexOp>(l, 0), cls};
          for (int64_t d = 1; d < rank; ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d));
          Value x = b.create<tensor::ExtractOp>(l, input, coords);
          Value w = weighted ? b.create<tensor::ExtractOp>(l, weight, ValueRange{cls}).getResult()
                             : scalarConstant(b, l, elem, 1);
          if (ignore) {
            Value ignored = b.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::eq, t,
                b.create<arith::ConstantIntOp>(l, *ignore, t.getType()));
            w = b.create<arith::SelectOp>(l, ignored, scalarConstant(b, l, elem, 0), w);
          }
          Value loss = b.create<arith::NegFOp>(l, b.create<arith::MulFOp>(l, x, w));
          b.create<linalg::YieldOp>(l, ValueRange{loss, w});
        });
    Value losses = generic.getResult(0), weights = generic.getResult(1);
    if (reduction == "none") {
      rewriter.replaceOp(op, losses);
      return success();
    }
    SmallVector<bool> all(rank, true);
    auto add = [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
      return b.create<arith::AddFOp>(l, acc, x);
    };
    Value sum = reduceDims(rewriter, loc, losses, all, 0, add);
    if (reduction == "mean") {
      Value total = reduceDims(rewriter, loc, weights, all, 0, add);
      sum = buildElementwise(rewriter, loc, cast<RankedTensorType>(sum.getType()),
                             ValueRange{sum, total},
                             [](OpBuilder &b, Location l, ValueRange a) -> Value {
                               return b.create<arith::DivFOp>(l, a[0], a[1]);
                             });
    }
    if (sum.getType() != lossType)
      sum = reshapeTo(rewriter, loc, sum, lossType);
    rewriter.replaceOp(op, sum);
    return success();
  }
};

struct SoftmaxCrossEntropyLossLowering
    : OpConversionPattern<onnx::SoftmaxCrossEntropyLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SoftmaxCrossEntropyLossOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // In ONNX types: the new onnx ops are converted by their own patterns.
    auto scores = cast<RankedTensorType>(op.getScores().getType());
    if (scores.getRank() < 2)
      return failure();
    Location loc = op.getLoc();
    auto logProb = rewriter.create<onnx::LogSoftmaxOp>(loc, scores, op.getScores(),
                                                       rewriter.getI64IntegerAttr(1));
    auto nll = rewriter.create<onnx::NegativeLogLikelihoodLossOp>(
        loc, op.getOutput().getType(), logProb.getResult(), op.getLabels(), op.getWeights(),
        op.getIgnoreIndexAttr(), op.getReductionAttr());
    SmallVector<Value> results{nll.getResult()};
    if (op->getNumResults() > 1)
      results.push_back(isa<NoneType>(op.getLogProb().getType())
                            ? Value(rewriter.create<onnx::NoValueOp>(loc, rewriter.getNoneType()))
                            : Value(logProb.getResult()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateLossLoweringPatterns(RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<NegativeLogLikelihoodLossLowering, SoftmaxCrossEntropyLossLowering>(
      converter, patterns.getContext());
}

} // namespace kiln
