//===- PlanAnalysis.cpp - Happens-before and liveness of a plan -----------===//
//
// This file implements the plan analyses (PlanAnalysis.h).
//
//===----------------------------------------------------------------------===//
#include "passes/plan/PlanAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

int64_t iterations(Operation *op) {
  int64_t trips = 1;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    for (int64_t r : linalgOp.getStaticLoopRanges())
      trips *= ShapedType::isDynamic(r) ? 1 : r;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (std::optional<int64_t> n =
            constantTripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      trips *= *n;
  return trips;
}

int64_t countFlops(Operation *root) {
  int64_t total = 0;
  root->walk([&](linalg::LinalgOp op) {
    int64_t ops = 0;
    for (Region &region : op->getRegions())
      region.walk([&](Operation *inner) {
        if (!isa<linalg::YieldOp, linalg::IndexOp, arith::ConstantOp>(inner))
          ++ops;
      });
    total += iterations(op) * ops;
  });
  return total;
}

int64_t streamOf(Operation *op) {
  if (auto l = dyn_cast<LaunchOp>(op))
    return l.getStream();
  if (auto c = dyn_cast<CopyOp>(op))
    return c.getStream();
  if (auto r = dyn_cast<RecordOp>(op))
    return r.getStream();
  if (auto w = dyn_cast<WaitOp>(op))
    return w.getStream();
  return -1;
}

HappensBefore::HappensBefore(PlanOp plan) {
  Block &body = plan.getBody().front();
  for (Operation &op : body)
    if (isa<LaunchOp, CopyOp, RecordOp, WaitOp>(op))
      numStreams = std::max(numStreams, streamOf(&op) + 1);
  auto fail = [&](Operation *op, const std::string &message) {
    if (problem.empty()) {
      problem = message;
      problemOp = op;
    }
  };
  // Vector clocks: now[s] is what stream s has seen of every stream; the run's
  // start is tick 1 of stream 0.
  std::vector<std::vector<int32_t>> now(numStreams, std::vector<int32_t>(numStreams, 0));
  now[0][0] = 1;
  DenseMap<int64_t, std::vector<int32_t>> events;
  std::vector<bool> used(numStreams, false);
  for (Operation &op : body) {
    if (!isa<LaunchOp, CopyOp, RecordOp, WaitOp>(op))
      continue;
    int64_t s = streamOf(&op);
    if (s < 0) {
      fail(&op, "has no stream (run kiln-assign-streams first)");
      continue;
    }
    if (auto r = dyn_cast<RecordOp>(op)) {
      events[r.getEvent()] = now[s];
      continue;
    }
    if (auto w = dyn_cast<WaitOp>(op)) {
      auto it = events.find(w.getEvent());
      if (it == events.end())
        continue; // the op verifier reports it
      for (int64_t t = 0; t < numStreams; ++t)
        now[s][t] = std::max(now[s][t], it->second[t]);
      continue;
    }
    if (!used[s] && now[s][0] < 1)
      fail(&op, "runs on stream " + std::to_string(s) +
                    ", which does not wait for the run's start on stream 0");
    used[s] = true;
    ++now[s][s];
    index[&op] = nodes.size();
    nodes.push_back(&op);
    streams.push_back(s);
    clocks.push_back(now[s]);
  }
  for (int64_t s = 1; s < numStreams; ++s)
    if (now[0][s] < now[s][s]) {
      Operation *last = nullptr;
      for (size_t i = 0; i < nodes.size(); ++i)
        if (streams[i] == s)
          last = nodes[i];
      fail(last ? last : plan.getOperation(),
           "is the last work of stream " + std::to_string(s) +
               ", which is not joined into stream 0 before the run ends");
    }
}

SmallVector<Access> accessesOf(Operation *op) {
  SmallVector<Access> accesses;
  if (auto l = dyn_cast<LaunchOp>(op)) {
    for (Value v : l.getReadBuffers())
      accesses.push_back({v, false});
    for (Value v : l.getWrittenBuffers())
      accesses.push_back({v, true});
    if (Value scratch = l.getScratch())
      accesses.push_back({scratch, true});
  } else if (auto c = dyn_cast<CopyOp>(op)) {
    accesses.push_back({c.getSource(), false});
    accesses.push_back({c.getTarget(), true});
  }
  for (auto [guard, value] : guardsOf(op))
    accesses.push_back({guard, false});
  return accesses;
}

SmallVector<std::pair<Value, bool>> guardsOf(Operation *op) {
  SmallVector<std::pair<Value, bool>> guards;
  auto add = [&](ValueRange buffers, std::optional<ArrayRef<bool>> values) {
    if (values)
      for (auto [g, v] : llvm::zip(buffers, *values))
        guards.push_back({g, v});
  };
  if (auto l = dyn_cast<LaunchOp>(op))
    add(l.getGuards(), l.getGuardValues());
  else if (auto c = dyn_cast<CopyOp>(op))
    add(c.getGuards(), c.getGuardValues());
  return guards;
}

bool exclusive(Operation *a, Operation *b) {
  SmallVector<std::pair<Value, bool>> ga = guardsOf(a), gb = guardsOf(b);
  return llvm::any_of(ga, [&](const std::pair<Value, bool> &x) {
    return llvm::any_of(gb, [&](const std::pair<Value, bool> &y) {
      return x.first == y.first && x.second != y.second;
    });
  });
}

std::vector<SliceTensor> sliceTensors(PlanOp plan, const HappensBefore &hb) {
  DenseMap<Value, size_t> current; // slice -> the tensor it holds now
  std::vector<SliceTensor> tensors;
  plan.getBody().walk([&](SliceOp s) {
    current[s.getBuffer()] = tensors.size();
    tensors.push_back({s, {}});
  });
  ArrayRef<Operation *> nodes = hb.getNodes();
  for (size_t n = 0; n < nodes.size(); ++n) {
    SmallVector<Access> accesses = accessesOf(nodes[n]);
    bool guarded = !guardsOf(nodes[n]).empty();
    for (const Access &a : accesses) {
      auto it = current.find(a.buffer);
      if (it == current.end())
        continue; // inputs, outputs and weights live outside the arena
      bool alsoRead = llvm::any_of(accesses, [&](const Access &b) {
        return b.buffer == a.buffer && !b.writes;
      });
      SliceTensor *t = &tensors[it->second];
      // A write starts a new tensor, but where no earlier use may have run with
      // it (the other branch of an If writing the same result): then the slice
      // holds what either branch wrote, one tensor.
      bool starts = a.writes && !alsoRead && !t->uses.empty() && t->uses.back() != n;
      if (starts && guarded &&
          llvm::all_of(t->uses, [&](size_t u) { return exclusive(nodes[u], nodes[n]); }))
        starts = false;
      if (starts) {
        it->second = tensors.size();
        tensors.push_back({t->slice, {}});
        t = &tensors.back();
      }
      if (t->uses.empty() || t->uses.back() != n)
        t->uses.push_back(n);
    }
  }
  return tensors;
}

namespace {

/// Whether every use of `a` happens before every use of `b`, but for `n`, a
/// launch that uses both, when `n` reads `a` last and may write `b` in place.
bool allBefore(const SliceTensor &a, const SliceTensor &b, const HappensBefore &hb,
               bool &inPlace) {
  inPlace = false;
  for (size_t x : a.uses)
    for (size_t y : b.uses) {
      if (hb.before(x, y))
        continue;
      if (x != y || y != b.uses.front() || x != a.uses.back())
        return false;
      auto l = dyn_cast<LaunchOp>(hb.getNodes()[x]);
      std::optional<ArrayRef<int64_t>> partners = l ? l.getInPlace() : std::nullopt;
      if (!partners)
        return false;
      bool found = false;
      auto written = l.getWrittenBuffers();
      auto read = l.getReadBuffers();
      for (auto [k, i] : llvm::enumerate(*partners))
        found |= i >= 0 && written[k] == b.slice.getBuffer() &&
                 read[i] == a.slice.getBuffer() &&
                 llvm::count(l.getBuffers(), a.slice.getBuffer()) == 1 &&
                 a.size() == b.size();
      if (!found)
        return false;
      inPlace = true;
    }
  return true;
}

} // namespace

bool mayShare(const SliceTensor &a, const SliceTensor &b, const HappensBefore &hb,
              bool *inPlace) {
  bool viaInPlace = false;
  if (a.uses.empty() || b.uses.empty())
    return true;
  bool ok = allBefore(a, b, hb, viaInPlace) || allBefore(b, a, hb, viaInPlace);
  if (inPlace)
    *inPlace = ok && viaInPlace;
  return ok;
}

int64_t liveLowerBound(const std::vector<SliceTensor> &tensors, const HappensBefore &hb) {
  // Tensors that pairwise may not share bytes need that many bytes together: the
  // bound is the heaviest such set found greedily among the tensors live around
  // each node (the exact answer on one stream) and, across streams, grown from
  // each of the largest tensors.
  llvm::DenseMap<std::pair<size_t, size_t>, bool> cache;
  auto conflict = [&](size_t i, size_t j) {
    auto key = std::minmax(i, j);
    auto [it, inserted] = cache.try_emplace(key, false);
    if (inserted)
      it->second = !mayShare(tensors[i], tensors[j], hb);
    return it->second;
  };
  auto heaviestSet = [&](SmallVector<size_t> candidates) {
    llvm::stable_sort(candidates,
                      [&](size_t a, size_t b) { return tensors[a].size() > tensors[b].size(); });
    SmallVector<size_t> set;
    int64_t bytes = 0;
    for (size_t c : candidates)
      if (llvm::all_of(set, [&](size_t m) { return conflict(c, m); })) {
        set.push_back(c);
        bytes += tensors[c].size();
      }
    return bytes;
  };
  int64_t best = 0;
  auto atOrBefore = [&](size_t x, size_t n) { return x == n || hb.before(x, n); };
  for (size_t n = 0; n < hb.getNodes().size(); ++n) {
    SmallVector<size_t> live;
    for (size_t t = 0; t < tensors.size(); ++t) {
      const SliceTensor &st = tensors[t];
      if (!st.uses.empty() && atOrBefore(st.uses.front(), n) &&
          llvm::any_of(st.uses, [&](size_t u) { return atOrBefore(n, u); }))
        live.push_back(t);
    }
    best = std::max(best, heaviestSet(live));
  }
  if (hb.getNumStreams() > 1) {
    SmallVector<size_t> bySize;
    for (size_t t = 0; t < tensors.size(); ++t)
      if (!tensors[t].uses.empty())
        bySize.push_back(t);
    llvm::stable_sort(bySize,
                      [&](size_t a, size_t b) { return tensors[a].size() > tensors[b].size(); });
    for (size_t k = 0; k < bySize.size() && k < 32; ++k) {
      SmallVector<size_t> candidates{bySize[k]};
      for (size_t t : bySize)
        if (t != bySize[k] && conflict(t, bySize[k]))
          candidates.push_back(t);
      best = std::max(best, heaviestSet(candidates));
    }
  }
  return best;
}

namespace {
constexpr int64_t kAlignment = 64;
int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }
} // namespace

