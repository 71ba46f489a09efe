//===- VerifyPlan.cpp - Check a plan's streams, events and memory ---------===//
//
// This file implements kiln-verify-plan (see Passes.td). Whatever scheduler and
// planner produced the plan, it checks that
//   - every stream waits for the run's start and is joined before its end;
//   - no two launches (or copies) that touch overlapping bytes — of the arena,
//     the weights or a caller's buffer —, one of them writing, can run at the
//     same time: a happens-before path (stream order, events) orders them;
//   - two arena tensors in overlapping bytes are never live together: every use
//     of one happens before every use of the other (or one launch updates the
//     first into the second in place, at the very same bytes);
//   - every slice lies inside the arena.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/Passes.h"
#include "passes/plan/PlanAnalysis.h"

namespace kiln {
#define GEN_PASS_DEF_VERIFYPLAN
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The bytes a buffer occupies: which memory (the arena, the weights, input i,
/// output j) and where.
struct Region {
  enum Space { Arena, Weights, Input, Output } space;
  int64_t index, begin, end;

  bool overlaps(const Region &o) const {
    return space == o.space && index == o.index && begin < o.end && o.begin < end;
  }
};

Region regionOf(Value buffer) {
  Operation *def = buffer.getDefiningOp();
  int64_t bytes = bufferBytes(cast<MemRefType>(buffer.getType()));
  if (auto s = dyn_cast<SliceOp>(def))
    return {Region::Arena, 0, static_cast<int64_t>(s.getOffset()),
            static_cast<int64_t>(s.getOffset() + s.getSize())};
  if (auto w = dyn_cast<WeightOp>(def))
    return {Region::Weights, 0, static_cast<int64_t>(w.getOffset()),
            static_cast<int64_t>(w.getOffset()) + bytes};
  if (auto in = dyn_cast<InputOp>(def))
    return {Region::Input, static_cast<int64_t>(in.getIndex()), 0, bytes};
  auto out = cast<OutputOp>(def);
  return {Region::Output, static_cast<int64_t>(out.getIndex()), 0, bytes};
}

std::string describe(Operation *node) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto l = dyn_cast<LaunchOp>(node))
    os << "launch @" << l.getKernel();
  else
    os << "copy";
  os << " (stream " << streamOf(node) << ")";
  return s;
}

const char *spaceName(Region::Space space) {
  switch (space) {
  case Region::Arena: return "the arena";
  case Region::Weights: return "the weights";
  case Region::Input: return "input";
  case Region::Output: return "output";
  }
  return "";
}

struct VerifyPlanPass : kiln::impl::VerifyPlanBase<VerifyPlanPass> {
  void runOnOperation() override {
    getOperation().walk([&](PlanOp plan) {
      if (failed(verify(plan)))
        signalPassFailure();
    });
  }

  LogicalResult verify(PlanOp plan) {
    HappensBefore hb(plan);
    if (!hb.getProblem().empty())
      return hb.getProblemOp()->emitError() << hb.getProblem();
    int64_t arena = static_cast<int64_t>(plan.getArenaBytes());
    for (SliceOp s : plan.getBody().getOps<SliceOp>()) {
      int64_t off = static_cast<int64_t>(s.getOffset());
      int64_t size = static_cast<int64_t>(s.getSize());
      if (off < 0 || off + size > arena)
        return s.emitError() << "slice [" << off << ", " << off + size
                             << ") lies outside the arena of " << arena << " bytes";
    }
    // Races: conflicting accesses of two nodes that no path orders.
    ArrayRef<Operation *> nodes = hb.getNodes();
    std::vector<SmallVector<std::pair<Region, bool>>> regions(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n)
      for (const Access &a : accessesOf(nodes[n])) {
        Region r = regionOf(a.buffer);
        if (a.writes && r.space == Region::Weights)
          return nodes[n]->emitError() << describe(nodes[n]) << " writes the weights";
        regions[n].push_back({r, a.writes});
      }
    for (size_t b = 0; b < nodes.size(); ++b)
      for (size_t a = 0; a < b; ++a) {
        if (hb.ordered(a, b))
          continue;
        for (auto &[ra, wa] : regions[a])
          for (auto &[rb, wb] : regions[b]) {
            if (!(wa || wb) || !ra.overlaps(rb))
              continue;
            InFlightDiagnostic d = nodes[b]->emitError();
            d << describe(nodes[b]) << (wb ? " writes" : " reads") << " bytes ["
              << rb.begin << ", " << rb.end << ") of " << spaceName(rb.space);
            if (rb.space == Region::Input || rb.space == Region::Output)
              d << " " << rb.index;
            d << " that " << describe(nodes[a]) << (wa ? " writes" : " reads")
              << ", with no happens-before path between them";
            d.attachNote(nodes[a]->getLoc()) << "the other " << describe(nodes[a]);
            return d;
          }
      }
    // Lifetimes: tensors in overlapping bytes are never live together.
    std::vector<SliceTensor> tensors = sliceTensors(plan, hb);
    for (size_t j = 0; j < tensors.size(); ++j)
      for (size_t i = 0; i < j; ++i) {
        Region ri = regionOf(tensors[i].slice.getBuffer());
        Region rj = regionOf(tensors[j].slice.getBuffer());
        if (!ri.overlaps(rj))
          continue;
        bool inPlace = false;
        if (mayShare(tensors[i], tensors[j], hb, &inPlace) &&
            (!inPlace || ri.begin == rj.begin))
          continue;
        Operation *first = nodes[tensors[j].uses.front()];
        InFlightDiagnostic d = first->emitError();
        d << describe(first) << " writes bytes [" << rj.begin << ", " << rj.end
          << ") of the arena while a tensor in bytes [" << ri.begin << ", " << ri.end
          << ") is still live";
        d.attachNote(nodes[tensors[i].uses.back()]->getLoc())
            << "last used by " << describe(nodes[tensors[i].uses.back()]);
        return d;
      }
    return success();
  }
};

} // namespace
