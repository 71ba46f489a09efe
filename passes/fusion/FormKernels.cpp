//===- FormKernels.cpp - Group tensor ops into kiln.kernel regions --------===//
//
// This file implements kiln-form-kernels (see Passes.td). Today every compute op
// (a linalg op or a tensor op that makes a new tensor) is its own kernel; the
// cheap producers it needs (tensor.empty, scalar constants, fills of them) are
// cloned into it, so a kernel reads only real tensors: graph inputs, weights and
// other kernels' results. Fusion will grow the groups without changing the IR shape.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_FORMKERNELS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Ops recomputed inside each kernel that uses them instead of being inputs.
bool isRematerializable(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  // Scalar computations (constants, values read from small tensors such as a
  // run-time k or slice start, index arithmetic) go with the kernel that uses
  // them; the tensors they read become its inputs.
  if (op->getNumResults() > 0 && op->getNumRegions() == 0 &&
      llvm::none_of(op->getResultTypes(), [](Type t) { return isa<ShapedType>(t); }) &&
      isMemoryEffectFree(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return llvm::all_of(fill->getOperands(), [](Value v) {
      Operation *def = v.getDefiningOp();
      return def && isRematerializable(def);
    });
  return false;
}

bool isKernelAnchor(Operation *op) {
  // A fill that is itself a graph output (not only some kernel's init) computes
  // a result: it needs a kernel of its own.
  if (isa<linalg::FillOp, tensor::EmptyOp>(op))
    return llvm::any_of(op->getUsers(),
                        [](Operation *user) { return isa<func::ReturnOp>(user); });
  if (isRematerializable(op) || isa<func::ReturnOp, kiln::KernelOp>(op))
    return false;
  if (isa<arith::ConstantOp>(op)) // tensor constants become weights
    return false;
  return isa<linalg::LinalgDialect, tensor::TensorDialect>(op->getDialect());
}

/// Collects, in program order, the rematerializable producers `op` needs and the
/// values it reads from outside them (including from inside its own regions).
void collect(Operation *op, llvm::SetVector<Operation *> &remat,
             llvm::SetVector<Value> &inputs) {
  auto visit = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && isRematerializable(def)) {
      if (!remat.contains(def)) {
        collect(def, remat, inputs);
        remat.insert(def);
      }
      return;
    }
    inputs.insert(v);
  };
  for (Value v : op->getOperands())
    visit(v);
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()))
        visit(v);
  });
}

struct FormKernelsPass : kiln::impl::FormKernelsBase<FormKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> anchors;
    for (Operation &op : func.getBody().getOps())
      if (isKernelAnchor(&op))
        anchors.push_back(&op);
    unsigned counter = 0;
    for (Operation *anchor : anchors) {
      if (!llvm::all_of(anchor->getResultTypes(), [](Type t) {
            return isa<RankedTensorType>(t);
          })) {
        anchor->emitError() << "cannot form a kernel around '"
                            << anchor->getName() << "': it does not produce tensors";
        return signalPassFailure();
      }
      llvm::SetVector<Operation *> remat;
      llvm::SetVector<Value> inputs;
      collect(anchor, remat, inputs);

      OpBuilder b(anchor);
      std::string name = "k" + std::to_string(counter++);
      auto kernel = b.create<kiln::KernelOp>(
          anchor->getLoc(), anchor->getResultTypes(), b.getStringAttr(name),
          inputs.getArrayRef());
      Block *body = new Block();
      kernel.getBody().push_back(body);
      IRMapping mapping;
      for (Value in : inputs)
        mapping.map(in, body->addArgument(in.getType(), in.getLoc()));
      OpBuilder inner = OpBuilder::atBlockEnd(body);
      for (Operation *op : remat)
        inner.clone(*op, mapping);
      Operation *clone = inner.clone(*anchor, mapping);
      inner.create<kiln::YieldOp>(anchor->getLoc(), clone->getResults());
      anchor->replaceAllUsesWith(kernel.getResults());
      anchor->erase();
    }
    // Producers now cloned into every kernel that needed them (users first).
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
      if (isRematerializable(&op) && op.use_empty())
        op.erase();
  }
};

} // namespace
