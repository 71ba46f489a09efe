//===- FormKernels.cpp - Group tensor ops into kiln.kernel regions --------===//
//
// This file implements kiln-form-kernels (see Passes.td). Every compute op (a
// linalg op or a tensor op that makes a new tensor) starts as its own kernel; the
// cheap producers it needs (tensor.empty, scalar constants, fills of them, reshape
// and slice views) are cloned into it, so a kernel reads only real tensors: graph
// inputs, weights and other kernels' results. Producers join their consumer's
// kernel by named rules (kiln compile --no-fuse=RULE turns one off):
//
//   epilogue  an elementwise generic that alone reads a reduction's result at the
//             same index (bias, activation, residual add after a Conv or MatMul)
//   pad       a tensor.pad read only by a reduction (Conv or pooling padding)
//   concat    a Concat's insert_slice chain and the producers of its slices
//   reduction row reductions and the elementwise generics around them that read
//             and write each row at its own index (Softmax, LayerNorm)
//   attention the small batched contractions that produce or consume such rows
//             (Q K^T, scale, mask, Softmax, P V in one kernel)
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/fusion/Passes.h"
#include "passes/fusion/Rows.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace kiln {
#define GEN_PASS_DEF_FORMKERNELS
#include "passes/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Ops recomputed inside each kernel that uses them instead of being inputs.
bool isRematerializable(Operation *op) {
  // A reshape or a slice is a view of its source in the kernel that reads it: no
  // copy kernel.
  if (isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp>(op))
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
  // A fill that is itself a graph output or a branch's operand (not only some
  // kernel's init) computes a result: it needs a kernel of its own.
  if (isa<linalg::FillOp, tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp>(op))
    return llvm::any_of(op->getUsers(), [](Operation *user) {
      return isa<func::ReturnOp, kiln::IfOp>(user);
    });
  if (isRematerializable(op) || isa<func::ReturnOp, kiln::KernelOp, kiln::IfOp>(op))
    return false;
  if (isa<arith::ConstantOp>(op)) // tensor constants become weights
    return false;
  // A time loop (a recurrent op's Scan) is one kernel, its body included.
  return isa<linalg::LinalgDialect, tensor::TensorDialect>(op->getDialect()) ||
         isa<scf::ForOp>(op);
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

bool isReshape(Operation *op) {
  return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

/// The value `v` reshapes (through any chain of reshapes), or `v` itself.
Value reshapeSource(Value v) {
  while (isReshape(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
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

/// Rule "reduction" works on rows: a reduction whose reduction loops all trail
/// its n parallel ones reduces each row (the first n loop indices) on its own.
/// Its row rank n, or 0 when it is not such a reduction of one tensor.
int64_t rowRank(linalg::GenericOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInputs() != 1 ||
      !isa<RankedTensorType>(op.getDpsInputOperand(0)->get().getType()))
    return 0;
  auto iters = op.getIteratorTypesArray();
  int64_t n = 0;
  while (n < static_cast<int64_t>(iters.size()) && iters[n] == utils::IteratorType::parallel)
    ++n;
  for (size_t i = n; i < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::reduction)
      return 0;
  return n;
}

/// Loop iterations one row of a row contraction may take: beyond this a tiled
/// contraction of its own is the better kernel.
constexpr int64_t kRowWork = 1 << 17;

/// A contraction that may join a row group (Q K^T and P V around attention's
/// Softmax) once the group's row rank n is known: reduction loops, at least two
/// leading parallel loops.
bool isContractionCandidate(linalg::GenericOp op) {
  auto iters = op.getIteratorTypesArray();
  return op.getNumReductionLoops() > 0 && op->getNumResults() == 1 && iters.size() > 2 &&
         iters[0] == utils::IteratorType::parallel && iters[1] == utils::IteratorType::parallel;
}

/// Rule "reduction", for contractions: a batched contraction computes rows of rank
/// n when its first n loops are parallel and index its output, every
/// operand is indexed by the row's outer loops d0 .. d(n-2) (each row reads its own
/// batch, not a weight shared by all rows), it has outputs beyond the row (else
/// it is a row reduction) and a row's work is small.
bool isRowContraction(linalg::GenericOp op, int64_t n) {
  auto iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (n < 2 || !isContractionCandidate(op) || static_cast<int64_t>(iters.size()) <= n ||
      ShapedType::isDynamicShape(ranges))
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return false;
  if (llvm::none_of(llvm::drop_begin(iters, n),
                    [](utils::IteratorType t) { return t == utils::IteratorType::parallel; }))
    return false;
  // Each output element in one row (rows may be permuted, as where P V writes
  // straight into the [batch, sequence, head, dim] layout).
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (int64_t d = 0; d < n; ++d)
    if (!out.isFunctionOfDim(d))
      return false;
  for (OpOperand *in : op.getDpsInputOperands())
    for (int64_t d = 0; d + 1 < n; ++d)
      if (!op.getMatchingIndexingMap(in).isFunctionOfDim(d))
        return false;
  int64_t work = 1;
  for (int64_t r : llvm::drop_begin(ranges, n))
    work *= r;
  return work <= kRowWork;
}

/// The value `v` is a view of through reshapes that keep its first n dims (a
/// row-major reshape with the same leading n sizes keeps every element in its
/// row); null when one of them does not.
Value throughRowReshapes(Value v, int64_t n) {
  for (Operation *def = v.getDefiningOp(); isReshape(def); def = v.getDefiningOp()) {
    if (!kiln::keepsLeadingDims(cast<ShapedType>(def->getOperand(0).getType()),
                                cast<ShapedType>(v.getType()), n))
      return Value();
    v = def->getOperand(0);
  }
  return v;
}

/// Rule "reduction": `consumer` reads `producer`'s result (through reshapes that
/// keep the rows) row by row: both are generics over the same n leading row
/// loops, the producer writes and the consumer reads at the row's own index.
/// A group of such ops (a Softmax, a LayerNorm: row reductions and the
/// elementwise ops around them) computes each row independently.
bool isRowEdge(linalg::GenericOp producer, linalg::GenericOp consumer, OpOperand &read,
               int64_t n) {
  if (n <= 0 || producer->getNumResults() != 1)
    return false;
  SmallVector<int64_t> a = producer.getStaticLoopRanges(), b = consumer.getStaticLoopRanges();
  if (static_cast<int64_t>(a.size()) < n || static_cast<int64_t>(b.size()) < n ||
      !std::equal(a.begin(), a.begin() + n, b.begin()))
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (producer.getIteratorTypesArray()[i] != utils::IteratorType::parallel ||
        consumer.getIteratorTypesArray()[i] != utils::IteratorType::parallel)
      return false;
  return kiln::leadsWithRows(producer.getMatchingIndexingMap(producer.getDpsInitOperand(0)), n) &&
         kiln::leadsWithRows(consumer.getMatchingIndexingMap(&read), n);
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
    // Per group root: its row rank under the reduction rule (0: none yet) and
    // whether it may take part in that rule (only row-local generics).
    SmallVector<int64_t> rows;
    SmallVector<bool> rowOnly;
    // Per group root: its contractions, which a row group takes only at a row
    // rank they fit (isRowContraction).
    SmallVector<SmallVector<linalg::GenericOp, 1>> contractions;
    auto fitRows = [&](unsigned group, int64_t n) {
      if (!contractions[group].empty() && !enabled("attention"))
        return false;
      return llvm::all_of(contractions[group],
                          [&](linalg::GenericOp c) { return isRowContraction(c, n); });
    };
    std::function<unsigned(unsigned)> find = [&](unsigned i) {
      return parent[i] == i ? i : parent[i] = find(parent[i]);
    };
    auto unite = [&](unsigned a, unsigned b) {
      a = find(a), b = find(b);
      if (a == b)
        return;
      parent[a] = b;
      rowOnly[b] = rowOnly[a] && rowOnly[b];
      rows[b] = rows[b] ? rows[b] : rows[a];
      contractions[b].append(contractions[a]);
    };
    for (Operation *anchor : anchors) {
      unsigned self = parent.size();
      index[anchor] = self;
      parent.push_back(self);
      auto generic = dyn_cast<linalg::GenericOp>(anchor);
      rows.push_back(generic ? rowRank(generic) : 0);
      bool contraction = generic && rows.back() == 0 && isContractionCandidate(generic);
      contractions.emplace_back();
      if (contraction)
        contractions.back().push_back(generic);
      rowOnly.push_back(generic && (generic.getNumReductionLoops() == 0 || rows.back() > 0 ||
                                    contraction));
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
        // (An epilogue is elementwise at its reduction's index: it stays in any
        // row the reduction computes.)
        if (epilogue) {
          unite(it->second, self);
        } else if ((enabled("pad") && isPadProducer(def, anchor)) ||
                   (enabled("concat") && isConcatPart(def, anchor))) {
          unite(it->second, self);
          rowOnly[find(self)] = false;
        }
      }
      // Rule "reduction": join the row-local generic producers (seen through
      // reshapes), all in groups of the same row rank.
      if (enabled("reduction") && generic && rowOnly[find(self)]) {
        for (OpOperand &read : generic->getOpOperands()) {
          Value v = read.get(), base = reshapeSource(v);
          auto producer = base.getDefiningOp<linalg::GenericOp>();
          auto it = producer ? index.find(producer) : index.end();
          if (it == index.end() || !rowOnly[find(it->second)])
            continue;
          // The row rank: this group's, else the producer group's (at first the
          // producer's own).
          int64_t n = rows[find(self)] ? rows[find(self)] : rows[find(it->second)];
          if (n == 0 || (rows[find(it->second)] && rows[find(it->second)] != n) ||
              !fitRows(find(self), n) || !fitRows(find(it->second), n) ||
              throughRowReshapes(v, n) != base || !isRowEdge(producer, generic, read, n))
            continue;
          // Every reader of the producer must be able to follow it in (or it
          // would be needed outside the group before the kernel).
          bool allRowReaders = true;
          std::function<void(Value)> readers = [&](Value r) {
            for (Operation *user : r.getUsers()) {
              if (isReshape(user))
                readers(user->getResult(0));
              else if (!isa<linalg::GenericOp>(user))
                allRowReaders = false;
            }
          };
          readers(base);
          if (!allRowReaders)
            continue;
          unite(it->second, self);
          rows[find(self)] = n;
        }
      }
    }
    llvm::MapVector<unsigned, SmallVector<Operation *>> byRoot;
    for (Operation *anchor : anchors)
      byRoot[find(index[anchor])].push_back(anchor);
    SmallVector<SmallVector<Operation *>> groups;
    for (auto &entry : byRoot)
      groups.push_back(std::move(entry.second));
    // A group stands where its last member was: every other reader of a
    // member's result (seen through reshapes) must come after that. A group that
    // breaks this (a rule joined ops around an unrelated reader) falls apart into
    // one kernel per op.
    SmallVector<SmallVector<Operation *>> valid;
    for (SmallVector<Operation *> &members : groups) {
      llvm::SmallPtrSet<Operation *, 8> in(members.begin(), members.end());
      Operation *last = members.back();
      std::function<bool(Value)> readEarly = [&](Value v) {
        return llvm::any_of(v.getUsers(), [&](Operation *user) {
          if (in.contains(user))
            return false;
          if (isReshape(user) && !isKernelAnchor(user))
            return llvm::any_of(user->getResults(), readEarly);
          return user->isBeforeInBlock(last);
        });
      };
      bool ok = llvm::none_of(members, [&](Operation *op) {
        return llvm::any_of(op->getResults(), readEarly);
      });
      if (ok) {
        valid.push_back(std::move(members));
        continue;
      }
      for (Operation *op : members)
        valid.push_back({op});
    }
    groups = std::move(valid);
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
      // Results read outside the group (directly or through the reshapes cloned
      // into other kernels) leave the kernel.
      std::function<bool(Value)> readOutside = [&](Value v) {
        return llvm::any_of(v.getUsers(), [&](Operation *user) {
          if (inGroup.contains(user))
            return false;
          if (isRematerializable(user) && remat.contains(user))
            return llvm::any_of(user->getResults(), readOutside);
          return true;
        });
      };
      SmallVector<Value> results;
      for (Operation *op : members)
        for (Value r : op->getResults())
          if (readOutside(r))
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
      // Producers and members in program order (a reshape of a member's result
      // after that member). A Concat's slice is inserted as soon as it is
      // computed, so that the next producer's output can be placed in the result
      // (empty-tensor elimination needs the destination defined before it).
      SmallVector<Operation *> pending;
      auto ready = [&](Operation *op) {
        return llvm::all_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return !def || (!inGroup.contains(def) && !remat.contains(def)) ||
                 mapping.contains(v);
        });
      };
      // Producers that need no member (empties, constants, fills) first, the
      // rest (reshapes of members' results) in program order with the members.
      SmallVector<Operation *> ordered;
      for (Operation *op : remat) {
        if (ready(op))
          inner.clone(*op, mapping);
        else
          ordered.push_back(op);
      }
      llvm::append_range(ordered, members);
      llvm::sort(ordered, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
      auto isInsert = [&](Operation *op) {
        return isa<tensor::InsertSliceOp>(op) && inGroup.contains(op);
      };
      for (Operation *op : ordered)
        if (isInsert(op))
          pending.push_back(op);
      auto insertReady = [&] {
        for (bool progress = true; progress;) {
          progress = false;
          for (Operation *&p : pending)
            if (p && ready(p)) {
              inner.clone(*p, mapping);
              p = nullptr;
              progress = true;
            }
        }
      };
      insertReady(); // slices of the kernel's inputs
      for (Operation *op : ordered) {
        if (isInsert(op))
          continue;
        inner.clone(*op, mapping);
        insertReady();
      }
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
          for (size_t u = 1; u < uses.size(); ++u) {
            OpOperand *use = uses[u];
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
      // Users first: a reshape between two members goes once the later one has.
      for (Operation *op : llvm::reverse(ordered)) {
        if (inGroup.contains(op))
          op->erase();
        else if (op->use_empty())
          op->erase();
      }
    }
    // Producers now cloned into every kernel that needed them (users first).
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
      if (isRematerializable(&op) && op.use_empty())
        op.erase();
  }
};

} // namespace
