//===- AssignStreams.cpp - Parallel-group scheduling on streams -----------===//
//
// This file implements kiln-assign-streams (see Passes.td).
//
// The plan's launches and copies form a DAG (a node depends on the earlier nodes
// that touch one of its buffers, one of them writing). The DAG is cut into
// regions where a single node feeds everything after it (an Inception block, a
// residual block). Within a region the schedule is a sequence of stages, IOS
// style: a stage is a set of nodes whose predecessors ran in earlier stages or in
// the stage itself; its connected components run concurrently, one stream each,
// at most max-streams of them. A stage lasts as long as its longest component,
// or as the sum of its nodes' device time when they would crowd the device
// (CostModel.h). Small regions are searched exactly (the best sequence of stages
// over all down-closed node sets); beyond a budget the greedy choice takes every
// ready node as one stage.
//
// Streams then get the minimum events: a node waits on another stream only for
// its latest predecessor there that vector clocks do not already order before it
// (the transitive reduction), each stream other than 0 waits for the run's start
// the first time nothing else orders it, and each is joined into stream 0 at the
// end. With a memory budget the pass prices each schedule's arena and serializes
// (fewer streams) until it fits.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/Passes.h"
#include "passes/plan/CostModel.h"
#include "passes/plan/PlanAnalysis.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace kiln {
#define GEN_PASS_DEF_ASSIGNSTREAMS
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Exact search only over regions with at most this many down-closed sets.
constexpr size_t kExactBudget = 512;
/// ... and at most this many nodes (sets are 64-bit masks).
constexpr size_t kExactNodes = 64;

struct Dag {
  std::vector<Operation *> nodes;
  std::vector<SmallVector<size_t>> preds, succs;
  std::vector<LaunchCost> cost;
  size_t numSources = 0; // nodes without predecessors, first in `nodes`
};

Dag buildDag(PlanOp plan, const DeviceModel &device) {
  Dag dag;
  for (Operation &op : plan.getBody().front())
    if (isa<LaunchOp, CopyOp>(op))
      dag.nodes.push_back(&op);
  size_t n = dag.nodes.size();
  dag.preds.resize(n);
  dag.succs.resize(n);
  DenseMap<Value, SmallVector<std::pair<size_t, bool>>> touched;
  for (size_t i = 0; i < n; ++i) {
    dag.cost.push_back(estimateCost(dag.nodes[i], device));
    llvm::SmallDenseSet<size_t> deps;
    for (const Access &a : accessesOf(dag.nodes[i])) {
      for (auto [j, writes] : touched[a.buffer])
        if (writes || a.writes)
          deps.insert(j);
    }
    for (const Access &a : accessesOf(dag.nodes[i]))
      touched[a.buffer].push_back({i, a.writes});
    for (size_t j : deps) {
      dag.preds[i].push_back(j);
      dag.succs[j].push_back(i);
    }
    llvm::sort(dag.preds[i]);
  }
  // Nodes that depend on nothing (they read only inputs and weights) go first:
  // they may run beside anything, and a region cut must not leave one behind.
  std::vector<size_t> order, position(n);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < n; ++i)
      if (dag.preds[i].empty() == (pass == 0))
        order.push_back(i);
  for (size_t k = 0; k < n; ++k)
    position[order[k]] = k;
  Dag sorted;
  sorted.numSources = static_cast<size_t>(
      llvm::count_if(dag.preds, [](const auto &p) { return p.empty(); }));
  sorted.preds.resize(n);
  sorted.succs.resize(n);
  for (size_t k = 0; k < n; ++k) {
    size_t i = order[k];
    sorted.nodes.push_back(dag.nodes[i]);
    sorted.cost.push_back(dag.cost[i]);
    for (size_t p : dag.preds[i])
      sorted.preds[k].push_back(position[p]);
    for (size_t s : dag.succs[i])
      sorted.succs[k].push_back(position[s]);
    llvm::sort(sorted.preds[k]);
    llvm::sort(sorted.succs[k]);
  }
  return sorted;
}

/// One stage: groups of nodes, each group in plan order on one stream.
using Stage = std::vector<std::vector<size_t>>;

