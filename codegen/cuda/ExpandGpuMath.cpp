//===- ExpandGpuMath.cpp - Math without a PTX instruction -----------------===//
//
// This file implements kiln-expand-gpu-math (see Passes.td): math ops that have no
// PTX instruction become arithmetic, so that no libdevice call is needed for f32
// and integer kernels. Runs on the gpu.module for cuda and cuda-sim alike, so the
// simulator checks the same expansions the GPU runs.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDGPUMATH
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// math.ipowi has no PTX instruction and no libdevice function: square and
/// multiply over the exponent's bits. A negative exponent gives what the integer
/// division 1 / b^-e gives (1 for b = 1, +-1 for b = -1, else 0), as on host.
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = dyn_cast<IntegerType>(op.getType());
    if (!type)
      return failure();
    unsigned width = type.getWidth();
    auto c = [&](int64_t v) { return rw.create<arith::ConstantIntOp>(loc, v, type); };
    Value base = op.getLhs(), exp = op.getRhs();
    Value zero = c(0), one = c(1);
    Value negative = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, exp, zero);
    auto loop = rw.create<scf::ForOp>(
        loc, rw.create<arith::ConstantIndexOp>(loc, 0),
        rw.create<arith::ConstantIndexOp>(loc, width - 1),
        rw.create<arith::ConstantIndexOp>(loc, 1), ValueRange{one, base, exp});
    {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(loop.getBody());
      Value result = loop.getRegionIterArgs()[0], b = loop.getRegionIterArgs()[1],
            e = loop.getRegionIterArgs()[2];
      Value bit = rw.create<arith::TruncIOp>(loc, rw.getI1Type(), e);
      Value times = rw.create<arith::MulIOp>(loc, result, b);
      result = rw.create<arith::SelectOp>(loc, bit, times, result);
      b = rw.create<arith::MulIOp>(loc, b, b);
      e = rw.create<arith::ShRUIOp>(loc, e, c(1));
      rw.create<scf::YieldOp>(loc, ValueRange{result, b, e});
    }
    Value odd = rw.create<arith::TruncIOp>(loc, rw.getI1Type(), exp);
    Value isOne = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, one);
    Value isMinusOne = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, c(-1));
    Value minusOnePow = rw.create<arith::SelectOp>(loc, odd, c(-1), one);
    Value negResult = rw.create<arith::SelectOp>(
        loc, isOne, one, rw.create<arith::SelectOp>(loc, isMinusOne, minusOnePow, zero));
    rw.replaceOpWithNewOp<arith::SelectOp>(op, negative, negResult, loop.getResult(0));
    return success();
  }
};

struct ExpandGpuMathPass : kiln::impl::ExpandGpuMathBase<ExpandGpuMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandIPowI>(&getContext());
    populateExpandTanPattern(patterns);
    populateExpandSinhPattern(patterns);
    populateExpandCoshPattern(patterns);
    populateExpandAsinhPattern(patterns);
    populateExpandAcoshPattern(patterns);
    populateExpandAtanhPattern(patterns);
    populateExpandPowFPattern(patterns);
    populateExpandFPowIPattern(patterns);
    populateExpandRoundFPattern(patterns);
    MathPolynomialApproximationOptions approx;
    approx.enableAvx2 = false;
    populateMathPolynomialApproximationPatterns(patterns, approx);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
