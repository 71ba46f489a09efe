//===- Constant.cpp - Lower onnx.Constant to arith.constant ---------------===//
//
// This file implements the constant family: every attribute form of
// onnx.Constant (value, value_float(s), value_int(s), read by constantValueOf)
// becomes an arith.constant of the converted type. Dense resources keep their
// blob (no copy); unsigned element types are reinterpreted as signless of the
// same width.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxConstants.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln {
namespace {

/// Re-types `attr` to `type` (same shape and bit width).
Attribute retype(Attribute attr, RankedTensorType type) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.getType() == type)
      return dense;
    return dense.bitcast(type.getElementType());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    return DenseResourceElementsAttr::get(type, resource.getRawHandle());
  return {};
}

struct ConstantLowering : OpConversionPattern<onnx::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op.getOutput().getType()));
    if (!type)
      return failure();
    Attribute value;
    if (ElementsAttr v = constantValueOf(op.getOutput()))
      value = retype(v, type);
    if (!value)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, cast<TypedAttr>(value));
    return success();
  }
};

} // namespace

void populateConstantLoweringPatterns(RewritePatternSet &patterns,
                                      TypeConverter &converter) {
  patterns.add<ConstantLowering>(converter, patterns.getContext());
}

} // namespace kiln
