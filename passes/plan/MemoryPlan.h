//===- MemoryPlan.h - Liveness of arena slices -----------------*- C++ -*-===//
//
// Shared by kiln-plan-memory and kiln-verify-memory-plan: the live interval of
// every arena slice over the plan's launch order (a single stream: program order
// is the happens-before order).
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

/// Live intervals of every slice in `plan`, in slice order. Slices no launch
/// touches get an empty interval (first > last).
std::vector<SliceInterval> sliceIntervals(PlanOp plan);

/// The most bytes live at once (the lower bound of any arena).
int64_t liveLowerBound(const std::vector<SliceInterval> &intervals);

} // namespace kiln

#endif // KILN_PASSES_PLAN_MEMORYPLAN_H
