//===- Reduction.cpp - Lower reductions and softmax to linalg -------------===//
//
// This file implements the reduction family: every Reduce* op in every version
// (axes as attribute before opset 13/18, as input after), Softmax and LogSoftmax
// (one axis from opset 13, "coerced to 2-D" before), the global pools, ArgMax/ArgMin,
// Hardmax, CumSum and TopK (a rank per element, then a selection by rank). A
// reduction is a linalg.generic over the input with the reduced dimensions as
// reduction iterators into a filled accumulator, reshaped for keepdims.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Reduction.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {

Value reduceDims(OpBuilder &b, Location loc, Value input, ArrayRef<bool> reduced,
                 double init, ReduceCombiner combine, ScalarMap pre) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    shape.push_back(type.getDimSize(d));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  auto outType = RankedTensorType::get(shape, type.getElementType());
  // The accumulator policy: `pre` and `combine` see accumulator-typed values.
  RankedTensorType accType = accumulatorTensorType(outType);
  Type accElem = accType.getElementType();
  Value acc = filledTensor(b, loc, accType, init);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{accType}, ValueRange{input}, ValueRange{acc},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                          AffineMap::get(rank, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = castFloat(nb, nl, args[0], accElem);
        if (pre)
          x = pre(nb, nl, x);
        nb.create<linalg::YieldOp>(nl, combine(nb, nl, args[1], x));
      });
  return fromAccumulator(b, loc, generic.getResult(0), outType);
}

Value reduceKeepDims(OpBuilder &b, Location loc, Value input, ArrayRef<bool> reduced,
                     double init, ReduceCombiner combine, ScalarMap pre) {
  auto type = cast<RankedTensorType>(input.getType());
  Value r = reduceDims(b, loc, input, reduced, init, combine, pre);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < type.getRank(); ++d)
    kept.push_back(reduced[d] ? 1 : type.getDimSize(d));
  return reshapeTo(b, loc, r, RankedTensorType::get(kept, type.getElementType()));
}

namespace {

bool isFloat(Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); }

Value add(OpBuilder &b, Location l, Value x, Value y) {
  return isFloat(x.getType()) ? b.create<arith::AddFOp>(l, x, y).getResult()
                              : b.create<arith::AddIOp>(l, x, y).getResult();
}
Value mul(OpBuilder &b, Location l, Value x, Value y) {
  return isFloat(x.getType()) ? b.create<arith::MulFOp>(l, x, y).getResult()
                              : b.create<arith::MulIOp>(l, x, y).getResult();
}

double lowest(Type t, bool isUnsigned) {
  if (isa<FloatType>(t))
    return -std::numeric_limits<double>::infinity();
  if (isUnsigned)
    return 0;
  return -std::ldexp(1.0, t.getIntOrFloatBitWidth() - 1);
}
double highest(Type t, bool isUnsigned) {
  if (isa<FloatType>(t))
    return std::numeric_limits<double>::infinity();
  unsigned w = t.getIntOrFloatBitWidth();
  // Within double precision for the widths that matter (<= 32 bits); 64-bit
  // integers clamp to the largest exactly representable value.
  return std::ldexp(1.0, isUnsigned ? std::min(w, 53u) : std::min(w - 1, 53u)) - 1;
}

/// Which dimensions a reduction with run-time axes reduces, read off the static
/// shapes. With keepdims, a dimension is reduced when the result has 1 where the
/// input does not (reducing a size-1 dimension changes nothing, so it may be
/// treated either way). Without keepdims the result's dimensions must match the
/// input's kept ones in order, and the match must be unique. False when the
/// shapes do not decide it.
bool reducedFromShapes(Operation *op, RankedTensorType src, RankedTensorType result,
                       SmallVectorImpl<bool> &reduced) {
  int64_t rank = src.getRank();
  bool keepDims = true;
  if (auto a = op->getAttrOfType<IntegerAttr>("keepdims"))
    keepDims = a.getInt() != 0;
  reduced.assign(rank, false);
  if (keepDims) {
    if (result.getRank() != rank)
      return false;
    for (int64_t d = 0; d < rank; ++d)
      reduced[d] = result.getDimSize(d) == 1 && src.getDimSize(d) != 1;
    return true;
  }
  // Enumerate subsets of kept dims matching the result; require exactly one.
  int64_t matches = 0;
  SmallVector<bool> found;
  for (int64_t mask = 0; mask < (int64_t(1) << rank) && rank <= 16; ++mask) {
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d)
      if (!(mask & (int64_t(1) << d)))
        kept.push_back(src.getDimSize(d));
    if (ArrayRef<int64_t>(kept) != result.getShape())
      continue;
    if (++matches > 1)
      return false;
    found.assign(rank, false);
    for (int64_t d = 0; d < rank; ++d)
      found[d] = (mask & (int64_t(1) << d)) != 0;
  }
  if (matches != 1)
    return false;
  reduced.assign(found.begin(), found.end());
  return true;
}

