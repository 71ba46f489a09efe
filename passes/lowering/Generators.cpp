//===- Generators.cpp - Lower ops that generate tensors -------------------===//
//
// This file implements the generator family: Shape, Size and ConstantOfShape
// fold to constants (every shape is static); Range, OneHot, Trilu and EyeLike
// become generics computing each element from its position, as do the window
// functions (Hann, Hamming, Blackman).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

/// Shape, Size and ConstantOfShape fold to constants: every shape is static.
struct ShapeConstantLowering : ConversionPattern {
  ShapeConstantLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    if (name != "onnx.Shape" && name != "onnx.Size" && name != "onnx.ConstantOfShape")
      return failure();
    RankedTensorType type = resultTypeOf(getTypeConverter(), op);
    if (!type)
      return failure();
    Attribute value;
    if (name == "onnx.Shape") {
      auto src = cast<RankedTensorType>(operands[0].getType());
      int64_t rank = src.getRank();
      int64_t start = 0, end = rank;
      if (auto a = op->getAttrOfType<IntegerAttr>("start"))
        start = a.getInt();
      if (auto a = op->getAttrOfType<IntegerAttr>("end"))
        end = a.getInt();
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      SmallVector<int64_t> dims(src.getShape().begin() + start,
                                src.getShape().begin() + std::max(start, end));
      value = DenseElementsAttr::get(type, ArrayRef<int64_t>(dims));
    } else if (name == "onnx.Size") {
      auto src = cast<RankedTensorType>(operands[0].getType());
      value = DenseElementsAttr::get(type, src.getNumElements());
    } else if (name == "onnx.ConstantOfShape") {
      Attribute fillAttr;
      if (auto v = op->getAttrOfType<DenseElementsAttr>("value")) {
        auto elem = type.getElementType();
        auto raw = v.bitcast(elem);
        fillAttr = raw.getSplatValue<Attribute>();
      } else {
        fillAttr = rewriter.getFloatAttr(type.getElementType(), 0.0);
      }
      value = DenseElementsAttr::get(type, fillAttr);
    } else {
      return failure();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, cast<TypedAttr>(value));
    return success();
  }
};

/// OneHot: out[.., j at axis, ..] = j == indices[..] (negative indices count from
/// the depth) ? values[1] : values[0].
struct OneHotLowering : OpConversionPattern<onnx::OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (!normalizeAxis(axis, rank))
      return failure();
    Location loc = op.getLoc();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    int64_t depth = type.getDimSize(axis);
    Value values = adaptor.getValues();
    Value off = rewriter.create<tensor::ExtractOp>(
        loc, values, ValueRange{rewriter.create<arith::ConstantIndexOp>(loc, 0)});
    Value on = rewriter.create<tensor::ExtractOp>(
        loc, values, ValueRange{rewriter.create<arith::ConstantIndexOp>(loc, 1)});
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        idxExprs.push_back(getAffineDimExpr(d, ctx));
    bool floatIndices = isa<FloatType>(
        cast<RankedTensorType>(adaptor.getIndices().getType()).getElementType());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, idxExprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value index = a[0];
          if (floatIndices)
            index = b.create<arith::FPToSIOp>(l, b.getI64Type(), index);
          Value idx = wrapIndex(b, l, index, depth);
          Value here = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq,
                                               b.create<linalg::IndexOp>(l, axis), idx);
          b.create<linalg::YieldOp>(l, b.create<arith::SelectOp>(l, here, on, off).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Trilu and EyeLike: a value chosen by the position (row, column) of each element.
struct TriluLowering : ConversionPattern {
  TriluLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool isEye = name == "onnx.EyeLike";
    if (name != "onnx.Trilu" && !isEye)
      return failure();
    RankedTensorType type = resultTypeOf(getTypeConverter(), op);
    if (!type || type.getRank() < 2)
      return failure();
    int64_t k = 0;
    if (isEye) {
      if (auto a = op->getAttrOfType<IntegerAttr>("k"))
        k = a.getInt();
    }
    // Trilu's k may be a run-time input: read it once, outside the generic.
    Value kRuntime;
    if (!isEye && operands.size() > 1 && isa<RankedTensorType>(operands[1].getType())) {
      SmallVector<int64_t> kv;
      if (getConstantInts(op->getOperand(1), kv) && kv.size() == 1) {
        k = kv[0];
      } else {
        auto kType = cast<RankedTensorType>(operands[1].getType());
        if (kType.getNumElements() != 1)
          return failure();
        SmallVector<Value> zeros(kType.getRank(),
                                 rewriter.create<arith::ConstantIndexOp>(op->getLoc(), 0));
        kRuntime = rewriter.create<tensor::ExtractOp>(op->getLoc(), operands[1], zeros);
      }
    }
    bool upper = true;
    if (auto a = op->getAttrOfType<IntegerAttr>("upper"))
      upper = a.getInt() != 0;
    int64_t rank = type.getRank();
    Location loc = op->getLoc();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    Type elem = type.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    if (!isEye) {
      inputs.push_back(operands[0]);
      maps.push_back(id);
    }
    maps.push_back(id);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, inputs, ValueRange{emptyTensor(rewriter, loc, type)}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value row = b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                   b.create<linalg::IndexOp>(l, rank - 2));
          Value col = b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                   b.create<linalg::IndexOp>(l, rank - 1));
          Value diff = b.create<arith::SubIOp>(l, col, row);
          Value kv = kRuntime ? kRuntime
                              : b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(k)).getResult();
          Value zero = scalarConstant(b, l, elem, 0);
          Value r;
          if (isEye) {
            Value on = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, diff, kv);
            r = b.create<arith::SelectOp>(l, on, scalarConstant(b, l, elem, 1), zero);
          } else {
            Value keep = b.create<arith::CmpIOp>(
                l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle, diff, kv);
            r = b.create<arith::SelectOp>(l, keep, a[0], zero);
          }
          b.create<linalg::YieldOp>(l, r);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Range: out[i] = start + i * delta (the length is inferred and static).
