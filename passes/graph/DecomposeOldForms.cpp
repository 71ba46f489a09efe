//===- DecomposeOldForms.cpp - Old operator forms ---===//
//
// This file implements kiln-decompose's old operator forms (Decompositions.h).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Decompositions.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {

/// Upsample and Resize-10: Resize with asymmetric coordinates (and floor for nearest).
FailureOr<SmallVector<Value>> decomposeUpsample(Operation *op, OnnxBuilder &ob) {
  if (onnx::onnxOperatorName(op) == "Resize" && op->getNumOperands() != 2)
    return SmallVector<Value>{};
  auto in = [&](unsigned i) { return op->getOperand(i); };
  auto mode = op->getAttrOfType<StringAttr>("mode");
  SmallVector<NamedAttribute> attrs = {
      ob.b.getNamedAttr("mode", mode ? mode : ob.b.getStringAttr("nearest")),
      ob.b.getNamedAttr("coordinate_transformation_mode", ob.b.getStringAttr("asymmetric")),
      ob.b.getNamedAttr("nearest_mode", ob.b.getStringAttr("floor"))};
  return SmallVector<Value>{ob.create("Resize", {in(0), ob.none(), in(1), ob.none()},
                                      elementOf(in(0)), attrs)};
}

/// Pad-1 and -2 (pads as attributes): today's Pad.
FailureOr<SmallVector<Value>> decomposePadAttributes(Operation *op, OnnxBuilder &ob) {
  if (op->getNumOperands() != 1)
    return SmallVector<Value>{};
  auto in = [&](unsigned i) { return op->getOperand(i); };
  auto pads = op->getAttrOfType<ArrayAttr>("pads");
  if (!pads)
    pads = op->getAttrOfType<ArrayAttr>("paddings");
  SmallVector<int64_t> values;
  for (Attribute a : pads)
    values.push_back(cast<IntegerAttr>(a).getInt());
  auto value = op->getAttrOfType<FloatAttr>("value");
  auto mode = op->getAttrOfType<StringAttr>("mode");
  Type elem = elementOf(in(0));
  return SmallVector<Value>{ob.create(
      "Pad", {in(0), ob.ints(values), ob.scalar(elem, value ? value.getValueAsDouble() : 0), ob.none()},
      elem, {ob.b.getNamedAttr("mode", mode ? mode : ob.b.getStringAttr("constant"))})};
}

/// Slice-1 (starts, ends, axes as attributes): today's Slice.
FailureOr<SmallVector<Value>> decomposeSliceAttributes(Operation *op, OnnxBuilder &ob) {
  if (op->getNumOperands() != 1)
    return SmallVector<Value>{};
  auto in = [&](unsigned i) { return op->getOperand(i); };
  auto list = [&](StringRef attr) -> Value {
    auto a = op->getAttrOfType<ArrayAttr>(attr);
    if (!a)
      return ob.none();
    SmallVector<int64_t> v;
    for (Attribute e : a)
      v.push_back(cast<IntegerAttr>(e).getInt());
    return ob.ints(v);
  };
  return SmallVector<Value>{ob.create(
      "Slice", {in(0), list("starts"), list("ends"), list("axes"), ob.none()},
      elementOf(in(0)))};
}

/// PRelu before opset 7: a 1-D slope is per channel (axis 1).
FailureOr<SmallVector<Value>> decomposePRelu(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  // Before opset 7 a 1-D slope is per channel (axis 1), not broadcast from the
  // right as numpy does.
  auto module = op->getParentOfType<ModuleOp>();
  auto opset = module ? module->getAttrOfType<IntegerAttr>("onnx.opset") : IntegerAttr();
  auto slope = cast<RankedTensorType>(in(1).getType());
  auto x = cast<RankedTensorType>(in(0).getType());
  if (opset && opset.getInt() < 7 && slope.getRank() == 1 && slope.getDimSize(0) > 1 &&
      x.getRank() > 2 && x.getDimSize(1) == slope.getDimSize(0))
    return SmallVector<Value>{ob.create(
        "PRelu", {in(0), ob.alongAxis(in(1), 1, x.getRank())}, x.getElementType())};
  return SmallVector<Value>{};
}

} // namespace kiln
