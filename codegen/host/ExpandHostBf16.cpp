//===- ExpandHostBf16.cpp - bf16 conversions without a runtime call -------===//
//
// This file implements kiln-expand-host-bf16 (see Passes.td): bf16 truncations and
// extensions in the host kernels become integer arithmetic, so that the host object
// needs no `__truncsfbf2` from the C runtime.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDHOSTBF16
#include "codegen/host/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct ExpandHostBf16Pass : kiln::impl::ExpandHostBf16Base<ExpandHostBf16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