/// Reduce* of every version.
struct ReduceLowering : ConversionPattern {
  ReduceLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef full = op->getName().getStringRef();
    if (!full.starts_with("onnx.Reduce"))
      return failure();
    StringRef kind = full.drop_front(strlen("onnx.Reduce"));
    kind = kind.take_until([](char c) { return c == 'V'; });
    auto resultType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    auto src = dyn_cast<RankedTensorType>(operands[0].getType());
    if (!resultType || !src)
      return failure();
    int64_t rank = src.getRank();
    SmallVector<int64_t> axes;
    if (auto attr = op->getAttrOfType<ArrayAttr>("axes")) {
      for (Attribute a : attr)
        axes.push_back(cast<IntegerAttr>(a).getInt());
    } else if (operands.size() > 1 && isa<RankedTensorType>(operands[1].getType())) {
      if (!getConstantInts(op->getOperand(1), axes)) {
        // Axes known only at run time: the static result shape still says which
        // dimensions are reduced (see reducedFromShapes).
        SmallVector<bool> fromShapes;
        if (!reducedFromShapes(op, src, resultType, fromShapes))
          return failure();
        for (int64_t d = 0; d < rank; ++d)
          if (fromShapes[d])
            axes.push_back(d);
        if (axes.empty()) {
          rewriter.replaceOp(op, reshapeTo(rewriter, op->getLoc(), operands[0], resultType));
          return success();
        }
      }
    }
    bool noop = false;
    if (auto a = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes"))
      noop = a.getInt() != 0;
    Location loc = op->getLoc();
    if (axes.empty() && noop) {
      rewriter.replaceOp(op, reshapeTo(rewriter, loc, operands[0], resultType));
      return success();
    }
    SmallVector<bool> reduced(rank, axes.empty());
    for (int64_t axis : axes) {
      if (!normalizeAxis(axis, rank))
        return failure();
      reduced[axis] = true;
    }
    Type elem = src.getElementType();
    bool isUnsigned = elemKind(op->getOperand(0).getType()) == ElemKind::Unsigned;
    bool fl = isa<FloatType>(elem);
    if (!fl && (kind == "L2" || kind == "LogSum" || kind == "LogSumExp"))
      return failure();
    ReduceCombiner sum = [](OpBuilder &b, Location l, Value acc, Value x) {
      return add(b, l, acc, x);
    };
    Value in = operands[0];
    Value r;
    if (kind == "Sum" || kind == "Mean") {
      r = reduceDims(rewriter, loc, in, reduced, 0, sum);
    } else if (kind == "SumSquare" || kind == "L2") {
      r = reduceDims(rewriter, loc, in, reduced, 0, sum,
                     [](OpBuilder &b, Location l, Value x) { return mul(b, l, x, x); });
    } else if (kind == "L1") {
      r = reduceDims(rewriter, loc, in, reduced, 0, sum,
                     [](OpBuilder &b, Location l, Value x) -> Value {
                       if (isFloat(x.getType()))
                         return b.create<math::AbsFOp>(l, x);
                       return b.create<math::AbsIOp>(l, x);
                     });
    } else if (kind == "Prod") {
      r = reduceDims(rewriter, loc, in, reduced, 1,
                     [](OpBuilder &b, Location l, Value acc, Value x) {
                       return mul(b, l, acc, x);
                     });
    } else if (kind == "Max" || kind == "Min") {
      bool isMax = kind == "Max";
      r = reduceDims(
          rewriter, loc, in, reduced,
          isMax ? lowest(elem, isUnsigned) : highest(elem, isUnsigned),
          [isMax, isUnsigned](OpBuilder &b, Location l, Value acc, Value x) -> Value {
            if (isFloat(x.getType()))
              return isMax ? b.create<arith::MaximumFOp>(l, acc, x).getResult()
                           : b.create<arith::MinimumFOp>(l, acc, x).getResult();
            if (isUnsigned)
              return isMax ? b.create<arith::MaxUIOp>(l, acc, x).getResult()
                           : b.create<arith::MinUIOp>(l, acc, x).getResult();
            return isMax ? b.create<arith::MaxSIOp>(l, acc, x).getResult()
                         : b.create<arith::MinSIOp>(l, acc, x).getResult();
          });
    } else if (kind == "LogSum") {
      r = reduceDims(rewriter, loc, in, reduced, 0, sum);
    } else if (kind == "LogSumExp") {
      // log(sum(exp(x - max))) + max, for range.
      Value m = reduceKeepDims(rewriter, loc, in, reduced, lowest(elem, false),
                               [](OpBuilder &b, Location l, Value acc, Value x) {
                                 return b.create<arith::MaximumFOp>(l, acc, x).getResult();
                               });
      Value shifted = buildElementwise(
          rewriter, loc, src, ValueRange{in, m},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
          });
      Value s = reduceKeepDims(rewriter, loc, shifted, reduced, 0, sum);
      Value lse = buildElementwise(
          rewriter, loc, cast<RankedTensorType>(m.getType()), ValueRange{s, m},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return b.create<arith::AddFOp>(l, b.create<math::LogOp>(l, a[0]), a[1]);
          });
      rewriter.replaceOp(op, reshapeTo(rewriter, loc, lse, resultType));
      return success();
    } else {
      return failure();
    }
    auto rType = cast<RankedTensorType>(r.getType());
    if (kind == "Mean" || kind == "L2" || kind == "LogSum") {
      int64_t count = 1;
      for (int64_t d = 0; d < rank; ++d)
        if (reduced[d])
          count *= src.getDimSize(d);
      r = buildElementwise(rewriter, loc, rType, ValueRange{r},
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             if (kind == "L2")
                               return b.create<math::SqrtOp>(l, a[0]);
                             if (kind == "LogSum")
                               return b.create<math::LogOp>(l, a[0]);
                             Value c = scalarConstant(b, l, elem, count);
                             if (fl)
                               return b.create<arith::DivFOp>(l, a[0], c);
                             if (isUnsigned)
                               return b.create<arith::DivUIOp>(l, a[0], c);
                             return b.create<arith::DivSIOp>(l, a[0], c);
                           });
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, r, resultType));
    return success();
  }
};

} // namespace