struct RangeLowering : OpConversionPattern<onnx::RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Location loc = op.getLoc();
    if (!type || type.getRank() != 1)
      return failure();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    Value start = rewriter.create<tensor::ExtractOp>(loc, adaptor.getStart(), ValueRange{});
    Value delta = rewriter.create<tensor::ExtractOp>(loc, adaptor.getDelta(), ValueRange{});
    Type elem = type.getElementType();
    bool fl = isa<FloatType>(elem);
    MLIRContext *ctx = rewriter.getContext();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(), b.create<linalg::IndexOp>(l, 0));
          Value r;
          if (fl) {
            Value fi = b.create<arith::SIToFPOp>(l, elem, i);
            r = b.create<arith::AddFOp>(l, start, b.create<arith::MulFOp>(l, fi, delta));
          } else {
            Value ii = elem.getIntOrFloatBitWidth() == 64
                           ? i
                           : b.create<arith::TruncIOp>(l, elem, i).getResult();
            r = b.create<arith::AddIOp>(l, start, b.create<arith::MulIOp>(l, ii, delta));
          }
          b.create<linalg::YieldOp>(l, r);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The window functions: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), with
/// N = size (periodic) or size - 1 (symmetric). The size operand may be a run-time
/// input: the static output shape is then the only valid value.
template <typename WindowOp>
struct WindowLowering : OpConversionPattern<WindowOp> {
  WindowLowering(TypeConverter &converter, MLIRContext *ctx, double a0, double a1,
                 double a2)
      : OpConversionPattern<WindowOp>(converter, ctx), a0(a0), a1(a1), a2(a2) {}
  using OpAdaptor = typename WindowOp::Adaptor;
  LogicalResult
  matchAndRewrite(WindowOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(this->getTypeConverter(), op);
    if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    int64_t size = type.getDimSize(0);
    SmallVector<int64_t> given;
    if (getConstantInts(op.getSize(), given) && (given.size() != 1 || given[0] != size))
      return rewriter.notifyMatchFailure(op, "size disagrees with the output shape");
    Location loc = op.getLoc();
    double n = op.getPeriodic() ? static_cast<double>(size) : static_cast<double>(size - 1);
    double step = n > 0 ? 2 * M_PI / n : 0;
    Type elem = type.getElementType();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, this->getContext())},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          // One op per statement: the IR's order must not depend on the order in
          // which a compiler evaluates arguments.
          Value index = b.create<linalg::IndexOp>(l, 0);
          Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(), index);
          Value stepValue = scalarConstant(b, l, elem, step);
          Value position = b.create<arith::SIToFPOp>(l, elem, i);
          Value x = b.create<arith::MulFOp>(l, position, stepValue);
          Value cos = b.create<math::CosOp>(l, x);
          Value a1Value = scalarConstant(b, l, elem, a1);
          Value first = b.create<arith::MulFOp>(l, a1Value, cos);
          Value a0Value = scalarConstant(b, l, elem, a0);
          Value w = b.create<arith::SubFOp>(l, a0Value, first);
          if (a2 != 0) {
            Value twice = b.create<arith::AddFOp>(l, x, x);
            Value cos2 = b.create<math::CosOp>(l, twice);
            Value a2Value = scalarConstant(b, l, elem, a2);
            Value second = b.create<arith::MulFOp>(l, a2Value, cos2);
            w = b.create<arith::AddFOp>(l, w, second);
          }
          b.create<linalg::YieldOp>(l, w);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

private:
  double a0, a1, a2;
};

} // namespace

void populateGeneratorLoweringPatterns(RewritePatternSet &patterns,
                                       TypeConverter &converter) {
  patterns.add<ShapeConstantLowering, OneHotLowering, TriluLowering, RangeLowering>(
      converter, patterns.getContext());
  MLIRContext *ctx = patterns.getContext();
  patterns.add<WindowLowering<onnx::HannWindowOp>>(converter, ctx, 0.5, 0.5, 0.0);
  patterns.add<WindowLowering<onnx::HammingWindowOp>>(converter, ctx, 25.0 / 46.0,
                                                      21.0 / 46.0, 0.0);
  patterns.add<WindowLowering<onnx::BlackmanWindowOp>>(converter, ctx, 0.42, 0.5, 0.08);
}

} // namespace kiln
