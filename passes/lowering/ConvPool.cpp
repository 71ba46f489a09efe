//===- ConvPool.cpp - Lower convolution and pooling to linalg -------------===//
//
// This file implements the convolution and pooling family for any number of
// spatial dimensions. Conv is one linalg.generic over (n, f, out..., c, k...) that
// reads the zero-padded input at out * stride + k * dilation and the group's input
// channel (f floordiv M/group) * C/group + c, so grouped and depthwise convolutions
// need no special case; the bias is a broadcast epilogue. MaxPool and AveragePool
// reduce windows of the padded input (-inf or 0); AveragePool divides by the count
// of the window's elements that ONNX counts (real ones, or real and explicit pads
// with count_include_pad), counted in closed form from the output index.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

SmallVector<int64_t> intsOr(Operation *op, StringRef name, size_t n, int64_t dflt) {
  SmallVector<int64_t> v;
  if (auto a = op->getAttrOfType<ArrayAttr>(name))
    for (Attribute x : a)
      v.push_back(cast<IntegerAttr>(x).getInt());
  if (v.empty())
    v.assign(n, dflt);
  return v;
}

/// Window geometry of a conv or pool on input spatial sizes `in`.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
};

/// Reads kernel/strides/dilations/pads/auto_pad; `out` are the (inferred) output
/// spatial sizes, used to pad far enough for ceil_mode. False if unsupported.
bool readWindow(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> kernel,
                ArrayRef<int64_t> out, Window &w) {
  size_t n = in.size();
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = intsOr(op, "strides", n, 1);
  w.dilations = intsOr(op, "dilations", n, 1);
  SmallVector<int64_t> pads = intsOr(op, "pads", 2 * n, 0);
  if (w.strides.size() != n || w.dilations.size() != n || pads.size() != 2 * n)
    return false;
  StringRef autoPad = "NOTSET";
  if (auto a = op->getAttrOfType<StringAttr>("auto_pad"))
    autoPad = a.getValue();
  w.padLow.assign(n, 0);
  w.padHigh.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t outSize = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (outSize - 1) * w.strides[i] + extent - in[i]);
      w.padLow[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[i] = total - w.padLow[i];
    } else if (autoPad == "VALID") {
      // no padding
    } else if (autoPad == "NOTSET") {
      w.padLow[i] = pads[i];
      w.padHigh[i] = pads[i + n];
    } else {
      return false;
    }
    if (w.padLow[i] < 0 || w.padHigh[i] < 0)
      return false;
    // ceil_mode (or any inferred size) may need windows past the end: pad to fit.
    int64_t needed = (out[i] - 1) * w.strides[i] + extent;
    int64_t have = in[i] + w.padLow[i] + w.padHigh[i];
    if (needed > have)
      w.padHigh[i] += needed - have;
  }
  return true;
}

/// Pads the spatial dims (from dim 2) of `x` with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, double value) {
  SmallVector<int64_t> lo{0, 0}, hi{0, 0};
  lo.append(low.begin(), low.end());
  hi.append(high.begin(), high.end());
  return padTensor(b, loc, x, lo, hi, value);
}

/// y + bias per output channel (bias may be `none`): the convolutions' epilogue.
Value addChannelBias(OpBuilder &b, Location loc, Value y, Value bias) {
  if (isa<NoneType>(bias.getType()))
    return y;
  auto type = cast<RankedTensorType>(y.getType());
  return buildElementwise(b, loc, type, ValueRange{y, perChannel(b, loc, bias, type.getRank())},
                          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return nb.create<arith::AddFOp>(l, a[0], a[1]);
                          });
}

