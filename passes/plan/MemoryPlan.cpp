//===- MemoryPlan.cpp - Memory planning and its verifier ------------------===//
//
// This file implements kiln-plan-memory and kiln-verify-memory-plan (see
// Passes.td). Planning today gives every slice its own 64-byte aligned range (no
// reuse yet) and lays the weights out the same way; it records the arena size,
// the live lower bound and the naive sum so reports can compare. The verifier
// checks that no two slices that can be live together overlap, whatever planner
// produced the offsets.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/MemoryPlan.h"
#include "passes/Passes.h"

#include <algorithm>

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#define GEN_PASS_DEF_VERIFYMEMORYPLAN
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

std::vector<SliceInterval> sliceIntervals(PlanOp plan) {
  DenseMap<Value, size_t> current; // slice -> the interval of the tensor it holds now
  std::vector<SliceInterval> intervals;
  plan.getBody().walk([&](SliceOp s) {
    current[s.getBuffer()] = intervals.size();
    intervals.push_back({s, INT64_MAX, -1});
  });
  int64_t step = 0;
  auto touch = [&](Value v, bool startsTensor) {
    auto it = current.find(v);
    if (it == current.end())
      return; // inputs, outputs and weights live outside the arena
    if (startsTensor && intervals[it->second].last >= 0) {
      SliceOp slice = intervals[it->second].slice;
      it->second = intervals.size();
      intervals.push_back({slice, step, step});
      return;
    }
    SliceInterval &iv = intervals[it->second];
    iv.first = std::min(iv.first, step);
    iv.last = std::max(iv.last, step);
  };
  for (Operation &op : plan.getBody().front()) {
    if (auto l = dyn_cast<LaunchOp>(op)) {
      auto inputs = l.getBuffers().take_front(static_cast<size_t>(l.getNumInputs()));
      for (Value v : inputs)
        touch(v, false);
      for (Value v : l.getBuffers().drop_front(inputs.size()))
        touch(v, !llvm::is_contained(inputs, v));
    } else if (auto c = dyn_cast<CopyOp>(op)) {
      touch(c.getSource(), false);
      touch(c.getTarget(), c.getTarget() != c.getSource());
    } else {
      continue;
    }
    ++step;
  }
  return intervals;
}

int64_t liveLowerBound(const std::vector<SliceInterval> &intervals) {
  int64_t steps = 0;
  for (const SliceInterval &iv : intervals)
    steps = std::max(steps, iv.last + 1);
  int64_t best = 0;
  for (int64_t t = 0; t < steps; ++t) {
    int64_t live = 0;
    for (const SliceInterval &iv : intervals)
      if (iv.first <= t && t <= iv.last)
        live += static_cast<int64_t>(iv.slice.getSize());
    best = std::max(best, live);
  }
  return best;
}

} // namespace kiln

namespace {

constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

int64_t weightBytes(kiln::WeightOp w) {
  auto type = cast<MemRefType>(w.getBuffer().getType());
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

struct PlanMemoryPass : kiln::impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    getOperation().walk([&](kiln::PlanOp plan) {
      Builder b(plan.getContext());
      // Greedy by size: the largest slices first, each at the lowest 64-byte
      // aligned offset that overlaps no placed slice whose life meets its own.
      std::vector<kiln::SliceInterval> ivs = kiln::sliceIntervals(plan);
      std::vector<size_t> order(ivs.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ivs[a].slice.getSize() > ivs[b].slice.getSize();
      });
      std::vector<std::pair<int64_t, int64_t>> placed(ivs.size(), {-1, 0});
      int64_t arena = 0, naive = 0;
      for (size_t i : order) {
        int64_t size = static_cast<int64_t>(ivs[i].slice.getSize());
        naive += size;
        // Ranges taken by slices live at the same time, sorted by offset.
        std::vector<std::pair<int64_t, int64_t>> taken;
        for (size_t j = 0; j < ivs.size(); ++j)
          if (placed[j].first >= 0 && ivs[i].first <= ivs[j].last &&
              ivs[j].first <= ivs[i].last)
            taken.push_back(placed[j]);
        std::sort(taken.begin(), taken.end());
        int64_t offset = 0;
        for (auto [takenOffset, takenSize] : taken) {
          if (offset + size <= takenOffset)
            break;
          offset = std::max(offset, alignUp(takenOffset + takenSize));
        }
        placed[i] = {offset, size};
        ivs[i].slice.setOffset(offset);
        arena = std::max(arena, alignUp(offset + size));
      }
      int64_t weights = 0;
      plan.getBody().walk([&](kiln::WeightOp w) {
        w.setOffset(weights);
        weights = alignUp(weights + weightBytes(w));
      });
      plan.setArenaBytes(arena);
      plan.setWeightBytes(weights);
      plan.setNaiveBytes(naive);
      plan.setLowerBoundBytes(kiln::liveLowerBound(kiln::sliceIntervals(plan)));
    });
  }
};

struct VerifyMemoryPlanPass
    : kiln::impl::VerifyMemoryPlanBase<VerifyMemoryPlanPass> {
  void runOnOperation() override {
    getOperation().walk([&](kiln::PlanOp plan) {
      int64_t arena = static_cast<int64_t>(plan.getArenaBytes());
      std::vector<kiln::SliceInterval> ivs = kiln::sliceIntervals(plan);
      for (const kiln::SliceInterval &iv : ivs) {
        int64_t off = static_cast<int64_t>(iv.slice.getOffset());
        int64_t size = static_cast<int64_t>(iv.slice.getSize());
        if (off < 0 || off + size > arena) {
          iv.slice.emitError() << "slice [" << off << ", " << off + size
                               << ") lies outside the arena of " << arena << " bytes";
          return signalPassFailure();
        }
      }
      for (size_t i = 0; i < ivs.size(); ++i)
        for (size_t j = i + 1; j < ivs.size(); ++j) {
          const auto &a = ivs[i], &c = ivs[j];
          bool liveTogether = a.first <= c.last && c.first <= a.last;
          int64_t ao = static_cast<int64_t>(a.slice.getOffset());
          int64_t co = static_cast<int64_t>(c.slice.getOffset());
          bool overlap = ao < co + static_cast<int64_t>(c.slice.getSize()) &&
                         co < ao + static_cast<int64_t>(a.slice.getSize());
          if (liveTogether && overlap) {
            c.slice.emitError() << "overlaps a slice that is live at the same time (offset "
                                << ao << ")";
            return signalPassFailure();
          }
        }
    });
  }
};

} // namespace
