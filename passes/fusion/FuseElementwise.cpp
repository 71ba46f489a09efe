//===- FuseElementwise.cpp - Fuse producer-consumer elementwise generics --===//
//
// This file implements kiln-fuse-elementwise (see Passes.td): linalg's
// elementwise fusion, applied where it saves work: a producer is fused into an
// elementwise consumer only when that consumer is its sole user, so nothing is
// computed twice (not even per reduction step).
// Chains of elementwise ops (bias, activation, residual add, normalization
// arithmetic) become one generic and therefore one kernel. Reshapes between them
// fold into the generics' loops (linalg's fold-by-collapsing).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct FuseElementwisePass
    : kiln::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          // Into a consumer with reduction loops (a matmul, a reduction) the
          // producer would be recomputed on every reduction step: only fuse into
          // elementwise consumers.
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          return producer && producer->hasOneUse() && consumer &&
                 consumer.getNumReductionLoops() == 0;
        });
    // A reshape between elementwise generics (a Flatten, the unit dims of a
    // keepdims reduction) is folded into the generic's loops, so that the chain
    // meets: expand_shape -> generic becomes a generic over the collapsed dims.
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, [](OpOperand *fused) {
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      auto producer = fused->get().getDefiningOp<linalg::LinalgOp>();
      return (!consumer || consumer.getNumReductionLoops() == 0) &&
             (!producer || producer.getNumReductionLoops() == 0);
    });
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