struct ConvLowering : OpConversionPattern<onnx::ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    auto wType = cast<RankedTensorType>(adaptor.getW().getType());
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getY().getType()));
    if (!xType.hasStaticShape() || !wType.hasStaticShape() || !type.hasStaticShape())
      return failure();
    int64_t spatial = xType.getRank() - 2;
    int64_t group = static_cast<int64_t>(op.getGroup());
    int64_t outChannels = wType.getDimSize(0), groupChannels = wType.getDimSize(1);
    if (group < 1 || outChannels % group != 0)
      return failure();
    Window w;
    if (!readWindow(op, xType.getShape().drop_front(2), wType.getShape().drop_front(2),
                    type.getShape().drop_front(2), w))
      return failure();
    Location loc = op.getLoc();
    Value x = padSpatial(rewriter, loc, adaptor.getX(), w.padLow, w.padHigh, 0);

    // Iteration space: n, f, c, k_0..k_{S-1}, o_0..o_{S-1}. The output's spatial
    // dims are innermost so that the emitted loops stream along rows of the
    // input and the output (unit stride when the stride is 1).
    MLIRContext *ctx = rewriter.getContext();
    int64_t numDims = 2 + spatial + 1 + spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr n = d(0), f = d(1), c = d(2);
    int64_t perGroup = outChannels / group;
    // Ungrouped: the input channel does not depend on f (which keeps the
    // iteration space a plain contraction the cuda target tiles as a GEMM).
    SmallVector<AffineExpr> xExprs{
        n, group == 1 ? c : f.floorDiv(perGroup) * groupChannels + c};
    SmallVector<AffineExpr> wExprs{f, c};
    SmallVector<AffineExpr> yExprs{n, f};
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr k = d(3 + i), o = d(3 + spatial + i);
      xExprs.push_back(o * w.strides[i] + k * w.dilations[i]);
      wExprs.push_back(k);
      yExprs.push_back(o);
    }
    SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    iterators.append(spatial, utils::IteratorType::parallel);
    RankedTensorType accType = accumulatorTensorType(type);
    Type acc = accType.getElementType();
    Value init = filledTensor(rewriter, loc, accType, 0);
    auto conv = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{accType}, ValueRange{x, adaptor.getW()}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(numDims, 0, xExprs, ctx),
                            AffineMap::get(numDims, 0, wExprs, ctx),
                            AffineMap::get(numDims, 0, yExprs, ctx)},
        iterators, [acc](OpBuilder &b, Location l, ValueRange a) {
          Value p = b.create<arith::MulFOp>(l, castFloat(b, l, a[0], acc),
                                            castFloat(b, l, a[1], acc));
          b.create<linalg::YieldOp>(l, b.create<arith::AddFOp>(l, a[2], p).getResult());
        });
    Value y = fromAccumulator(rewriter, loc, conv.getResult(0), type);
    rewriter.replaceOp(op, addChannelBias(rewriter, loc, y, adaptor.getB()));
    return success();
  }
};

