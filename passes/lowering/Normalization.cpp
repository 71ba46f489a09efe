//===- Normalization.cpp - Lower normalizations to linalg -----------------===//
//
// This file implements the normalization family for inference:
// BatchNormalization (running statistics), LayerNormalization and
// InstanceNormalization (statistics over the normalized dimensions, computed as
// mean and mean of squared deviations), MeanVarianceNormalization, and LRN (a
// window sum of squares across channels of the zero-padded input). Training-mode outputs are not lowered.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Reduction.h"

using namespace mlir;

namespace kiln {
namespace {

Value addF(OpBuilder &b, Location l, Value acc, Value x) {
  return b.create<arith::AddFOp>(l, acc, x);
}

/// Mean over `reduced` (keepdims).
Value meanKeepDims(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t count = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (reduced[d])
      count *= type.getDimSize(d);
  Value s = reduceKeepDims(b, loc, x, reduced, 0, addF);
  return buildElementwise(b, loc, cast<RankedTensorType>(s.getType()), ValueRange{s},
                          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return nb.create<arith::DivFOp>(
                                l, a[0], scalarConstant(nb, l, type.getElementType(), count));
                          });
}

/// The mean over the `reduced` dims (kept as size 1), x minus it, and the mean of
/// its squares (the variance).
void centerAndVariance(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced,
                       Value &mean, Value &centered, Value &var) {
  auto type = cast<RankedTensorType>(x.getType());
  mean = meanKeepDims(b, loc, x, reduced);
  centered = buildElementwise(b, loc, type, ValueRange{x, mean},
                              [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                return nb.create<arith::SubFOp>(l, a[0], a[1]);
                              });
  Value sq = buildElementwise(b, loc, type, ValueRange{centered},
                              [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                return nb.create<arith::MulFOp>(l, a[0], a[0]);
                              });
  var = meanKeepDims(b, loc, sq, reduced);
}

/// (x - mean) / sqrt(var + eps) over `reduced`, then * scale + bias (already
/// shaped to broadcast against x; bias may be null). `meanOut` and `varOut`, when
/// given, receive the keepdims statistics.
Value normalize(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced,
                double epsilon, Value scale, Value bias, Value *meanOut = nullptr,
                Value *varOut = nullptr) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType();
  Value mean, centered, var;
  centerAndVariance(b, loc, x, reduced, mean, centered, var);
  if (meanOut)
    *meanOut = mean;
  if (varOut)
    *varOut = var;
  SmallVector<Value> inputs{centered, var};
  if (scale)
    inputs.push_back(scale);
  if (bias)
    inputs.push_back(bias);
  return buildElementwise(
      b, loc, type, inputs, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value denom = nb.create<math::SqrtOp>(
            l, nb.create<arith::AddFOp>(l, a[1], scalarConstant(nb, l, elem, epsilon)));
        Value y = nb.create<arith::DivFOp>(l, a[0], denom);
        size_t next = 2;
        if (scale)
          y = nb.create<arith::MulFOp>(l, y, a[next++]);
        if (bias)
          y = nb.create<arith::AddFOp>(l, y, a[next++]);
        return y;
      });
}

bool allNone(ValueRange values) {
  return llvm::all_of(values, [](Value v) { return isa<NoneType>(v.getType()); });
}

