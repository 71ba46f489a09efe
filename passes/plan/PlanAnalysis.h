//===- PlanAnalysis.h - Happens-before and liveness of a plan --*- C++ -*-===//
//
// What scheduling, memory planning, the plan verifier and the compile report
// share about a kiln.plan:
//   - HappensBefore: the plan's launches and copies ("nodes") in plan order, each
//     with a vector clock over the streams. Stream order and record/wait events
//     make the partial order; a run starts on stream 0 (every other stream must
//     wait for it before its first node) and ends there (every stream must be
//     joined back into stream 0).
//   - SliceTensor: the tensors the arena's slices hold and the nodes that use them.
//     Two tensors may share bytes only when every use of one happens before every
//     use of the other, or when one launch reads the first for the last time and
//     writes the second in place (`in_place`, the very same bytes).
//   - planArena: the greedy placement kiln-plan-memory commits and
//     kiln-assign-streams uses to price a schedule.
//   - iterations: how often a kernel's linalg op runs its body (the cost model's
//     and the report's flops).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PLAN_PLANANALYSIS_H
#define KILN_PASSES_PLAN_PLANANALYSIS_H

#include "dialects/kiln/KilnDialect.h"

#include <string>
#include <vector>

namespace kiln {

/// Iterations of `op`'s loops per run of its kernel: its static loop ranges times
/// the trip counts of the time loops (scf.for) around it.
int64_t iterations(mlir::Operation *op);

/// The arithmetic of everything under `root` (a kernel): the ops of each linalg
/// body (no yield, index or constant: a fill computes nothing) times its
/// iterations. kiln-build-plan sets it on each launch (`flops`); the cost model and
/// the report read it there.
int64_t countFlops(mlir::Operation *root);

/// The stream a plan op runs on (launch, copy, record, wait); -1 for others.
int64_t streamOf(mlir::Operation *op);

class HappensBefore {
public:
  explicit HappensBefore(PlanOp plan);

  /// Launches and copies in plan order.
  llvm::ArrayRef<mlir::Operation *> getNodes() const { return nodes; }
  size_t indexOf(mlir::Operation *node) const { return index.lookup(node); }
  int64_t getNumStreams() const { return numStreams; }

  /// Whether node `a` happens before node `b` (never for a == b).
  bool before(size_t a, size_t b) const {
    return a != b && clocks[b][streams[a]] >= clocks[a][streams[a]];
  }
  /// Whether `a` and `b` are ordered one way or the other.
  bool ordered(size_t a, size_t b) const { return before(a, b) || before(b, a); }

  /// The first problem with the plan's streams (an op without a stream, a stream
  /// that does not wait for the run's start or is not joined before its end),
  /// with the op to blame; empty when there is none.
  const std::string &getProblem() const { return problem; }
  mlir::Operation *getProblemOp() const { return problemOp; }

private:
  std::vector<mlir::Operation *> nodes;
  llvm::DenseMap<mlir::Operation *, size_t> index;
  std::vector<int64_t> streams;
  std::vector<std::vector<int32_t>> clocks;
  int64_t numStreams = 1;
  std::string problem;
  mlir::Operation *problemOp = nullptr;
};

/// How a node touches a buffer.
struct Access {
  mlir::Value buffer;
  bool writes;
};

/// The buffers node `op` (a launch or copy) reads and writes, scratch and guards
/// included (the host reads a guard before the node runs).
llvm::SmallVector<Access> accessesOf(mlir::Operation *op);

/// Whether nodes `a` and `b` never both run: they are in different branches of a
/// kiln.if (a guard both read, with different values).
bool exclusive(mlir::Operation *a, mlir::Operation *b);

/// The guards of a launch or copy with the value each needs.
llvm::SmallVector<std::pair<mlir::Value, bool>> guardsOf(mlir::Operation *op);

struct SliceTensor {
  mutable SliceOp slice; // op accessors are not const
  /// The nodes that use it, in plan order; the first one writes it.
  llvm::SmallVector<size_t> uses;
  int64_t size() const { return static_cast<int64_t>(slice.getSize()); }
};

/// The tensors the arena's slices hold, in slice order (slices no node touches
/// give a tensor without uses), then one for every later tensor a slice holds:
/// canonicalization merges identical slices, so in a finished plan one slice may
/// hold several tensors in turn, each started by a node that writes the slice
/// without reading it (kernels never read what their outputs held).
std::vector<SliceTensor> sliceTensors(PlanOp plan, const HappensBefore &hb);

/// Whether `a` and `b` may share bytes: every use of one happens before every use
/// of the other. `inPlace`: also when the only unordered pair is one launch that
/// reads one and writes the other in place (then only at the same offset).
bool mayShare(const SliceTensor &a, const SliceTensor &b, const HappensBefore &hb,
              bool *inPlace = nullptr);

/// A lower bound of any arena for the plan: the most bytes of tensors that are
/// all live around one node (written at or before it, used at or after it).
int64_t liveLowerBound(const std::vector<SliceTensor> &tensors, const HappensBefore &hb);

struct ArenaPlan {
  int64_t arenaBytes = 0, lowerBoundBytes = 0, naiveBytes = 0;
};

/// Places the plan's slices (greedy, largest first, lowest 64-byte aligned offset
/// that no tensor that may not share with it overlaps); with `commit`, sets the
/// slices' offsets. `inPlace` false: launches' `in_place` marks are ignored (for
/// comparison).
ArenaPlan planArena(PlanOp plan, const HappensBefore &hb, bool commit, bool inPlace = true);

} // namespace kiln

#endif // KILN_PASSES_PLAN_PLANANALYSIS_H