/// ConvTranspose as a gather: out[n, f, o] sums x[n, c', i] * w[c', f mod M/g, k]
/// over the group's channels c' and the kernel positions k for which
/// o = i * stride - pad + k * dilation has an integer solution i inside the input.
struct ConvTransposeLowering : OpConversionPattern<onnx::ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(adaptor.getW().getType());
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getY().getType()));
    if (!xType.hasStaticShape() || !wType.hasStaticShape() || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    int64_t spatial = xType.getRank() - 2;
    int64_t group = static_cast<int64_t>(op.getGroup());
    int64_t inChannels = xType.getDimSize(1), perGroupOut = wType.getDimSize(1);
    if (group < 1 || inChannels % group != 0)
      return failure();
    int64_t perGroupIn = inChannels / group;
    SmallVector<int64_t> strides = intsOr(op, "strides", spatial, 1);
    SmallVector<int64_t> dilations = intsOr(op, "dilations", spatial, 1);
    SmallVector<int64_t> outPad = intsOr(op, "output_padding", spatial, 0);
    StringRef autoPad = op.getAutoPad();
    bool derivedPads = op->getAttr("output_shape") || autoPad == "SAME_UPPER" ||
                       autoPad == "SAME_LOWER";
    SmallVector<int64_t> pads = intsOr(op, "pads", 2 * spatial, 0);
    SmallVector<int64_t> begin(spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      if (derivedPads) {
        int64_t k = wType.getDimSize(2 + i);
        int64_t total = strides[i] * (xType.getDimSize(2 + i) - 1) + outPad[i] +
                        ((k - 1) * dilations[i] + 1) - type.getDimSize(2 + i);
        // The spec's total_padding/2 is Python's floor division (the reference
        // implementation's): a negative total (an output_shape past the natural
        // size) leaves the extra rows at the end.
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        begin[i] = autoPad == "SAME_UPPER" ? half : total - half;
      } else {
        begin[i] = pads[i];
      }
    }
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    // Iteration space: n, f, c, k..., o... (output columns innermost).
    int64_t numDims = 3 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr f = d(1), c = d(2);
    SmallVector<AffineExpr> wExprs{
        group == 1 ? c : f.floorDiv(perGroupOut) * perGroupIn + c,
        group == 1 ? f : f % perGroupOut};
    SmallVector<AffineExpr> yExprs{d(0), f};
    for (int64_t i = 0; i < spatial; ++i) {
      wExprs.push_back(d(3 + i));
      yExprs.push_back(d(3 + spatial + i));
    }
    SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    iterators.append(spatial, utils::IteratorType::parallel);
    Type elem = type.getElementType();
    Value init = filledTensor(rewriter, loc, type, 0);
    // c appears in W's map only inside an expression: an (unused) operand of the
    // group's channel count gives its loop a range.
    Value channelExtent =
        emptyTensor(rewriter, loc, RankedTensorType::get({perGroupIn}, elem));
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getW(), channelExtent}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(numDims, 0, wExprs, ctx),
                            AffineMap::get(numDims, 0, {c}, ctx),
                            AffineMap::get(numDims, 0, yExprs, ctx)},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          using P = arith::CmpIPredicate;
          auto cst = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(l, v).getResult(); };
          Value fIdx = b.create<linalg::IndexOp>(l, 1);
          Value cIdx = b.create<linalg::IndexOp>(l, 2);
          Value channel = b.create<arith::AddIOp>(
              l, b.create<arith::MulIOp>(l, b.create<arith::DivUIOp>(l, fIdx, cst(perGroupOut)),
                                         cst(perGroupIn)),
              cIdx);
          SmallVector<Value> coords{b.create<linalg::IndexOp>(l, 0), channel};
          Value valid = b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
          for (int64_t i = 0; i < spatial; ++i) {
            Value k = b.create<linalg::IndexOp>(l, 3 + i);
            Value o = b.create<linalg::IndexOp>(l, 3 + spatial + i);
            // num = o + pad - k * dilation, in signed index arithmetic.
            Value num = b.create<arith::SubIOp>(
                l, b.create<arith::AddIOp>(l, o, cst(begin[i])),
                b.create<arith::MulIOp>(l, k, cst(dilations[i])));
            Value in = b.create<arith::DivSIOp>(l, num, cst(strides[i]));
            Value exact = b.create<arith::CmpIOp>(
                l, P::eq, b.create<arith::RemSIOp>(l, num, cst(strides[i])), cst(0));
            Value inRange = b.create<arith::AndIOp>(
                l, b.create<arith::CmpIOp>(l, P::sge, num, cst(0)),
                b.create<arith::CmpIOp>(l, P::slt, in, cst(xType.getDimSize(2 + i))));
            valid = b.create<arith::AndIOp>(l, valid, b.create<arith::AndIOp>(l, exact, inRange));
            // Clamp so that the read stays inside even where it is not used.
            Value safe = b.create<arith::MaxSIOp>(
                l, b.create<arith::MinSIOp>(l, in, cst(xType.getDimSize(2 + i) - 1)), cst(0));
            coords.push_back(safe);
          }
          Value xv = b.create<tensor::ExtractOp>(l, x, coords);
          Value p = b.create<arith::MulFOp>(l, xv, a[0]);
          Value sum = b.create<arith::AddFOp>(l, a[2], p);
          b.create<linalg::YieldOp>(l, b.create<arith::SelectOp>(l, valid, sum, a[2]).getResult());
        });
    Value y = generic.getResult(0);
    rewriter.replaceOp(op, addChannelBias(rewriter, loc, y, adaptor.getB()));
    return success();
  }
};

/// The iteration space of a windowed reduction over (N, C, out..., window...):
/// the maps of the padded input, of a window-shaped operand and of the output,
/// and the iterator types.
struct WindowSpace {
  AffineMap input, window, output;
  SmallVector<utils::IteratorType> iterators;
};

