//===- ExpandMath.cpp - Math as arithmetic --------------------------------===//
//
// This file implements kiln-expand-math (see Passes.td): math ops that have no
// instruction become arithmetic, so that no libdevice call is needed for f32 and
// integer cuda kernels, and host kernels vectorize what would be scalar libm
// calls (tanh, exp, erf: an LSTM's gates, GELU). Runs on the gpu.module for cuda
// and cuda-sim alike, so the simulator checks the same expansions the GPU runs,
// and on the host's kernels.
//
//===----------------------------------------------------------------------===//
#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_EXPANDMATH
#include "codegen/Passes.h.inc"
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

/// math.powf as exp(b * log|a|) with C's pow rules where MLIR's own expansion
/// differs: a negative base with a non-integer exponent is NaN (MLIR's gives
/// -|a|^b), with an odd integer exponent the result is negated; b = 0 or a = 1
/// gives 1 (even for NaN).
struct ExpandPowF : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    if (!floatType || isa<ShapedType>(type))
      return failure();
    auto c = [&](double v) {
      return rw.create<arith::ConstantOp>(loc, rw.getFloatAttr(floatType, v)).getResult();
    };
    auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
      return rw.create<arith::CmpFOp>(loc, p, x, y).getResult();
    };
    Value a = op.getLhs(), b = op.getRhs();
    Value magnitude = rw.create<math::ExpOp>(
        loc, rw.create<arith::MulFOp>(loc, b, rw.create<math::LogOp>(
                                                  loc, rw.create<math::AbsFOp>(loc, a))));
    Value integral = cmp(arith::CmpFPredicate::OEQ, rw.create<math::FloorOp>(loc, b), b);
    Value odd = rw.create<arith::AndIOp>(
        loc, integral,
        cmp(arith::CmpFPredicate::ONE, rw.create<arith::RemFOp>(loc, b, c(2)), c(0)));
    Value negativeBase = cmp(arith::CmpFPredicate::OLT, a, c(0));
    Value negated = rw.create<arith::SelectOp>(
        loc, odd, rw.create<arith::NegFOp>(loc, magnitude), magnitude);
    Value forNegative = rw.create<arith::SelectOp>(loc, integral, negated, c(NAN));
    Value result = rw.create<arith::SelectOp>(loc, negativeBase, forNegative, magnitude);
    Value one = rw.create<arith::OrIOp>(loc, cmp(arith::CmpFPredicate::OEQ, b, c(0)),
                                        cmp(arith::CmpFPredicate::OEQ, a, c(1)));
    rw.replaceOpWithNewOp<arith::SelectOp>(op, one, c(1), result);
    return success();
  }
};

struct ExpandMathPass : kiln::impl::ExpandMathBase<ExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandIPowI, ExpandPowF>(&getContext());
    populateExpandTanPattern(patterns);
    populateExpandSinhPattern(patterns);
    populateExpandCoshPattern(patterns);
    populateExpandAsinhPattern(patterns);
    populateExpandAcoshPattern(patterns);
    populateExpandAtanhPattern(patterns);
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
