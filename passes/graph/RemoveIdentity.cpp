//===- RemoveIdentity.cpp - Remove Identity and inference Dropout ---------===//
//
// This file implements kiln-remove-identity (see Passes.td): values that an
// Identity or an inference-mode Dropout forward are replaced by their source.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/Passes.h"


namespace kiln {
#define GEN_PASS_DEF_REMOVEIDENTITY
#include "passes/Passes.h.inc"
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
      auto dropout = dyn_cast<kiln::onnx::DropoutOp>(op);
      if (!dropout || !isInferenceMode(dropout.getTrainingMode()) ||
          !dropout.getMask().use_empty() ||
          dropout.getData().getType() != dropout.getOutput().getType())
        return;
      dropout.getOutput().replaceAllUsesWith(dropout.getData());
      dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