struct BatchNormLowering : ConversionPattern {
  BatchNormLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->getName().getStringRef().starts_with("onnx.BatchNormalization") ||
        !allNone(op->getResults().drop_front()))
      return failure();
    if (auto t = op->getAttrOfType<IntegerAttr>("training_mode"); t && t.getInt())
      return failure();
    auto type = cast<RankedTensorType>(operands[0].getType());
    if (!isa<FloatType>(type.getElementType()) || type.getRank() < 2)
      return failure();
    double eps = 1e-5;
    if (auto e = op->getAttrOfType<FloatAttr>("epsilon"))
      eps = e.getValueAsDouble();
    Location loc = op->getLoc();
    int64_t rank = type.getRank();
    SmallVector<Value> inputs{operands[0]};
    for (unsigned i = 1; i <= 4; ++i)
      inputs.push_back(perChannel(rewriter, loc, operands[i], rank));
    Type elem = type.getElementType();
    Value y = buildElementwise(
        rewriter, loc, type, inputs, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          // (x - mean) / sqrt(var + eps) * scale + bias
          Value denom = b.create<math::SqrtOp>(
              l, b.create<arith::AddFOp>(l, a[4], scalarConstant(b, l, elem, eps)));
          Value n = b.create<arith::DivFOp>(l, b.create<arith::SubFOp>(l, a[0], a[3]), denom);
          return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, n, a[1]), a[2]);
        });
    SmallVector<Value> results{y};
    for (unsigned i = 1; i < op->getNumResults(); ++i)
      results.push_back(rewriter.create<onnx::NoValueOp>(loc, rewriter.getNoneType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LayerNormLowering : OpConversionPattern<onnx::LayerNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LayerNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (!normalizeAxis(axis, rank) || !isa<FloatType>(type.getElementType()))
      return failure();
    // Statistics are computed in the input type (stash_type f32 for f32 inputs).
    SmallVector<bool> reduced(rank, false);
    for (int64_t d = axis; d < rank; ++d)
      reduced[d] = true;
    Location loc = op.getLoc();
    Value bias = isa<NoneType>(adaptor.getB().getType()) ? Value() : adaptor.getB();
    Value mean, var;
    double eps = op.getEpsilon().convertToDouble();
    Value y = normalize(rewriter, loc, adaptor.getX(), reduced, eps,
                        adaptor.getScale(), bias, &mean, &var);
    SmallVector<Value> results{y};
    // Mean and InvStdDev, when asked for, in their inferred (keepdims) types.
    for (unsigned i = 1; i < op->getNumResults(); ++i) {
      Value r = op->getResult(i);
      if (isa<NoneType>(r.getType())) {
        results.push_back(rewriter.create<onnx::NoValueOp>(loc, rewriter.getNoneType()));
        continue;
      }
      auto rType = cast<RankedTensorType>(getTypeConverter()->convertType(r.getType()));
      if (rType.getElementType() != type.getElementType())
        return failure();
      Value stat = mean;
      if (i == 2)
        stat = buildElementwise(
            rewriter, loc, cast<RankedTensorType>(var.getType()), ValueRange{var},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              Value sd = b.create<math::SqrtOp>(
                  l, b.create<arith::AddFOp>(
                         l, a[0], scalarConstant(b, l, type.getElementType(), eps)));
              return b.create<arith::DivFOp>(
                  l, scalarConstant(b, l, type.getElementType(), 1), sd);
            });
      results.push_back(reshapeTo(rewriter, loc, stat, rType));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct InstanceNormLowering : OpConversionPattern<onnx::InstanceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::InstanceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = type.getRank();
    if (rank < 3 || !isa<FloatType>(type.getElementType()))
      return failure();
    SmallVector<bool> reduced(rank, true);
    reduced[0] = reduced[1] = false;
    Location loc = op.getLoc();
    Value y = normalize(rewriter, loc, adaptor.getInput(), reduced,
                        op.getEpsilon().convertToDouble(),
                        perChannel(rewriter, loc, adaptor.getScale(), rank),
                        perChannel(rewriter, loc, adaptor.getB(), rank));
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes`
/// (default N, H, W), as ONNX's function body defines it.
struct MeanVarianceNormalizationLowering
    : OpConversionPattern<onnx::MeanVarianceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MeanVarianceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> axes{0, 2, 3};
    if (std::optional<ArrayAttr> given = op.getAxes())
      axes = llvm::to_vector(llvm::map_range(
          given->getAsRange<IntegerAttr>(), [](IntegerAttr a) { return a.getInt(); }));
    SmallVector<bool> reduced(rank, false);
    for (int64_t axis : axes) {
      if (!normalizeAxis(axis, rank))
        return rewriter.notifyMatchFailure(op, "axis out of range");
      reduced[axis] = true;
    }
    Location loc = op.getLoc();
    Type elem = type.getElementType();
    Value mean, centered, variance;
    centerAndVariance(rewriter, loc, x, reduced, mean, centered, variance);
    Value y = buildElementwise(
        rewriter, loc, type, ValueRange{centered, variance},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value std = b.create<math::SqrtOp>(l, a[1]);
          Value denom = b.create<arith::AddFOp>(l, std, scalarConstant(b, l, elem, 1e-9));
          return b.create<arith::DivFOp>(l, a[0], denom);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
/// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta, the window clipped at the
/// edges (read from the squares padded with zeros across channels).
struct LRNLowering : OpConversionPattern<onnx::LRNOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LRNOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t size = static_cast<int64_t>(op.getSize()), rank = type.getRank();
    if (!type.hasStaticShape() || rank < 2 || size < 1)
      return failure();
    Location loc = op.getLoc();
    Type elem = type.getElementType();
    Value squares = buildElementwise(rewriter, loc, type, ValueRange{x},
                                     [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                       return b.create<arith::MulFOp>(l, a[0], a[0]);
                                     });
    SmallVector<int64_t> low(rank, 0), high(rank, 0);
    low[1] = (size - 1) / 2;
    high[1] = size - 1 - low[1];
    Value padded = padTensor(rewriter, loc, squares, low, high, 0.0);
    MLIRContext *ctx = getContext();
    SmallVector<AffineExpr> window;
    for (int64_t d = 0; d < rank; ++d)
      window.push_back(d == 1 ? getAffineDimExpr(1, ctx) + getAffineDimExpr(rank, ctx)
                              : getAffineDimExpr(d, ctx));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // The window dim's extent comes from a (never read) operand of `size` elements.
    auto windowType = RankedTensorType::get({size}, elem);
    auto sum = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{padded, emptyTensor(rewriter, loc, windowType)},
        ValueRange{filledTensor(rewriter, loc, type, 0)},
        ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, window, ctx),
                            AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, ctx)),
                            AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)},
        iterators, [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(l, b.create<arith::AddFOp>(l, args[2], args[0]).getResult());
        });
    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    double bias = op.getBias().convertToDouble();
    Value y = buildElementwise(
        rewriter, loc, type, ValueRange{x, sum.getResult(0)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value scaled = b.create<arith::MulFOp>(
              l, a[1], scalarConstant(b, l, elem, alpha / static_cast<double>(size)));
          Value base = b.create<arith::AddFOp>(l, scaled, scalarConstant(b, l, elem, bias));
          Value denom = b.create<math::PowFOp>(l, base, scalarConstant(b, l, elem, beta));
          return b.create<arith::DivFOp>(l, a[0], denom);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateNormalizationLoweringPatterns(RewritePatternSet &patterns,
                                           TypeConverter &converter) {
  patterns.add<BatchNormLowering, LayerNormLowering, InstanceNormLowering, LRNLowering,
               MeanVarianceNormalizationLowering>(
      converter, patterns.getContext());
}

} // namespace kiln
