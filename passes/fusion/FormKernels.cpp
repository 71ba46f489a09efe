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
//   concat    a Concat's insert_slice chain and the producers of its slices
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

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

/// Rule "concat": a Concat's tensor.insert_slice chain and the producers of the
/// slices it inserts (each read only there) form one kernel; bufferized, every
/// producer writes its slice of the result in place (no copies).
bool isConcatPart(Operation *producer, Operation *consumer) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(consumer);
  return insert && producer->getNumResults() == 1 && producer->getResult(0).hasOneUse() &&
         (insert.getSource() == producer->getResult(0) ||
          (insert.getDest() == producer->getResult(0) && isa<tensor::InsertSliceOp>(producer)));
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

    // Groups of anchors (union-find), in program order within each: a producer
    // and its consumer share a group when a rule joins them. Every producer a
    // rule joins has its consumer as its only user, so only a group's last
    // member is read outside it and the kernel can stand where that member was.
    DenseMap<Operation *, unsigned> index;
    SmallVector<unsigned> parent;
    std::function<unsigned(unsigned)> find = [&](unsigned i) {
      return parent[i] == i ? i : parent[i] = find(parent[i]);
    };
    for (Operation *anchor : anchors) {
      unsigned self = parent.size();
      index[anchor] = self;
      parent.push_back(self);
      // An epilogue follows one reduction (the one it is applied to); the other
      // rules join every producer that fits.
      bool hasEpilogueProducer = false;
      for (Value v : anchor->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto it = def ? index.find(def) : index.end();
        if (it == index.end())
          continue;
        bool epilogue = !hasEpilogueProducer && enabled("epilogue") && isEpilogue(def, anchor);
        hasEpilogueProducer |= epilogue;
        if (epilogue || (enabled("pad") && isPadProducer(def, anchor)) ||
            (enabled("concat") && isConcatPart(def, anchor)))
          parent[find(it->second)] = find(self);
      }
    }
    llvm::MapVector<unsigned, SmallVector<Operation *>> byRoot;
    for (Operation *anchor : anchors)
      byRoot[find(index[anchor])].push_back(anchor);
    SmallVector<SmallVector<Operation *>> groups;
    for (auto &entry : byRoot)
      groups.push_back(std::move(entry.second));
    // Numbered in the order the kernels run (by their last member).
    llvm::sort(groups, [&](const SmallVector<Operation *> &a, const SmallVector<Operation *> &b) {
      return index[a.back()] < index[b.back()];
    });

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
      // A Concat's slice is inserted as soon as it is computed, so that the next
      // producer's output can be placed in the result (empty-tensor elimination
      // needs the destination defined before the producer).
      SmallVector<Operation *> pending;
      for (Operation *op : members)
        if (isa<tensor::InsertSliceOp>(op))
          pending.push_back(op);
      auto ready = [&](Operation *op) {
        return llvm::all_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return !def || !inGroup.contains(def) || mapping.contains(v);
        });
      };
      for (Operation *op : members) {
        if (isa<tensor::InsertSliceOp>(op))
          continue;
        inner.clone(*op, mapping);
        for (bool progress = true; progress;) {
          progress = false;
          for (Operation *&p : pending)
            if (p && ready(p)) {
              inner.clone(*p, mapping);
              p = nullptr;
              progress = true;
            }
        }
      }
      for (Operation *p : pending) // (every member is cloned by now; kept for safety)
        if (p)
          inner.clone(*p, mapping);
      // One tensor.empty (and fill of it) per use: a shared one would make
      // bufferization copy where each user could own its buffer.
      auto splitUses = [&](auto kind) {
        using OpTy = decltype(kind);
        for (auto op : llvm::to_vector(body->getOps<OpTy>())) {
          if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()))
            continue;
          SmallVector<OpOperand *> uses;
          for (OpOperand &use : op->getResult(0).getUses())
            uses.push_back(&use);
          for (OpOperand *use : llvm::drop_begin(uses)) {
            OpBuilder at(use->getOwner());
            use->set(at.clone(*op)->getResult(0));
          }
        }
      };
      splitUses(linalg::FillOp());
      splitUses(tensor::EmptyOp());
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
