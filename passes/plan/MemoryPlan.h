//===- MemoryPlan.h - Liveness of arena slices -----------------*- C++ -*-===//
//
// Shared by kiln-plan-memory, kiln-verify-memory-plan and the compile report: the
// live intervals of the arena's tensors over the plan's launch order (a single
// stream: program order is the happens-before order).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PLAN_MEMORYPLAN_H
#define KILN_PASSES_PLAN_MEMORYPLAN_H

#include "dialects/kiln/KilnDialect.h"

namespace kiln {

struct SliceInterval {
  mutable SliceOp slice; // op accessors are not const
  int64_t first; // index of the first launch that touches it
  int64_t last;  // index of the last one
};

/// Live intervals of the tensors in `plan`'s slices: one per slice, in slice order
/// (slices no launch touches get an empty interval, first > last), then one more for
/// every later tensor a slice holds. Canonicalization merges identical slices, so in
/// a finished plan one slice may hold several tensors in turn: a launch or copy that
/// writes a slice without reading it starts a new tensor there (kernels never read
/// what their outputs held). kiln-plan-memory runs before that merging, when every
/// slice holds one tensor.
std::vector<SliceInterval> sliceIntervals(PlanOp plan);

/// The most bytes live at once (the lower bound of any arena).
int64_t liveLowerBound(const std::vector<SliceInterval> &intervals);

} // namespace kiln

#endif // KILN_PASSES_PLAN_MEMORYPLAN_H