Value softmax(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced, bool logSoftmax) {
  auto type = cast<RankedTensorType>(x.getType());
  Value m = reduceKeepDims(b, loc, x, reduced, -std::numeric_limits<double>::infinity(),
                           [](OpBuilder &nb, Location l, Value acc, Value v) {
                             return nb.create<arith::MaximumFOp>(l, acc, v).getResult();
                           });
  Value e = buildElementwise(b, loc, type, ValueRange{x, m},
                             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                               return nb.create<math::ExpOp>(
                                   l, nb.create<arith::SubFOp>(l, a[0], a[1]));
                             });
  Value s = reduceKeepDims(b, loc, e, reduced, 0,
                           [](OpBuilder &nb, Location l, Value acc, Value v) {
                             return nb.create<arith::AddFOp>(l, acc, v).getResult();
                           });
  if (logSoftmax)
    return buildElementwise(b, loc, type, ValueRange{x, m, s},
                            [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                              Value shifted = nb.create<arith::SubFOp>(l, a[0], a[1]);
                              return nb.create<arith::SubFOp>(
                                  l, shifted, nb.create<math::LogOp>(l, a[2]));
                            });
  return buildElementwise(b, loc, type, ValueRange{e, s},
                          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return nb.create<arith::DivFOp>(l, a[0], a[1]);
                          });
}

