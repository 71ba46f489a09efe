//===- LoweringUtils.cpp - Helpers for onnx -> linalg lowering ------------===//
//
// This file implements the helpers the onnx -> linalg lowering families share
// (LoweringUtils.h): element kinds, empty and filled tensors, elementwise generics,
// reshapes, constant operands, index wrapping.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln {

OnnxTypeConverter::OnnxTypeConverter() {
  addConversion([](Type t) { return t; });
  addConversion([](RankedTensorType t) -> Type {
    auto i = dyn_cast<IntegerType>(t.getElementType());
    if (!i || i.isSignless())
      return t;
    return t.clone(IntegerType::get(t.getContext(), i.getWidth()));
  });
}

ElemKind elemKind(Type onnxType) {
  Type e = getElementTypeOrSelf(onnxType);
  if (isa<FloatType>(e))
    return ElemKind::Float;
  if (e.isInteger(1))
    return ElemKind::Bool;
  if (e.isUnsignedInteger())
    return ElemKind::Unsigned;
  return ElemKind::Signed;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(f, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Value scalar = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<linalg::FillOp>(loc, scalar, emptyTensor(b, loc, type)).getResult(0);
}

Value multiplyAdd(OpBuilder &b, Location loc, Value a, Value x, Value acc) {
  if (isa<FloatType>(a.getType()))
    return b.create<arith::AddFOp>(loc, acc, b.create<arith::MulFOp>(loc, a, x));
  return b.create<arith::AddIOp>(loc, acc, b.create<arith::MulIOp>(loc, a, x));
}

Type accumulatorType(Type elem) {
  if (elem.isF16() || elem.isBF16())
    return Float32Type::get(elem.getContext());
  return elem;
}

RankedTensorType accumulatorTensorType(RankedTensorType type) {
  return RankedTensorType::get(type.getShape(), accumulatorType(type.getElementType()));
}

Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = dyn_cast<FloatType>(v.getType());
  auto target = dyn_cast<FloatType>(to);
  if (!from || !target || from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return b.create<arith::ExtFOp>(loc, target, v);
  return b.create<arith::TruncFOp>(loc, target, v);
}

Value fromAccumulator(OpBuilder &b, Location loc, Value acc, RankedTensorType type) {
  if (acc.getType() == type)
    return acc;
  Type elem = type.getElementType();
  return buildElementwise(b, loc, type, ValueRange{acc},
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            return castFloat(nb, l, a[0], elem);
                          });
}

Value perChannel(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape{t.getNumElements()};
  shape.append(rank - 2, 1);
  return reshapeTo(b, loc, v, RankedTensorType::get(shape, t.getElementType()));
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBody body) {
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    SmallVector<AffineExpr> exprs;
    int64_t offset = rank - t.getRank();
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (t.getDimSize(d) == 1 && resultType.getDimSize(d + offset) != 1)
        exprs.push_back(getAffineConstantExpr(0, ctx));
      else
        exprs.push_back(getAffineDimExpr(d + offset, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs, ValueRange{emptyTensor(b, loc, resultType)},
      maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args.drop_back());
        nb.create<linalg::YieldOp>(nl, r);
      });
  return generic.getResult(0);
}

Value reshapeTo(OpBuilder &b, Location loc, Value value, RankedTensorType type) {
  auto src = cast<RankedTensorType>(value.getType());
  if (src == type)
    return value;
  // A scalar becomes an all-ones shape (and back) with an empty reassociation.
  if (src.getRank() == 0)
    return b.create<tensor::ExpandShapeOp>(loc, type, value,
                                           ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, value,
                                             ArrayRef<ReassociationIndices>{});
  // Collapse everything to 1-D (or rank 0), then expand to the target.
  auto flatType = RankedTensorType::get({src.getNumElements()}, src.getElementType());
  Value flat = value;
  if (src.getRank() != 1) {
    SmallVector<ReassociationIndices> all;
    if (src.getRank() > 0) {
      all.emplace_back();
      for (int64_t i = 0; i < src.getRank(); ++i)
        all.back().push_back(i);
    }
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, value, all);
  }
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all;
  if (type.getRank() > 0) {
    all.emplace_back();
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.back().push_back(i);
  }
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, all);
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, all);
}

Value wrapIndex(OpBuilder &b, Location loc, Value index, int64_t dim) {
  Value idx = b.create<arith::IndexCastOp>(loc, b.getIndexType(), index);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx, zero);
  Value wrapped = b.create<arith::AddIOp>(loc, idx, b.create<arith::ConstantIndexOp>(loc, dim));
  idx = b.create<arith::SelectOp>(loc, negative, wrapped, idx);
  // Out-of-range indices are invalid input; clamping keeps every read inside
  // the tensor, so bad data gives wrong numbers, never a stray memory access.
  Value last = b.create<arith::ConstantIndexOp>(loc, std::max<int64_t>(dim - 1, 0));
  idx = b.create<arith::MinSIOp>(loc, idx, last);
  return b.create<arith::MaxSIOp>(loc, idx, zero);
}

bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return false;
  if (axis < 0)
    axis += rank;
  return true;
}

RankedTensorType resultTypeOf(const TypeConverter *converter, Operation *op,
                              unsigned index) {
  return dyn_cast_or_null<RankedTensorType>(
      converter->convertType(op->getResult(index).getType()));
}

Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, double value) {
  auto type = cast<RankedTensorType>(x.getType());
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    shape.push_back(type.getDimSize(d) + low[d] + high[d]);
  auto padded = RankedTensorType::get(shape, type.getElementType());
  auto pad = b.create<tensor::PadOp>(loc, padded, x, low, high, ValueRange{}, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&pad.getRegion());
  for (int64_t i = 0; i < type.getRank(); ++i)
    block->addArgument(b.getIndexType(), loc);
  b.setInsertionPointToEnd(block);
  b.create<tensor::YieldOp>(loc, scalarConstant(b, loc, type.getElementType(), value));
  return pad.getResult();
}

} // namespace kiln