WindowSpace windowSpace(MLIRContext *ctx, int64_t spatial, const Window &w) {
  int64_t numDims = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs{d(0), d(1)}, yExprs{d(0), d(1)}, kExprs;
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = d(2 + i), k = d(2 + spatial + i);
    xExprs.push_back(o * w.strides[i] + k * w.dilations[i]);
    yExprs.push_back(o);
    kExprs.push_back(k);
  }
  WindowSpace space{AffineMap::get(numDims, 0, xExprs, ctx),
                    AffineMap::get(numDims, 0, kExprs, ctx),
                    AffineMap::get(numDims, 0, yExprs, ctx),
                    SmallVector<utils::IteratorType>(2 + spatial, utils::IteratorType::parallel)};
  space.iterators.append(spatial, utils::IteratorType::reduction);
  return space;
}

/// Sums (or maxes) windows of a padded (N, C, spatial...) tensor into `type`'s
/// shape: a max in `type`, a sum in its accumulator type.
Value poolWindows(OpBuilder &b, Location loc, Value x, RankedTensorType type,
                  const Window &w, bool isMax, bool isUnsigned = false) {
  int64_t spatial = type.getRank() - 2;
  WindowSpace space = windowSpace(b.getContext(), spatial, w);
  Type elem = type.getElementType();
  // The window's shape enters through an (unused) kernel-shaped operand so that
  // the iteration space of the k dims is defined.
  auto kernelType = RankedTensorType::get(w.kernel, elem);
  Value kernel = emptyTensor(b, loc, kernelType);
  double initValue = 0.0;
  if (isMax && isa<FloatType>(elem))
    initValue = -std::numeric_limits<double>::infinity();
  else if (isMax && !isUnsigned)
    initValue = -std::ldexp(1.0, elem.getIntOrFloatBitWidth() - 1);
  // Sums accumulate in the accumulator type; a max is exact in its own.
  RankedTensorType accType = isMax ? type : accumulatorTensorType(type);
  Type acc = accType.getElementType();
  Value init = filledTensor(b, loc, accType, initValue);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{accType}, ValueRange{x, kernel}, ValueRange{init},
      ArrayRef<AffineMap>{space.input, space.window, space.output}, space.iterators,
      [isMax, isUnsigned, acc](OpBuilder &nb, Location l, ValueRange a) {
        Value r;
        if (isa<FloatType>(a[0].getType()))
          r = isMax ? nb.create<arith::MaximumFOp>(l, a[2], a[0]).getResult()
                    : nb.create<arith::AddFOp>(l, a[2], castFloat(nb, l, a[0], acc))
                          .getResult();
        else if (isUnsigned)
          r = nb.create<arith::MaxUIOp>(l, a[2], a[0]);
        else
          r = nb.create<arith::MaxSIOp>(l, a[2], a[0]);
        nb.create<linalg::YieldOp>(l, r);
      });
  return generic.getResult(0);
}