namespace {

/// Softmax / LogSoftmax: exp(x - max) / sum, over one axis (opset >= 13) or over
/// every axis from `axis` on (earlier opsets).
struct SoftmaxLowering : ConversionPattern {
  SoftmaxLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool isLog = name == "onnx.LogSoftmax";
    if (name != "onnx.Softmax" && !isLog)
      return failure();
    auto type = cast<RankedTensorType>(operands[0].getType());
    if (!isa<FloatType>(type.getElementType()))
      return failure();
    int64_t rank = type.getRank();
    int64_t opset = 13;
    if (auto m = op->getParentOfType<ModuleOp>())
      if (auto a = m->getAttrOfType<IntegerAttr>("onnx.opset"))
        opset = a.getInt();
    int64_t axis = opset >= 13 ? -1 : 1;
    if (auto a = op->getAttrOfType<IntegerAttr>("axis"))
      axis = a.getInt();
    if (!normalizeAxis(axis, rank))
      return failure();
    SmallVector<bool> reduced(rank, false);
    for (int64_t d = axis; d < rank; ++d)
      reduced[d] = opset >= 13 ? d == axis : true;
    rewriter.replaceOp(op, softmax(rewriter, op->getLoc(), operands[0], reduced, isLog));
    return success();
  }
};

/// GlobalAveragePool / GlobalMaxPool: reduce every spatial dimension, keepdims.
struct GlobalPoolLowering : ConversionPattern {
  GlobalPoolLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool isMax = name == "onnx.GlobalMaxPool";
    if (name != "onnx.GlobalAveragePool" && !isMax)
      return failure();
    auto type = cast<RankedTensorType>(operands[0].getType());
    int64_t rank = type.getRank();
    SmallVector<bool> reduced(rank, true);
    reduced[0] = reduced[1] = false;
    Location loc = op->getLoc();
    Value r;
    if (isMax) {
      r = reduceKeepDims(rewriter, loc, operands[0], reduced,
                         -std::numeric_limits<double>::infinity(),
                         [](OpBuilder &b, Location l, Value acc, Value v) {
                           return b.create<arith::MaximumFOp>(l, acc, v).getResult();
                         });
    } else {
      int64_t count = 1;
      for (int64_t d = 2; d < rank; ++d)
        count *= type.getDimSize(d);
      Value s = reduceKeepDims(rewriter, loc, operands[0], reduced, 0,
                               [](OpBuilder &b, Location l, Value acc, Value v) {
                                 return b.create<arith::AddFOp>(l, acc, v).getResult();
                               });
      r = buildElementwise(rewriter, loc, cast<RankedTensorType>(s.getType()), ValueRange{s},
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return b.create<arith::DivFOp>(
                                 l, a[0], scalarConstant(b, l, type.getElementType(), count));
                           });
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// The index (i64) of the maximum (or minimum) along `axis`, the axis dropped:
/// one generic carrying (best value, its index). Ties go to the first index
/// (or the last with `selectLast`); the first element always wins the start, so
/// an all-NaN axis gives 0.
Value argExtreme(OpBuilder &rewriter, Location loc, Value input, int64_t axis,
                 bool isMax, bool selectLast, ElemKind kind) {
  auto src = cast<RankedTensorType>(input.getType());
  int64_t rank = src.getRank();
  Type elem = src.getElementType();
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    shape.push_back(src.getDimSize(d));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  auto valueType = RankedTensorType::get(shape, elem);
  auto indexType = RankedTensorType::get(shape, rewriter.getI64Type());
  bool isUnsigned = kind == ElemKind::Unsigned || kind == ElemKind::Bool;
  double init = isMax ? lowest(elem, isUnsigned) : highest(elem, isUnsigned);
  Value valueInit = filledTensor(rewriter, loc, valueType, init);
  Value indexInit = filledTensor(rewriter, loc, indexType, 0);
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  bool last = selectLast;
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{valueType, indexType}, ValueRange{input},
      ValueRange{valueInit, indexInit},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx), outMap, outMap},
      iterators, [&](OpBuilder &b, Location l, ValueRange a) {
        Value x = a[0], best = a[1], bestIndex = a[2];
        Value index = b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                   b.create<linalg::IndexOp>(l, axis));
        Value better;
        if (kind == ElemKind::Float) {
          auto pred = isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                            : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
          better = b.create<arith::CmpFOp>(l, pred, x, best);
        } else {
          using I = arith::CmpIPredicate;
          I pred = isMax ? (last ? (isUnsigned ? I::uge : I::sge) : (isUnsigned ? I::ugt : I::sgt))
                         : (last ? (isUnsigned ? I::ule : I::sle) : (isUnsigned ? I::ult : I::slt));
          better = b.create<arith::CmpIOp>(l, pred, x, best);
        }
        Value first = b.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::eq, index,
            b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)));
        better = b.create<arith::OrIOp>(l, better, first);
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::SelectOp>(l, better, x, best),
                          b.create<arith::SelectOp>(l, better, index, bestIndex)});
      });
  return generic.getResult(1);
}

