//===- FormKernels.cpp - Group tensor ops into kiln.kernel regions --------===//
//
// This file implements kiln-form-kernels (see Passes.td). Today every compute op
// (a linalg op or a tensor op that makes a new tensor) is its own kernel; the
// cheap producers it needs (tensor.empty, scalar constants, fills of them) are
// cloned into it, so a kernel reads only real tensors: graph inputs, weights and
// other kernels' results. Producers join their consumer's kernel by named rules
// (kiln compile --no-fuse=RULE turns one off):
//
//   epilogue  an elementwise generic that alone reads a reduction's result at the
//             same index (bias, activation, residual add after a Conv or MatMul)
//   pad       a tensor.pad read only by a reduction (Conv or pooling padding)
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
  // A reshape is a view of its source in the kernel that reads it: no copy kernel.
  if (isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
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
  if (isa<linalg::FillOp, tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
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

/// A contraction or reduction: a linalg op with reduction loops and one result.
bool isReduction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0 && op->getNumResults() == 1;
}

/// Rule "epilogue": `consumer` is an elementwise generic over the shape of
/// `producer`'s only result, which it alone reads, at the same index; it then runs
/// where the reduction stores (bias, activation, residual add).
bool isEpilogue(Operation *producer, Operation *consumer) {
  auto generic = dyn_cast<linalg::GenericOp>(consumer);
  if (!isReduction(producer) || !generic || generic.getNumReductionLoops() != 0 ||
      !producer->getResult(0).hasOneUse())
    return false;
  auto type = cast<RankedTensorType>(producer->getResult(0).getType());
  if (generic.getStaticLoopRanges() != SmallVector<int64_t>(type.getShape()))
    return false;
  for (OpOperand *in : generic.getDpsInputOperands())
    if (in->get() == producer->getResult(0))
      return generic.getMatchingIndexingMap(in).isIdentity();
  return false;
}

/// Rule "pad": a tensor.pad read only by a reduction (a convolution or pooling
/// window) joins its kernel; the cuda mapping reads the unpadded source with
/// bounds checks instead of materializing the padded tensor.
bool isPadProducer(Operation *producer, Operation *consumer) {
  return isa<tensor::PadOp>(producer) && producer->getResult(0).hasOneUse() &&
         isReduction(consumer);
}

struct FormKernelsPass : kiln::impl::FormKernelsBase<FormKernelsPass> {
  using FormKernelsBase::FormKernelsBase;

  bool enabled(StringRef rule) const {
    return !llvm::is_contained(disabledRules, rule.str()) &&
           !llvm::is_contained(disabledRules, std::string("all"));
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> anchors;
    for (Operation &op : func.getBody().getOps())
      if (isKernelAnchor(&op))
        anchors.push_back(&op);
    for (Operation *anchor : anchors)
      if (!llvm::all_of(anchor->getResultTypes(),
                        [](Type t) { return isa<RankedTensorType>(t); })) {
        anchor->emitError() << "cannot form a kernel around '" << anchor->getName()
                            << "': it does not produce tensors";
        return signalPassFailure();
      }

    // Groups of anchors, in program order within each; a producer joins its
    // consumer's group by the rules above.
    DenseMap<Operation *, unsigned> groupOf;
    SmallVector<SmallVector<Operation *>> groups;
    for (Operation *anchor : anchors) {
      std::optional<unsigned> join;
      for (Value v : anchor->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto it = def ? groupOf.find(def) : groupOf.end();
        if (it == groupOf.end())
          continue;
        if ((enabled("epilogue") && isEpilogue(def, anchor)) ||
            (enabled("pad") && isPadProducer(def, anchor))) {
          join = it->second;
          break;
        }
      }
      if (!join) {
        join = groups.size();
        groups.emplace_back();
      }
      groups[*join].push_back(anchor);
      groupOf[anchor] = *join;
    }

    for (auto [counter, members] : llvm::enumerate(groups)) {
      llvm::SmallPtrSet<Operation *, 4> inGroup(members.begin(), members.end());
      llvm::SetVector<Operation *> remat;
      llvm::SetVector<Value> collected;
      for (Operation *op : members)
        collect(op, remat, collected);
      SmallVector<Value> inputs;
      for (Value v : collected)
        if (!v.getDefiningOp() || !inGroup.contains(v.getDefiningOp()))
          inputs.push_back(v);
      // Results read outside the group leave the kernel.
      SmallVector<Value> results;
      for (Operation *op : members)
        for (Value r : op->getResults())
          if (llvm::any_of(r.getUsers(),
                           [&](Operation *user) { return !inGroup.contains(user); }))
            results.push_back(r);

      Operation *last = members.back();
      OpBuilder b(last);
      auto kernel = b.create<kiln::KernelOp>(
          last->getLoc(), ValueRange(results).getTypes(),
          b.getStringAttr("k" + std::to_string(counter)), inputs);
      Block *body = new Block();
      kernel.getBody().push_back(body);
      IRMapping mapping;
      for (Value in : inputs)
        mapping.map(in, body->addArgument(in.getType(), in.getLoc()));
      OpBuilder inner = OpBuilder::atBlockEnd(body);
      for (Operation *op : remat)
        inner.clone(*op, mapping);
      for (Operation *op : members)
        inner.clone(*op, mapping);
      SmallVector<Value> yielded;
      for (Value r : results)
        yielded.push_back(mapping.lookup(r));
      inner.create<kiln::YieldOp>(last->getLoc(), yielded);
      for (auto [r, k] : llvm::zip(results, kernel.getResults()))
        r.replaceAllUsesWith(k);
      for (Operation *op : llvm::reverse(members))
        op->erase();
    }
    // Producers now cloned into every kernel that needed them (users first).
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
      if (isRematerializable(&op) && op.use_empty())
        op.erase();
  }
};

} // namespace