/// The connected components of `members` (sorted) under the DAG's edges.
Stage components(const Dag &dag, ArrayRef<size_t> members) {
  DenseMap<size_t, size_t> parent;
  for (size_t m : members)
    parent[m] = m;
  std::function<size_t(size_t)> find = [&](size_t x) {
    size_t p = parent[x];
    return p == x ? x : parent[x] = find(p);
  };
  for (size_t m : members)
    for (size_t p : dag.preds[m])
      if (parent.count(p))
        parent[find(m)] = find(p);
  std::map<size_t, std::vector<size_t>> groups;
  for (size_t m : members)
    groups[find(m)].push_back(m);
  Stage stage;
  for (auto &[root, g] : groups)
    stage.push_back(std::move(g));
  return stage;
}

double groupSeconds(const Dag &dag, ArrayRef<size_t> group) {
  double t = 0;
  for (size_t m : group)
    t += dag.cost[m].seconds;
  return t;
}

/// Merges the lightest groups until at most `maxStreams` remain.
void limitGroups(const Dag &dag, Stage &stage, int64_t maxStreams) {
  while (static_cast<int64_t>(stage.size()) > maxStreams) {
    llvm::sort(stage, [&](const auto &a, const auto &b) {
      return groupSeconds(dag, a) > groupSeconds(dag, b);
    });
    std::vector<size_t> last = std::move(stage.back());
    stage.pop_back();
    std::vector<size_t> &into = stage.back();
    into.insert(into.end(), last.begin(), last.end());
    llvm::sort(into);
  }
}

double stageSeconds(const Dag &dag, const Stage &stage, const DeviceModel &device) {
  if (stage.size() == 1)
    return groupSeconds(dag, stage.front());
  double longest = 0, crowded = 0;
  for (const auto &g : stage) {
    longest = std::max(longest, groupSeconds(dag, g));
    for (size_t m : g)
      crowded += dag.cost[m].deviceSeconds();
  }
  // Each extra stream costs an event each way.
  return std::max(longest, crowded) +
         2 * device.eventOverhead * static_cast<double>(stage.size() - 1);
}

struct Scheduler {
  const Dag &dag;
  const DeviceModel &device;
  int64_t maxStreams;

  /// The stages of the region [begin, end) (nodes of a region depend only on
  /// nodes of it or before it).
  std::vector<Stage> scheduleRegion(size_t begin, size_t end) {
    size_t n = end - begin;
    if (n == 1 || maxStreams == 1)
      return sequential(begin, end);
    if (n <= kExactNodes) {
      std::vector<Stage> exact;
      if (searchExactly(begin, end, exact))
        return exact;
    }
    return greedy(begin, end);
  }

  std::vector<Stage> sequential(size_t begin, size_t end) {
    std::vector<Stage> stages;
    for (size_t i = begin; i < end; ++i)
      stages.push_back({{i}});
    return stages;
  }

  Stage stageOf(uint64_t mask, size_t begin) {
    SmallVector<size_t> members;
    for (size_t b = 0; b < 64; ++b)
      if (mask >> b & 1)
        members.push_back(begin + b);
    Stage stage = components(dag, members);
    return stage;
  }