/// ArgMax / ArgMin: one generic carrying (best value, its index) along the axis.
struct ArgLowering : ConversionPattern {
  ArgLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool isMax = name == "onnx.ArgMax";
    if (!isMax && name != "onnx.ArgMin")
      return failure();
    auto src = cast<RankedTensorType>(operands[0].getType());
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    int64_t rank = src.getRank();
    int64_t axis = 0;
    if (auto a = op->getAttrOfType<IntegerAttr>("axis"))
      axis = a.getInt();
    if (!normalizeAxis(axis, rank) || src.getDimSize(axis) == 0)
      return failure();
    bool last = false;
    if (auto a = op->getAttrOfType<IntegerAttr>("select_last_index"))
      last = a.getInt() != 0;
    Location loc = op->getLoc();
    Value index = argExtreme(rewriter, loc, operands[0], axis, isMax, last,
                             elemKind(op->getOperand(0).getType()));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, index, resultType));
    return success();
  }
};

/// Hardmax (opset 13+, one axis): 1 at the first maximum along the axis, else 0.
struct HardmaxLowering : OpConversionPattern<onnx::HardmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::HardmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t opset = 13;
    if (auto m = op->getParentOfType<ModuleOp>())
      if (auto a = m->getAttrOfType<IntegerAttr>("onnx.opset"))
        opset = a.getInt();
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = type.getRank();
    int64_t axis = op.getAxis() ? static_cast<int64_t>(*op.getAxis()) : -1;
    if (opset < 13 || !normalizeAxis(axis, rank) || !isa<FloatType>(type.getElementType()))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type elem = type.getElementType();
    Value index = argExtreme(rewriter, loc, adaptor.getInput(), axis, /*isMax=*/true,
                             /*selectLast=*/false, ElemKind::Float);
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        outExprs.push_back(getAffineDimExpr(d, ctx));
    auto onehot = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{index},
        ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, outExprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value position = b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                        b.create<linalg::IndexOp>(l, axis));
          Value here = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, position, a[0]);
          b.create<linalg::YieldOp>(
              l, b.create<arith::SelectOp>(l, here, scalarConstant(b, l, elem, 1),
                                           scalarConstant(b, l, elem, 0)).getResult());
        });
    rewriter.replaceOp(op, onehot.getResult(0));
    return success();
  }
};