/// MaxPool's Indices: per output, the flat index into the (unpadded) input of the
/// first window element equal to the max (smallest row-major index), then laid
/// out column-major over the spatial dims when storage_order is 1.
Value poolArgmax(OpBuilder &b, Location loc, Value padded, Value pooled,
                 RankedTensorType indexType, const Window &w, ArrayRef<int64_t> in,
                 bool columnMajor) {
  int64_t spatial = indexType.getRank() - 2;
  WindowSpace space = windowSpace(b.getContext(), spatial, w);
  Type i64 = b.getI64Type();
  Value kernel = emptyTensor(b, loc, RankedTensorType::get(w.kernel, i64));
  Value none = b.create<arith::ConstantIntOp>(loc, std::numeric_limits<int64_t>::max(), 64);
  Value init = b.create<linalg::FillOp>(loc, none, emptyTensor(b, loc, indexType)).getResult(0);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{indexType}, ValueRange{padded, kernel, pooled}, ValueRange{init},
      ArrayRef<AffineMap>{space.input, space.window, space.output, space.output},
      space.iterators, [&](OpBuilder &nb, Location l, ValueRange a) {
        auto index = [&](int64_t dim) {
          return nb.create<arith::IndexCastOp>(l, i64, nb.create<linalg::IndexOp>(l, dim))
              .getResult();
        };
        auto c = [&](int64_t v) { return nb.create<arith::ConstantIntOp>(l, v, 64).getResult(); };
        // Row-major flat index of the element in the unpadded input; in bounds?
        Value flat = nb.create<arith::AddIOp>(
            l, nb.create<arith::MulIOp>(l, index(0), c(indexType.getDimSize(1))), index(1));
        Value inside = nb.create<arith::ConstantIntOp>(l, 1, 1);
        for (int64_t i = 0; i < spatial; ++i) {
          Value pos = nb.create<arith::SubIOp>(
              l,
              nb.create<arith::AddIOp>(
                  l, nb.create<arith::MulIOp>(l, index(2 + i), c(w.strides[i])),
                  nb.create<arith::MulIOp>(l, index(2 + spatial + i), c(w.dilations[i]))),
              c(w.padLow[i]));
          Value ge = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, pos, c(0));
          Value lt = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, pos, c(in[i]));
          inside = nb.create<arith::AndIOp>(l, inside, nb.create<arith::AndIOp>(l, ge, lt));
          flat = nb.create<arith::AddIOp>(l, nb.create<arith::MulIOp>(l, flat, c(in[i])), pos);
        }
        Value isMax = isa<FloatType>(a[0].getType())
                          ? nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[0], a[2])
                                .getResult()
                          : nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[0], a[2])
                                .getResult();
        Value take = nb.create<arith::AndIOp>(l, inside, isMax);
        Value best = nb.create<arith::MinSIOp>(l, a[3], flat);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(l, take, best, a[3])});
      });
  Value rowMajor = generic.getResult(0);
  if (!columnMajor || spatial < 2)
    return rowMajor;
  // (n, c, h, w, ...) row-major -> the spatial part reversed in significance.
  return buildElementwise(
      b, loc, indexType, ValueRange{rowMajor}, [&](OpBuilder &nb, Location l, ValueRange a) {
        auto c = [&](int64_t v) { return nb.create<arith::ConstantIntOp>(l, v, 64).getResult(); };
        int64_t plane = 1;
        for (int64_t extent : in)
          plane *= extent;
        Value base = nb.create<arith::MulIOp>(l, nb.create<arith::DivSIOp>(l, a[0], c(plane)),
                                              c(plane));
        Value rest = nb.create<arith::RemSIOp>(l, a[0], c(plane));
        SmallVector<Value> coords(spatial);
        for (int64_t i = spatial - 1; i >= 0; --i) {
          coords[i] = nb.create<arith::RemSIOp>(l, rest, c(in[i]));
          rest = nb.create<arith::DivSIOp>(l, rest, c(in[i]));
        }
        Value col = c(0);
        for (int64_t i = spatial - 1; i >= 0; --i)
          col = nb.create<arith::AddIOp>(l, nb.create<arith::MulIOp>(l, col, c(in[i])), coords[i]);
        return nb.create<arith::AddIOp>(l, base, col).getResult();
      });
}