  bool searchExactly(size_t begin, size_t end, std::vector<Stage> &out) {
    size_t n = end - begin;
    // Predecessors inside the region, as masks.
    std::vector<uint64_t> predMask(n, 0);
    for (size_t i = 0; i < n; ++i)
      for (size_t p : dag.preds[begin + i])
        if (p >= begin)
          predMask[i] |= uint64_t(1) << (p - begin);
    // Every down-closed set, by growing them one ready node at a time.
    std::vector<uint64_t> sets{0};
    llvm::DenseSet<uint64_t> seen{0};
    for (size_t k = 0; k < sets.size(); ++k) {
      for (size_t i = 0; i < n; ++i) {
        uint64_t bit = uint64_t(1) << i;
        if (sets[k] & bit || (predMask[i] & ~sets[k]))
          continue;
        uint64_t next = sets[k] | bit;
        if (seen.insert(next).second) {
          sets.push_back(next);
          if (sets.size() > kExactBudget)
            return false;
        }
      }
    }
    // Best time from each set to the full region; larger sets first.
    uint64_t full = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
    llvm::sort(sets, [](uint64_t a, uint64_t b) {
      return llvm::popcount(a) > llvm::popcount(b);
    });
    DenseMap<uint64_t, std::pair<double, uint64_t>> best; // set -> (time, next set)
    best[full] = {0, full};
    for (uint64_t s : sets) {
      if (s == full)
        continue;
      std::pair<double, uint64_t> choice{INFINITY, full};
      for (uint64_t t : sets) {
        if (t == s || (s & ~t))
          continue;
        auto it = best.find(t);
        if (it == best.end())
          continue;
        Stage stage = stageOf(t & ~s, begin);
        if (static_cast<int64_t>(stage.size()) > maxStreams)
          continue;
        double time = stageSeconds(dag, stage, device) + it->second.first;
        if (time < choice.first - 1e-12)
          choice = {time, t};
      }
      best[s] = choice;
    }
    for (uint64_t s = 0; s != full;) {
      uint64_t t = best[s].second;
      out.push_back(stageOf(t & ~s, begin));
      s = t;
    }
    return true;
  }

  std::vector<Stage> greedy(size_t begin, size_t end) {
    std::vector<Stage> stages;
    std::vector<bool> done(end - begin, false);
    size_t remaining = end - begin;
    while (remaining) {
      SmallVector<size_t> ready;
      for (size_t i = begin; i < end; ++i)
        if (!done[i - begin] && llvm::all_of(dag.preds[i], [&](size_t p) {
              return p < begin || done[p - begin];
            }))
          ready.push_back(i);
      Stage stage;
      for (size_t r : ready)
        stage.push_back({r});
      limitGroups(dag, stage, maxStreams);
      for (size_t r : ready)
        done[r - begin] = true;
      remaining -= ready.size();
      stages.push_back(std::move(stage));
    }
    return stages;
  }

  /// Whether the schedule can be cut after node p: the later nodes that the
  /// nodes up to p feed each depend directly on all of those feeders (a residual
  /// block's output, an Inception block's concatenated branches), so no stage
  /// gains from straddling the cut (every later node descends from those, as
  /// nodes without predecessors come first).
  bool isCut(size_t p) {
    if (p + 1 < dag.numSources)
      return false;
    SmallVector<size_t> feeders;
    llvm::SmallSetVector<size_t, 8> fed;
    for (size_t u = 0; u <= p; ++u)
      for (size_t v : dag.succs[u])
        if (v > p) {
          if (feeders.empty() || feeders.back() != u)
            feeders.push_back(u);
          fed.insert(v);
        }
    for (size_t v : fed)
      for (size_t u : feeders)
        if (!llvm::is_contained(dag.preds[v], u))
          return false;
    return true;
  }

  std::vector<Stage> schedule() {
    size_t n = dag.nodes.size();
    std::vector<Stage> stages;
    for (size_t begin = 0, p = 0; p < n; ++p) {
      if (p + 1 < n && !isCut(p))
        continue;
      std::vector<Stage> region = scheduleRegion(begin, p + 1);
      stages.insert(stages.end(), region.begin(), region.end());
      begin = p + 1;
    }
    return stages;
  }
};