/// CumSum along a constant axis: out[i] = sum of x[k] for k <= i (< i when
/// exclusive; >= / > when reverse).
struct CumSumLowering : OpConversionPattern<onnx::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    SmallVector<int64_t> axisValue;
    if (!getConstantInts(op.getAxis(), axisValue))
      return lowerRuntimeAxis(op, adaptor, rewriter);
    if (axisValue.size() != 1)
      return failure();
    int64_t rank = type.getRank(), axis = axisValue[0];
    if (!normalizeAxis(axis, rank))
      return failure();
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    MLIRContext *ctx = rewriter.getContext();
    Location loc = op.getLoc();
    // Dims: the output's, then k (the summed position along the axis).
    SmallVector<AffineExpr> inExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Type elem = type.getElementType();
    bool fl = isa<FloatType>(elem);
    Value init = filledTensor(rewriter, loc, type, 0);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getX()}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, inExprs, ctx),
                            AffineMap::get(rank + 1, 0, outExprs, ctx)},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = b.create<linalg::IndexOp>(l, axis);
          Value k = b.create<linalg::IndexOp>(l, rank);
          using I = arith::CmpIPredicate;
          I pred = reverse ? (exclusive ? I::ugt : I::uge) : (exclusive ? I::ult : I::ule);
          Value take = b.create<arith::CmpIOp>(l, pred, k, i);
          Value x = b.create<arith::SelectOp>(l, take, a[0], scalarConstant(b, l, elem, 0));
          Value sum = fl ? b.create<arith::AddFOp>(l, a[1], x).getResult()
                         : b.create<arith::AddIOp>(l, a[1], x).getResult();
          b.create<linalg::YieldOp>(l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  /// The axis is a run-time value: one generic over (out..., k) with k up to the
  /// largest dimension; the body reads x at the output's coordinates with the
  /// axis coordinate replaced by k, and only counts k inside that axis.
  LogicalResult lowerRuntimeAxis(onnx::CumSumOp op, OpAdaptor adaptor,
                                 ConversionPatternRewriter &rewriter) const {
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    auto axisType = cast<RankedTensorType>(adaptor.getAxis().getType());
    if (axisType.getNumElements() != 1 || type.getNumElements() == 0)
      return failure();
    int64_t rank = type.getRank();
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    SmallVector<Value> zeros(axisType.getRank(), rewriter.create<arith::ConstantIndexOp>(loc, 0));
    Value axis = rewriter.create<tensor::ExtractOp>(loc, adaptor.getAxis(), zeros);
    axis = rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), axis);
    Value negative = rewriter.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::slt, axis, rewriter.create<arith::ConstantIndexOp>(loc, 0));
    axis = rewriter.create<arith::SelectOp>(
        loc, negative,
        rewriter.create<arith::AddIOp>(loc, axis, rewriter.create<arith::ConstantIndexOp>(loc, rank)),
        axis);
    int64_t maxDim = *std::max_element(type.getShape().begin(), type.getShape().end());
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    MLIRContext *ctx = rewriter.getContext();
    Type elem = type.getElementType();
    bool fl = isa<FloatType>(elem);
    // The k dimension's extent comes from an unused operand of that size.
    auto kType = RankedTensorType::get({maxDim}, elem);
    Value kExtent = emptyTensor(rewriter, loc, kType);
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, type, 0);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{kExtent}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
                            AffineMap::get(rank + 1, 0, outExprs, ctx)},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          using I = arith::CmpIPredicate;
          Value k = b.create<linalg::IndexOp>(l, rank);
          SmallVector<Value> coords;
          Value i = b.create<arith::ConstantIndexOp>(l, 0);
          Value extent = b.create<arith::ConstantIndexOp>(l, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value id = b.create<linalg::IndexOp>(l, d);
            Value isAxis = b.create<arith::CmpIOp>(l, I::eq, axis,
                                                   b.create<arith::ConstantIndexOp>(l, d));
            i = b.create<arith::SelectOp>(l, isAxis, id, i);
            extent = b.create<arith::SelectOp>(
                l, isAxis, b.create<arith::ConstantIndexOp>(l, type.getDimSize(d)), extent);
            coords.push_back(id);
          }
          Value inside = b.create<arith::CmpIOp>(l, I::ult, k, extent);
          // Read at k along the axis (clamped so the read stays in bounds).
          Value safeK = b.create<arith::SelectOp>(l, inside, k, b.create<arith::ConstantIndexOp>(l, 0));
          for (int64_t d = 0; d < rank; ++d) {
            Value isAxis = b.create<arith::CmpIOp>(l, I::eq, axis,
                                                   b.create<arith::ConstantIndexOp>(l, d));
            coords[d] = b.create<arith::SelectOp>(l, isAxis, safeK, coords[d]);
          }
          I pred = reverse ? (exclusive ? I::ugt : I::uge) : (exclusive ? I::ult : I::ule);
          Value take = b.create<arith::AndIOp>(l, inside, b.create<arith::CmpIOp>(l, pred, k, i));
          Value v = b.create<tensor::ExtractOp>(l, x, coords);
          v = b.create<arith::SelectOp>(l, take, v, scalarConstant(b, l, elem, 0));
          Value sum = fl ? b.create<arith::AddFOp>(l, a[1], v).getResult()
                         : b.create<arith::AddIOp>(l, a[1], v).getResult();
          b.create<linalg::YieldOp>(l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// TopK along `axis`, in two generics, both reductions along the
/// axis that map to any target: each element's rank (how many elements of its
/// slice come before it: better, or equal at a lower index, as ONNX orders ties),
/// then for each output position j the element whose rank is j, with its index.
/// O(n^2) along the axis; the output is always sorted, which `sorted = 0` allows.
struct TopKLowering : OpConversionPattern<onnx::TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto valuesType = resultTypeOf(getTypeConverter(), op, 0);
    auto indicesType = resultTypeOf(getTypeConverter(), op, 1);
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank(), axis = static_cast<int64_t>(op.getAxis());
    // K: a constant, or (a run-time input) the static output's extent along the axis,
    // which shapes being static makes the only valid value.
    if (!valuesType || !indicesType || !xType.hasStaticShape() ||
        !valuesType.hasStaticShape() || !normalizeAxis(axis, rank))
      return failure();
    int64_t k = valuesType.getDimSize(axis);
    SmallVector<int64_t> constantK;
    if (getConstantInts(op.getK(), constantK) && (constantK.size() != 1 || constantK[0] != k))
      return rewriter.notifyMatchFailure(op, "K disagrees with the output shape");
    if (k > xType.getDimSize(axis))
      return rewriter.notifyMatchFailure(op, "K exceeds the axis");
    Location loc = op.getLoc();
    if (valuesType.getNumElements() == 0) {
      rewriter.replaceOp(op, ValueRange{emptyTensor(rewriter, loc, valuesType),
                                        emptyTensor(rewriter, loc, indicesType)});
      return success();
    }
    bool largest = op.getLargest().value_or(1) != 0;
    ElemKind kind = elemKind(op.getX().getType());
    MLIRContext *ctx = getContext();
    // Loops: the tensor's dims, then t, the other position along the axis.
    SmallVector<AffineExpr> self, other;
    for (int64_t d = 0; d < rank; ++d) {
      self.push_back(getAffineDimExpr(d, ctx));
      other.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    }
    AffineMap selfMap = AffineMap::get(rank + 1, 0, self, ctx);
    AffineMap otherMap = AffineMap::get(rank + 1, 0, other, ctx);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto before = [&](OpBuilder &b, Location l, Value u, Value v) -> Value {
      // u strictly better than v.
      if (kind == ElemKind::Float)
        return b.create<arith::CmpFOp>(
            l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, u, v);
      bool u8 = kind == ElemKind::Unsigned || kind == ElemKind::Bool;
      auto pred = largest ? (u8 ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                          : (u8 ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
      return b.create<arith::CmpIOp>(l, pred, u, v);
    };
    auto equal = [&](OpBuilder &b, Location l, Value u, Value v) -> Value {
      if (kind == ElemKind::Float)
        return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, u, v);
      return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, u, v);
    };
    Type i64 = rewriter.getI64Type();
    auto rankType = RankedTensorType::get(xType.getShape(), i64);
    auto ranks = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{rankType}, ValueRange{x, x},
        ValueRange{filledTensor(rewriter, loc, rankType, 0)},
        ArrayRef<AffineMap>{selfMap, otherMap, selfMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value s = b.create<linalg::IndexOp>(l, axis);
          Value t = b.create<linalg::IndexOp>(l, rank);
          Value lower = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, t, s);
          Value first = b.create<arith::OrIOp>(
              l, before(b, l, args[1], args[0]),
              b.create<arith::AndIOp>(l, equal(b, l, args[1], args[0]), lower));
          Value one = b.create<arith::ExtUIOp>(l, i64, first);
          b.create<linalg::YieldOp>(l, b.create<arith::AddIOp>(l, args[2], one).getResult());
        });
    // Outputs: position j along the axis takes the element of rank j.
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    AffineMap outMap = AffineMap::get(rank + 1, 0, outExprs, ctx);
    auto select = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valuesType, indicesType}, ValueRange{x, ranks.getResult(0)},
        ValueRange{filledTensor(rewriter, loc, valuesType, 0),
                   filledTensor(rewriter, loc, indicesType, 0)},
        ArrayRef<AffineMap>{otherMap, otherMap, outMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value j = b.create<arith::IndexCastOp>(l, i64, b.create<linalg::IndexOp>(l, axis));
          Value t = b.create<arith::IndexCastOp>(l, i64, b.create<linalg::IndexOp>(l, rank));
          Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, args[1], j);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, hit, args[0], args[2]),
                            b.create<arith::SelectOp>(l, hit, t, args[3])});
        });
    rewriter.replaceOp(op, select.getResults());
    return success();
  }
};

} // namespace

void populateReductionLoweringPatterns(RewritePatternSet &patterns,
                                       TypeConverter &converter) {
  patterns.add<ReduceLowering, SoftmaxLowering, GlobalPoolLowering, ArgLowering,
               CumSumLowering, HardmaxLowering, TopKLowering>(
      converter, patterns.getContext());
}

} // namespace kiln