struct PoolLowering : ConversionPattern {
  PoolLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool isMax = name == "onnx.MaxPool";
    if (!isMax && name != "onnx.AveragePool")
      return failure();
    bool withIndices = isMax && op->getNumResults() > 1 &&
                       !isa<NoneType>(op->getResult(1).getType());
    auto xType = cast<RankedTensorType>(operands[0].getType());
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    bool isFloatPool = isa<FloatType>(xType.getElementType());
    if ((!isFloatPool && !isMax) || xType.getRank() < 3)
      return failure();
    auto kernelAttr = op->getAttrOfType<ArrayAttr>("kernel_shape");
    if (!kernelAttr)
      return failure();
    SmallVector<int64_t> kernel;
    for (Attribute a : kernelAttr)
      kernel.push_back(cast<IntegerAttr>(a).getInt());
    Window w;
    if (!readWindow(op, xType.getShape().drop_front(2), kernel,
                    type.getShape().drop_front(2), w))
      return failure();
    Location loc = op->getLoc();
    bool isUnsigned = elemKind(op->getOperand(0).getType()) == ElemKind::Unsigned;
    double padValue = 0.0;
    if (isMax && isFloatPool)
      padValue = -std::numeric_limits<double>::infinity();
    else if (isMax && !isUnsigned)
      padValue = -std::ldexp(1.0, xType.getElementType().getIntOrFloatBitWidth() - 1);
    Value x = padSpatial(rewriter, loc, operands[0], w.padLow, w.padHigh, padValue);
    Value pooled = poolWindows(rewriter, loc, x, type, w, isMax, isUnsigned);
    if (isMax) {
      SmallVector<Value> results{pooled};
      for (unsigned i = 1; i < op->getNumResults(); ++i)
        results.push_back(rewriter.create<onnx::NoValueOp>(loc, rewriter.getNoneType()));
      if (withIndices) {
        auto indexType = cast<RankedTensorType>(
            getTypeConverter()->convertType(op->getResult(1).getType()));
        auto order = op->getAttrOfType<IntegerAttr>("storage_order");
        results[1] = poolArgmax(rewriter, loc, x, pooled, indexType, w,
                                xType.getShape().drop_front(2), order && order.getInt() != 0);
      }
      rewriter.replaceOp(op, results);
      return success();
    }
    // Count what each window averages over: real elements, plus the explicit pads
    // when count_include_pad (never the extra room ceil_mode adds). Per spatial
    // dim the taps t in [0, k) with lo <= o * stride - padLow + t * dilation < hi
    // are counted in closed form from the output index (no tensor of counts):
    // lo, hi bound the real input, widened by the explicit pads when included.
    bool includePad = false;
    if (auto a = op->getAttrOfType<IntegerAttr>("count_include_pad"))
      includePad = a.getInt() != 0;
    SmallVector<int64_t> lo, hi;
    ArrayRef<int64_t> inSpatial = xType.getShape().drop_front(2);
    SmallVector<int64_t> explicitHigh = intsOr(op, "pads", 2 * kernel.size(), 0);
    StringRef autoPad = "NOTSET";
    if (auto a = op->getAttrOfType<StringAttr>("auto_pad"))
      autoPad = a.getValue();
    for (size_t i = 0; i < kernel.size(); ++i) {
      int64_t high = autoPad == "NOTSET" ? explicitHigh[kernel.size() + i] : w.padHigh[i];
      lo.push_back(includePad ? -w.padLow[i] : 0);
      hi.push_back(inSpatial[i] + (includePad ? std::min(high, w.padHigh[i]) : 0));
    }
    int64_t rank = type.getRank();
    auto identity = rewriter.getMultiDimIdentityMap(rank);
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    Value avg =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{type}, ValueRange{pooled}, ValueRange{init},
                ArrayRef<AffineMap>{identity, identity},
                SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  auto c = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); };
                  Value count = c(1);
                  for (size_t i = 0; i < kernel.size(); ++i) {
                    Value o = b.create<linalg::IndexOp>(l, 2 + i);
                    Value start = b.create<arith::SubIOp>(
                        l, b.create<arith::MulIOp>(l, o, c(w.strides[i])), c(w.padLow[i]));
                    Value dil = c(w.dilations[i]);
                    // first tap >= lo, last tap < hi, both within the window
                    Value first = b.create<arith::MaxSIOp>(
                        l, c(0),
                        b.create<arith::CeilDivSIOp>(l, b.create<arith::SubIOp>(l, c(lo[i]), start),
                                                     dil));
                    Value last = b.create<arith::MinSIOp>(
                        l, c(kernel[i] - 1),
                        b.create<arith::FloorDivSIOp>(
                            l, b.create<arith::SubIOp>(l, c(hi[i] - 1), start), dil));
                    Value taps = b.create<arith::MaxSIOp>(
                        l, c(0),
                        b.create<arith::AddIOp>(l, b.create<arith::SubIOp>(l, last, first), c(1)));
                    count = b.create<arith::MulIOp>(l, count, taps);
                  }
                  Value n = b.create<arith::IndexCastOp>(l, b.getI64Type(), count);
                  // The window sum is in the accumulator type: divide there.
                  Value f = b.create<arith::SIToFPOp>(l, args[0].getType(), n);
                  b.create<linalg::YieldOp>(
                      l, castFloat(b, l, b.create<arith::DivFOp>(l, args[0], f),
                                   type.getElementType()));
                })
            .getResult(0);
    rewriter.replaceOp(op, avg);
    return success();
  }
};

} // namespace

void populateConvPoolLoweringPatterns(RewritePatternSet &patterns,
                                      TypeConverter &converter) {
  patterns.add<ConvLowering, ConvTransposeLowering, PoolLowering>(converter,
                                                                 patterns.getContext());
}

} // namespace kiln
