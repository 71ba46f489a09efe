//===- Schedule.cpp - Assign launches to streams ---------------------------===//
//
// This file implements kiln-schedule (see Passes.td). Today every launch and copy
// runs on stream 0 in plan order, so no events are needed; the pass owns the
// stream attribute that a cost-model-driven scheduler will set.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_SCHEDULE
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct SchedulePass : kiln::impl::ScheduleBase<SchedulePass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<kiln::LaunchOp, kiln::CopyOp>(op))
        op->setAttr("stream", IntegerAttr::get(IntegerType::get(op->getContext(), 64), 0));
    });
  }
};
} // namespace
