//===- RemoveIdentity.cpp - Remove Identity and inference Dropout ---------===//
//
// This file implements kiln-remove-identity (see Passes.td): values that an
// Identity or an inference-mode Dropout forward are replaced by their source, and
// a Dropout's mask, where used, by a constant all true. This is the one place
// Dropout is removed: a Dropout left (training mode) has no lowering and fails
// naming its node.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"


namespace kiln {
#define GEN_PASS_DEF_REMOVEIDENTITY
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// True when `v` is absent or a constant false: Dropout is then the identity.
bool isInferenceMode(Value trainingMode) {
  if (isa<NoneType>(trainingMode.getType()))
    return true;
  auto constant = trainingMode.getDefiningOp<kiln::onnx::ConstantOp>();
  if (!constant || !constant.getValue())
    return false;
  auto value = dyn_cast<DenseElementsAttr>(*constant.getValue());
  return value && value.isSplat() && !value.getSplatValue<bool>();
}

/// A constant all-true tensor of `type` (a Dropout mask at inference); null when
/// the type has no static shape.
Value allTrue(OpBuilder &b, Location loc, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return nullptr;
  auto value = DenseElementsAttr::get(tensor, true);
  auto constant = b.create<kiln::onnx::ConstantOp>(loc, TypeRange{tensor}, ValueRange{});
  constant.setValueAttr(value);
  return constant.getResult();
}

/// Replaces an inference-mode Dropout's output by its data and its mask by all
/// true; false when the Dropout stays.
bool removeDropout(Operation *op, Value data, Value output, Value mask) {
  if (data.getType() != output.getType())
    return false;
  Value ones;
  if (!mask.use_empty()) {
    OpBuilder b(op);
    ones = allTrue(b, op->getLoc(), mask.getType());
    if (!ones)
      return false;
    mask.replaceAllUsesWith(ones);
  }
  output.replaceAllUsesWith(data);
  return true;
}

struct RemoveIdentityPass
    : kiln::impl::RemoveIdentityBase<RemoveIdentityPass> {
  void runOnOperation() override {
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (auto identity = dyn_cast<kiln::onnx::IdentityOp>(op)) {
        if (identity.getInput().getType() != identity.getOutput().getType())
          return;
        identity.getOutput().replaceAllUsesWith(identity.getInput());
        dead.push_back(op);
        return;
      }
      if (auto dropout = dyn_cast<kiln::onnx::DropoutOp>(op)) {
        if (isInferenceMode(dropout.getTrainingMode()) &&
            removeDropout(op, dropout.getData(), dropout.getOutput(), dropout.getMask()))
          dead.push_back(op);
        return;
      }
      // Dropout-1 to 11: inference unless is_test says 0 (opsets 1-6).
      if (auto dropout = dyn_cast<kiln::onnx::DropoutV10Op>(op)) {
        std::optional<uint64_t> isTest = dropout.getIsTest();
        if ((!isTest || *isTest) &&
            removeDropout(op, dropout.getData(), dropout.getOutput(), dropout.getMask()))
          dead.push_back(op);
      }
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
