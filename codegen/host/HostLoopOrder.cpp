//===- HostLoopOrder.cpp - Contraction loops in a vectorizable order -----===//
//
// This file implements kiln-host-loop-order (see Passes.td): a generic with
// reduction loops whose output's innermost dim is contiguous in every buffer that
// reads it gets that dim as its innermost loop, after the reductions, so that the
// host's loop vectorizer widens it (out[m, n:n+8] += a[m, k] * b[k, n:n+8])
// instead of running scalar dot products: batched products that are not MatMuls
// (Gemm, Einsum; MatMul's lowering already emits this order) and column reductions. Each output still accumulates its
// reduction in the same order: results are bitwise unchanged.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_HOSTLOOPORDER
#include "codegen/host/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// True when `buffer`, read through `map`, steps by one element along loop `d`: its
/// last index is `d` itself, which no other index uses, and its innermost stride is
/// 1. A buffer that does not use `d` is fine too. (A convolution's input column,
/// ow + kw, does not qualify: measured on ResNet-50 and GoogLeNet, its short rows ran
/// slower reloaded per reduction step than as scalar dot products.)
bool unitStrideAlong(Value buffer, AffineMap map, unsigned d) {
  unsigned last = map.getNumResults();
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (!e.isFunctionOfDim(d))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (i + 1 != last || !dim)
      return false;
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type)
      return false;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(type, strides, offset)) || strides.empty() ||
        strides.back() != 1)
      return false;
  }
  return true;
}

/// The loop order that puts the output's innermost dim last; empty when there is
/// none to gain.
SmallVector<unsigned> vectorizableOrder(linalg::GenericOp op, int64_t minOuter,
                                        int64_t minInner) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return {};
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return {};
  auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!last)
    return {};
  unsigned d = last.getPosition();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[d] != utils::IteratorType::parallel)
    return {};
  // Already after every reduction loop.
  bool innermost = true;
  for (unsigned i = d + 1; i < iterators.size(); ++i)
    innermost &= iterators[i] != utils::IteratorType::reduction;
  if (innermost)
    return {};
  for (OpOperand &operand : op->getOpOperands())
    if (!unitStrideAlong(operand.get(), op.getMatchingIndexingMap(&operand), d))
      return {};
  // `d` must be long enough to gain from vectors, and the other parallel loops must
  // leave enough outer iterations for the thread pool (a matrix-vector product
  // keeps its dot products, threaded over rows).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[d]) || ranges[d] < minInner)
    return {};
  int64_t outer = 1;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (i != d && it == utils::IteratorType::parallel) {
      if (ShapedType::isDynamic(ranges[i]))
        return {};
      outer *= ranges[i];
    }
  if (outer < minOuter)
    return {};
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != d)
      order.push_back(i);
  order.push_back(d);
  return order;
}

struct HostLoopOrderPass : kiln::impl::HostLoopOrderBase<HostLoopOrderPass> {
  using HostLoopOrderBase::HostLoopOrderBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>> work;
    getOperation().walk([&](linalg::GenericOp op) {
      SmallVector<unsigned> order = vectorizableOrder(op, minOuter, minInner);
      if (!order.empty())
        work.push_back({op, std::move(order)});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : work) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        return signalPassFailure();
    }
  }
};

} // namespace
