//===- DecomposeQuantization.cpp - Quantized operators ---===//
//
// This file implements kiln-decompose's quantized operators (Decompositions.h).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Decompositions.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {

/// QuantizeLinear saturate(round(x / scale) + zero_point); DequantizeLinear
/// (int32(x) - zero_point) * scale; per tensor or per axis.
FailureOr<SmallVector<Value>> decomposeQuantizeLinear(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  std::string name = onnx::onnxOperatorName(op);
  if (auto block = op->getAttrOfType<IntegerAttr>("block_size"); block && block.getInt()) {
    op->emitError() << "blocked quantization (block_size) is not supported";
    return failure();
  }
  int64_t rank = rankOf(in(0)), axis = axisOf(op, rank);
  if (name == "DequantizeLinear")
    return SmallVector<Value>{ob.binary(
        "Mul", ob.castTo(ob.minusZeroPoint(in(0), in(2), axis, rank), elementOf(in(1))),
        ob.alongAxis(in(1), axis, rank))};
  Type out = cast<TensorType>(op->getResult(0).getType()).getElementType();
  Value x = ob.castTo(in(0), elementOf(in(1)));
  return SmallVector<Value>{ob.quantize(x, in(1), in(2), axis, out)};
}

/// DynamicQuantizeLinear: scale and zero point from min/max, then QuantizeLinear.
FailureOr<SmallVector<Value>> decomposeDynamicQuantizeLinear(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type f32 = ob.b.getF32Type();
  Type u8 = IntegerType::get(op->getContext(), 8, IntegerType::Unsigned);
  Value x = in(0);
  SmallVector<NamedAttribute> all = {
      ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0))};
  Value zero = ob.scalar(f32, 0), qmax = ob.scalar(f32, 255);
  Value lo = ob.create("Min", {ob.create("ReduceMin", {x, ob.none()}, f32, all), zero}, f32);
  Value hi = ob.create("Max", {ob.create("ReduceMax", {x, ob.none()}, f32, all), zero}, f32);
  Value scale = ob.binary("Div", ob.binary("Sub", hi, lo), qmax);
  Value zp = ob.binary("Sub", zero, ob.binary("Div", lo, scale));
  zp = ob.create("Min", {ob.create("Max", {zp, zero}, f32), qmax}, f32);
  zp = ob.castTo(ob.create("Round", zp, f32), u8);
  return SmallVector<Value>{ob.quantize(x, scale, zp, 1, u8), scale, zp};
}

/// MatMulInteger: an int32 MatMul of (A - a_zp) and (B - b_zp).
FailureOr<SmallVector<Value>> decomposeMatMulInteger(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type i32 = ob.b.getI32Type();
  int64_t ra = rankOf(in(0)), rb = rankOf(in(1));
  return SmallVector<Value>{ob.create(
      "MatMul",
      {ob.minusZeroPoint(in(0), in(2), ra - 2, ra), ob.minusZeroPoint(in(1), in(3), rb - 1, rb)},
      i32)};
}

/// QLinearMatMul: MatMulInteger, times a_scale * b_scale / y_scale, QuantizeLinear.
FailureOr<SmallVector<Value>> decomposeQLinearMatMul(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type f32 = ob.b.getF32Type();
  Type i32 = ob.b.getI32Type();
  int64_t ra = rankOf(in(0)), rb = rankOf(in(3));
  Value acc = ob.create(
      "MatMul",
      {ob.minusZeroPoint(in(0), in(2), ra - 2, ra), ob.minusZeroPoint(in(3), in(5), rb - 1, rb)},
      i32);
  Value scale = ob.binary("Div",
                          ob.binary("Mul", ob.alongAxis(in(1), ra - 2, ra),
                                    ob.alongAxis(in(4), rb - 1, rb)),
                          in(6));
  Value y = ob.binary("Mul", ob.castTo(acc, f32), scale);
  return SmallVector<Value>{ob.quantize(y, ob.scalar(f32, 1), in(7), 1, elementOf(in(7)))};
}

/// ConvInteger: Conv of (x - x_zp) and (w - w_zp) in f64 (exact: every product and
/// sum of 8-bit differences is an integer below 2^53).
FailureOr<SmallVector<Value>> decomposeConvInteger(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type i32 = ob.b.getI32Type();
  return SmallVector<Value>{
      ob.castTo(ob.integerConv(op, in(0), in(2), in(1), in(3), Value()), i32)};
}

/// QLinearConv: ConvInteger + bias, times x_scale * w_scale / y_scale, QuantizeLinear.
FailureOr<SmallVector<Value>> decomposeQLinearConv(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type f32 = ob.b.getF32Type();
  Value acc = ob.castTo(ob.integerConv(op, in(0), in(2), in(3), in(5), in(8)), f32);
  int64_t rank = rankOf(acc);
  Value scale = ob.binary("Div", ob.binary("Mul", in(1), ob.alongAxis(in(4), 1, rank)),
                          in(6));
  Value y = ob.binary("Mul", acc, scale);
  return SmallVector<Value>{ob.quantize(y, ob.scalar(f32, 1), in(7), 1, elementOf(in(7)))};
}

} // namespace kiln