ArenaPlan planArena(PlanOp plan, const HappensBefore &hb, bool commit, bool allowInPlace) {
  std::vector<SliceTensor> tensors = sliceTensors(plan, hb);
  // Tensors of one slice share its offset: place slices, each as the union of its
  // tensors' constraints.
  llvm::MapVector<Value, SmallVector<size_t>> slices;
  for (size_t i = 0; i < tensors.size(); ++i)
    slices[tensors[i].slice.getBuffer()].push_back(i);
  std::vector<std::pair<Value, SmallVector<size_t>>> order(slices.begin(), slices.end());
  std::stable_sort(order.begin(), order.end(), [&](const auto &a, const auto &b) {
    return tensors[a.second.front()].size() > tensors[b.second.front()].size();
  });
  ArenaPlan result;
  std::vector<int64_t> offsetOf(tensors.size(), -1);
  std::vector<size_t> placed;
  for (auto &[slice, members] : order) {
    int64_t size = tensors[members.front()].size();
    result.naiveBytes += size;
    // Ranges this slice must not overlap; in-place partners it may sit exactly on,
    // and overlap nowhere else.
    std::vector<std::pair<int64_t, int64_t>> taken, partners;
    for (size_t j : placed)
      for (size_t i : members) {
        bool inPlace = false;
        if (!mayShare(tensors[i], tensors[j], hb, &inPlace) || (inPlace && !allowInPlace))
          taken.push_back({offsetOf[j], tensors[j].size()});
        else if (inPlace)
          partners.push_back({offsetOf[j], tensors[j].size()});
      }
    auto fits = [&](int64_t offset) {
      return llvm::none_of(taken, [&](auto r) {
        return offset < r.first + r.second && r.first < offset + size;
      });
    };
    int64_t offset = -1;
    auto clearOfOtherPartners = [&](int64_t e) {
      return llvm::none_of(partners, [&](auto r) {
        return r.first != e && e < r.first + r.second && r.first < e + size;
      });
    };
    for (auto [e, partnerSize] : partners)
      if (fits(e) && clearOfOtherPartners(e) && (offset < 0 || e < offset))
        offset = e;
    if (offset < 0) {
      taken.insert(taken.end(), partners.begin(), partners.end());
      std::sort(taken.begin(), taken.end());
      offset = 0;
      for (auto [takenOffset, takenSize] : taken) {
        if (offset + size <= takenOffset)
          break;
        offset = std::max(offset, alignUp(takenOffset + takenSize));
      }
    }
    for (size_t i : members) {
      offsetOf[i] = offset;
      placed.push_back(i);
    }
    if (commit)
      tensors[members.front()].slice.setOffset(offset);
    result.arenaBytes = std::max(result.arenaBytes, alignUp(offset + size));
  }
  result.lowerBoundBytes = liveLowerBound(tensors, hb);
  return result;
}

} // namespace kiln
