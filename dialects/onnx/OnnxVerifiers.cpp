//===- OnnxVerifiers.cpp - Hand-written verifiers for onnx ops ------------===//
//
// This file implements the checks the ONNX schema cannot express and that later
// phases rely on: attribute values in range, consistent ranks, types that agree with
// attributes. Each verifier accepts unranked operands (hand-written IR may not know a
// shape); it checks whatever is known.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"

using namespace mlir;
using namespace kiln::onnx;

namespace {

/// The rank of `v`'s type, or -1 when it is not a ranked tensor.
int64_t rankOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type ? type.getRank() : -1;
}

LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank,
                        StringRef what = "axis") {
  if (rank < 0)
    return success();
  if (axis < -rank || axis >= rank)
    return op->emitOpError() << what << " " << axis
                             << " is out of range for rank " << rank;
  return success();
}

} // namespace

LogicalResult ConvOp::verify() {
  int64_t rank = rankOf(getX());
  int64_t wRank = rankOf(getW());
  if (rank >= 0 && rank < 3)
    return emitOpError() << "input must have rank >= 3 (N, C, spatial...), got "
                         << rank;
  if (rank >= 0 && wRank >= 0 && rank != wRank)
    return emitOpError() << "weight rank " << wRank
                         << " differs from input rank " << rank;
  if (static_cast<int64_t>(getGroup()) < 1)
    return emitOpError() << "group must be positive, got " << getGroup();
  StringRef autoPad = getAutoPad();
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID")
    return emitOpError() << "unknown auto_pad '" << autoPad << "'";
  if (rank < 0)
    return success();
  int64_t spatial = rank - 2;
  auto checkSize = [&](std::optional<ArrayAttr> attr, StringRef name,
                       int64_t expected) -> LogicalResult {
    if (attr && static_cast<int64_t>(attr->size()) != expected)
      return emitOpError() << name << " has " << attr->size()
                           << " values, expected " << expected;
    return success();
  };
  if (failed(checkSize(getKernelShape(), "kernel_shape", spatial)) ||
      failed(checkSize(getStrides(), "strides", spatial)) ||
      failed(checkSize(getDilations(), "dilations", spatial)) ||
      failed(checkSize(getPads(), "pads", 2 * spatial)))
    return failure();
  auto x = cast<RankedTensorType>(getX().getType());
  auto w = dyn_cast<RankedTensorType>(getW().getType());
  if (w && !x.isDynamicDim(1) && !w.isDynamicDim(1) &&
      x.getDimSize(1) != w.getDimSize(1) * static_cast<int64_t>(getGroup()))
    return emitOpError() << "input has " << x.getDimSize(1)
                         << " channels but weight expects " << w.getDimSize(1)
                         << " x group " << getGroup();
  return success();
}

LogicalResult CastOp::verify() {
  // ONNX TensorProto data types Kiln represents (string and complex are not).
  Type expected;
  MLIRContext *ctx = getContext();
  switch (getTo()) {
  case 1: expected = Float32Type::get(ctx); break;
  case 2: expected = IntegerType::get(ctx, 8, IntegerType::Unsigned); break;
  case 3: expected = IntegerType::get(ctx, 8); break;
  case 4: expected = IntegerType::get(ctx, 16, IntegerType::Unsigned); break;
  case 5: expected = IntegerType::get(ctx, 16); break;
  case 6: expected = IntegerType::get(ctx, 32); break;
  case 7: expected = IntegerType::get(ctx, 64); break;
  case 9: expected = IntegerType::get(ctx, 1); break;
  case 10: expected = Float16Type::get(ctx); break;
  case 11: expected = Float64Type::get(ctx); break;
  case 12: expected = IntegerType::get(ctx, 32, IntegerType::Unsigned); break;
  case 13: expected = IntegerType::get(ctx, 64, IntegerType::Unsigned); break;
  case 16: expected = BFloat16Type::get(ctx); break;
  default:
    return emitOpError() << "cast to ONNX data type " << getTo()
                         << " is not supported";
  }
  auto result = cast<TensorType>(getOutput().getType());
  if (result.getElementType() != expected)
    return emitOpError() << "result element type " << result.getElementType()
                         << " does not match 'to' (" << expected << ")";
  return success();
}

LogicalResult TransposeOp::verify() {
  int64_t rank = rankOf(getData());
  std::optional<ArrayAttr> perm = getPerm();
  if (!perm || rank < 0)
    return success();
  if (static_cast<int64_t>(perm->size()) != rank)
    return emitOpError() << "perm has " << perm->size()
                         << " entries for rank " << rank;
  llvm::SmallVector<bool> seen(rank, false);
  for (Attribute a : *perm) {
    int64_t p = cast<IntegerAttr>(a).getInt();
    if (p < 0 || p >= rank || seen[p])
      return emitOpError() << "perm is not a permutation of 0.." << rank - 1;
    seen[p] = true;
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  int64_t rank = -1;
  for (Value v : getInputs()) {
    int64_t r = rankOf(v);
    if (r < 0)
      continue;
    if (rank >= 0 && r != rank)
      return emitOpError() << "inputs have different ranks (" << rank << " and "
                           << r << ")";
    rank = r;
  }
  if (std::optional<uint64_t> axis = getAxis())
    return checkAxis(*this, static_cast<int64_t>(*axis), rank);
  return success();
}

LogicalResult GemmOp::verify() {
  for (Value v : {getA(), getB()}) {
    int64_t r = rankOf(v);
    if (r >= 0 && r != 2)
      return emitOpError() << "A and B must be matrices, got rank " << r;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (std::optional<uint64_t> allowZero = getAllowzero(); allowZero && *allowZero > 1)
    return emitOpError() << "allowzero must be 0 or 1";
  auto in = dyn_cast<RankedTensorType>(getData().getType());
  auto out = dyn_cast<RankedTensorType>(getReshaped().getType());
  if (in && out && in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "reshapes " << in.getNumElements()
                         << " elements into " << out.getNumElements();
  return success();
}

LogicalResult SoftmaxOp::verify() {
  // The default axis changed between versions (1, then -1); the importer always
  // records it, so only a present axis is checked.
  if (std::optional<uint64_t> axis = getAxis())
    return checkAxis(*this, static_cast<int64_t>(*axis), rankOf(getInput()));
  return success();
}

LogicalResult GatherOp::verify() {
  return checkAxis(*this, static_cast<int64_t>(getAxis()), rankOf(getData()));
}