/// Rewrites the plan for `schedule`: nodes in stage order with streams, and the
/// minimum record/wait events.
void applySchedule(PlanOp plan, const Dag &dag, const std::vector<Stage> &stages) {
  size_t n = dag.nodes.size();
  std::vector<int64_t> streamOfNode(n, 0);
  // Streams: a group continues the lowest stream of a predecessor that no other
  // group of the stage took (the main chain stays on stream 0, which the run
  // ends on: fewer joins), else the lowest free one.
  std::vector<size_t> order, issuedAt(n, 0);
  for (const Stage &stage : stages) {
    std::vector<bool> taken;
    auto isTaken = [&](int64_t s) {
      return static_cast<size_t>(s) < taken.size() && taken[static_cast<size_t>(s)];
    };
    auto take = [&](int64_t s) {
      if (taken.size() <= static_cast<size_t>(s))
        taken.resize(static_cast<size_t>(s) + 1, false);
      taken[static_cast<size_t>(s)] = true;
    };
    std::vector<int64_t> assigned(stage.size(), -1);
    for (size_t g = 0; g < stage.size(); ++g) {
      SmallVector<size_t> outside;
      for (size_t m : stage[g])
        for (size_t p : dag.preds[m])
          if (!llvm::is_contained(stage[g], p))
            outside.push_back(p);
      llvm::sort(outside, [&](size_t a, size_t b) {
        return std::make_pair(streamOfNode[a], issuedAt[b]) <
               std::make_pair(streamOfNode[b], issuedAt[a]);
      });
      for (size_t p : outside)
        if (!isTaken(streamOfNode[p])) {
          assigned[g] = streamOfNode[p];
          take(assigned[g]);
          break;
        }
    }
    for (size_t g = 0; g < stage.size(); ++g) {
      if (assigned[g] < 0) {
        int64_t s = 0;
        while (isTaken(s))
          ++s;
        assigned[g] = s;
        take(s);
      }
      for (size_t m : stage[g]) {
        streamOfNode[m] = assigned[g];
        issuedAt[m] = order.size();
        order.push_back(m);
      }
    }
  }
  int64_t numStreams = 1;
  for (int64_t s : streamOfNode)
    numStreams = std::max(numStreams, s + 1);

  Block &body = plan.getBody().front();
  OpBuilder b(plan.getContext());
  // Vector clocks as in HappensBefore; the run's start is tick 1 of stream 0.
  std::vector<std::vector<int32_t>> now(numStreams, std::vector<int32_t>(numStreams, 0));
  now[0][0] = 1;
  std::vector<std::vector<int32_t>> clock(n);
  std::vector<int64_t> eventOf(n, -1);
  std::vector<bool> started(numStreams, false);
  int64_t nextEvent = 0, startEvent = -1;
  Operation *firstNode = dag.nodes[order.front()];
  auto recordAfter = [&](size_t node) {
    if (eventOf[node] < 0) {
      b.setInsertionPointAfter(dag.nodes[node]);
      eventOf[node] = nextEvent++;
      b.create<RecordOp>(dag.nodes[node]->getLoc(), eventOf[node], streamOfNode[node]);
    }
    return eventOf[node];
  };
  for (size_t m : order) {
    Operation *op = dag.nodes[m];
    op->moveBefore(&body, body.end());
    int64_t s = streamOfNode[m];
    if (auto l = dyn_cast<LaunchOp>(op))
      l.setStream(s);
    else
      cast<CopyOp>(op).setStream(s);
    // The latest predecessor on each other stream that nothing orders yet.
    std::vector<int64_t> need(numStreams, -1);
    for (size_t p : dag.preds[m]) {
      int64_t t = streamOfNode[p];
      if (t != s && now[s][t] < clock[p][t] &&
          (need[t] < 0 || clock[p][t] > clock[static_cast<size_t>(need[t])][t]))
        need[t] = static_cast<int64_t>(p);
    }
    for (int64_t t = 0; t < numStreams; ++t) {
      if (need[t] < 0)
        continue;
      size_t p = static_cast<size_t>(need[t]);
      if (now[s][t] >= clock[p][t])
        continue; // an earlier wait of this node covered it
      int64_t e = recordAfter(p);
      b.setInsertionPoint(op);
      b.create<WaitOp>(op->getLoc(), e, s);
      for (int64_t u = 0; u < numStreams; ++u)
        now[s][u] = std::max(now[s][u], clock[p][u]);
    }
    if (!started[s] && now[s][0] < 1) {
      if (startEvent < 0) {
        b.setInsertionPoint(firstNode);
        startEvent = nextEvent++;
        b.create<RecordOp>(firstNode->getLoc(), startEvent, 0);
      }
      b.setInsertionPoint(op);
      b.create<WaitOp>(op->getLoc(), startEvent, s);
      now[s][0] = std::max(now[s][0], 1);
    }
    started[s] = true;
    ++now[s][s];
    clock[m] = now[s];
  }
  // Join every stream into stream 0.
  for (int64_t t = 1; t < numStreams; ++t) {
    if (now[0][t] >= now[t][t])
      continue;
    size_t last = n;
    for (size_t m : order)
      if (streamOfNode[m] == t)
        last = m;
    int64_t e = recordAfter(last);
    b.setInsertionPointToEnd(&body);
    b.create<WaitOp>(plan.getLoc(), e, 0);
    for (int64_t u = 0; u < numStreams; ++u)
      now[0][u] = std::max(now[0][u], clock[last][u]);
  }
}

