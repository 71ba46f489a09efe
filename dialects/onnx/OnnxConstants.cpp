//===- OnnxConstants.cpp - The values of onnx constants -------------------===//
//
// This file implements OnnxConstants.h.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxConstants.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace kiln {
namespace {

/// An onnx.Constant's value in any of its attribute forms, as elements of its
/// (static) result type.
ElementsAttr constantAttr(kiln::onnx::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getOutput().getType());
  if (!type || !type.hasStaticShape())
    return {};
  if (auto v = constant.getValue())
    return *v;
  if (auto f = constant.getValueFloatAttr())
    return DenseElementsAttr::get(type, f.getValue());
  if (auto i = constant.getValueIntAttr())
    return DenseElementsAttr::get(
        type, APInt(64, static_cast<uint64_t>(i.getInt()), /*isSigned=*/true));
  if (auto fs = constant.getValueFloatsAttr()) {
    SmallVector<APFloat> v;
    for (Attribute a : fs)
      v.push_back(llvm::cast<FloatAttr>(a).getValue());
    return DenseElementsAttr::get(type, v);
  }
  if (auto is = constant.getValueIntsAttr()) {
    SmallVector<APInt> v;
    for (Attribute a : is)
      v.push_back(APInt(64, static_cast<uint64_t>(llvm::cast<IntegerAttr>(a).getInt()),
                        /*isSigned=*/true));
    return DenseElementsAttr::get(type, v);
  }
  return {};
}

} // namespace

ElementsAttr constantValueOf(Value v) {
  auto constant = v.getDefiningOp<kiln::onnx::ConstantOp>();
  return constant ? constantAttr(constant) : ElementsAttr();
}

ArrayRef<char> resourceBytes(ElementsAttr attr) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  auto type = resource ? dyn_cast<RankedTensorType>(resource.getType()) : nullptr;
  if (!blob || !type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8 != 0 ||
      blob->getData().size() != static_cast<size_t>(type.getNumElements()) *
                                    (type.getElementType().getIntOrFloatBitWidth() / 8))
    return {};
  return blob->getData();
}

std::optional<std::vector<double>> floatValuesOf(Value v) {
  ElementsAttr attr = constantValueOf(v);
  if (!attr)
    return std::nullopt;
  auto type = cast<RankedTensorType>(attr.getShapedType());
  auto elem = dyn_cast<FloatType>(type.getElementType());
  if (!elem)
    return std::nullopt;
  std::vector<double> out;
  out.reserve(type.getNumElements());
  if (isa<DenseResourceElementsAttr>(attr)) {
    ArrayRef<char> data = resourceBytes(attr);
    if (data.empty() && type.getNumElements() != 0)
      return std::nullopt;
    unsigned bytes = elem.getWidth() / 8;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      const char *p = data.data() + i * bytes;
      if (elem.isF32()) {
        float f;
        std::memcpy(&f, p, sizeof f);
        out.push_back(f);
      } else if (elem.isF64()) {
        double d;
        std::memcpy(&d, p, sizeof d);
        out.push_back(d);
      } else {
        uint64_t bits = 0;
        std::memcpy(&bits, p, bytes);
        out.push_back(APFloat(elem.getFloatSemantics(), APInt(elem.getWidth(), bits))
                          .convertToDouble());
      }
    }
    return out;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  for (APFloat f : dense.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

bool getConstantInts(Value value, SmallVectorImpl<int64_t> &out) {
  Attribute attr;
  if (auto c = value.getDefiningOp<onnx::ConstantOp>()) {
    if (c.getValue())
      attr = *c.getValue();
    else if (c.getValueInts())
      attr = *c.getValueInts();
    else if (c.getValueInt())
      attr = c.getValueIntAttr();
  } else if (auto c = value.getDefiningOp<arith::ConstantOp>()) {
    attr = c.getValue();
  }
  out.clear();
  if (auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr)) {
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back(v.getSExtValue());
    return true;
  }
  if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr)) {
    auto type = resource.getType();
    if (!type.getElementType().isInteger(64))
      return false;
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return false;
    ArrayRef<char> data = blob->getData();
    const int64_t *p = reinterpret_cast<const int64_t *>(data.data());
    out.assign(p, p + data.size() / sizeof(int64_t));
    return true;
  }
  if (auto array = dyn_cast_or_null<ArrayAttr>(attr)) {
    for (Attribute a : array)
      out.push_back(cast<IntegerAttr>(a).getInt());
    return true;
  }
  if (auto i = dyn_cast_or_null<IntegerAttr>(attr)) {
    out.push_back(i.getInt());
    return true;
  }
  return false;
}

} // namespace kiln
