//===- PlanMemory.cpp - Place the arena's slices and the weights ----------===//
//
// This file implements kiln-plan-memory (see Passes.td): liveness over the
// schedule's happens-before order (PlanAnalysis.h), slices placed greedily with
// reuse and in-place updates, weights laid out one after another. It records the
// arena size, the live lower bound and the naive sum so reports can compare.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/Passes.h"
#include "passes/plan/PlanAnalysis.h"

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

struct PlanMemoryPass : kiln::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](kiln::PlanOp plan) {
      kiln::HappensBefore hb(plan);
      if (!hb.getProblem().empty()) {
        hb.getProblemOp()->emitError() << hb.getProblem();
        return WalkResult::interrupt();
      }
      kiln::ArenaPlan arena = kiln::planArena(plan, hb, /*commit=*/true, inPlace);
      int64_t weights = 0;
      plan.getBody().walk([&](kiln::WeightOp w) {
        w.setOffset(weights);
        weights = alignUp(weights + kiln::bufferBytes(cast<MemRefType>(w.getType())));
      });
      plan.setArenaBytes(arena.arenaBytes);
      plan.setWeightBytes(weights);
      plan.setNaiveBytes(arena.naiveBytes);
      plan.setLowerBoundBytes(arena.lowerBoundBytes);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