struct AssignStreamsPass : kiln::impl::AssignStreamsBase<AssignStreamsPass> {
  using AssignStreamsBase::AssignStreamsBase;

  void runOnOperation() override {
    std::optional<DeviceModel> device = findDeviceModel(deviceModel, hostCores);
    if (!device) {
      getOperation().emitError() << "kiln-assign-streams: unknown device model '"
                                 << deviceModel << "' (" << deviceModelList() << ")";
      return signalPassFailure();
    }
    device->tf32 = tf32;
    if (maxStreams < 1) {
      getOperation().emitError() << "kiln-assign-streams: max-streams must be at least 1";
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](PlanOp plan) {
      return failed(schedule(plan, *device)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult schedule(PlanOp plan, const DeviceModel &device) {
    for (Operation &op : plan.getBody().front())
      if (isa<RecordOp, WaitOp>(op))
        return op.emitError("kiln-assign-streams: the plan is already scheduled");
    // The sequential plan: everything on stream 0 in plan order.
    for (Operation &op : plan.getBody().front()) {
      if (auto l = dyn_cast<LaunchOp>(op))
        l.setStream(0);
      else if (auto c = dyn_cast<CopyOp>(op))
        c.setStream(0);
    }
    Dag dag = buildDag(plan, device);
    if (dag.nodes.empty())
      return success();
    double sequentialSeconds = 0;
    auto estimated = KilnDialect::EstimatedNsAttrHelper(plan.getContext());
    Builder b(plan.getContext());
    for (auto [node, c] : llvm::zip(dag.nodes, dag.cost)) {
      sequentialSeconds += c.seconds;
      if (auto l = dyn_cast<LaunchOp>(node))
        estimated.setAttr(l, b.getI64IntegerAttr(std::llround(c.seconds * 1e9)));
    }
    ArenaPlan sequentialArena = planArena(plan, HappensBefore(plan), /*commit=*/false);
    plan.setSequentialArenaBytes(sequentialArena.arenaBytes);
    plan.setSequentialLowerBoundBytes(sequentialArena.lowerBoundBytes);
    if (memoryBudget > 0 && sequentialArena.arenaBytes > memoryBudget)
      return plan.emitError() << "the memory budget of " << static_cast<int64_t>(memoryBudget)
                              << " bytes is too small: even the sequential plan needs an arena of "
                              << sequentialArena.arenaBytes << " bytes (its lower bound is "
                              << sequentialArena.lowerBoundBytes << ")";
    // Fewer streams until the arena fits the budget.
    for (int64_t streams = maxStreams;; --streams) {
      Scheduler scheduler{dag, device, streams};
      std::vector<Stage> stages = scheduler.schedule();
      double seconds = 0;
      for (const Stage &stage : stages)
        seconds += stageSeconds(dag, stage, device);
      if (streams > 1 && memoryBudget > 0) {
        // Price the schedule on a copy of the plan.
        OpBuilder copyBuilder(plan.getContext());
        auto copy = cast<PlanOp>(copyBuilder.clone(*plan.getOperation()));
        Dag copyDag = buildDag(copy, device);
        applySchedule(copy, copyDag, stages);
        int64_t arena = planArena(copy, HappensBefore(copy), false).arenaBytes;
        copy.erase();
        if (arena > memoryBudget)
          continue;
      }
      if (streams > 1)
        applySchedule(plan, dag, stages);
      plan.setSequentialNs(std::llround(sequentialSeconds * 1e9));
      plan.setEstimatedNs(std::llround((streams > 1 ? seconds : sequentialSeconds) * 1e9));
      return success();
    }
  }
};

} // namespace
