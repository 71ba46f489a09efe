//===- BlockReduction.cpp - One output per block --------------------------===//
//
// This file implements the block-reduction strategy of kiln-map-to-gpu: one
// output per block; the block's threads stride over the reduction (coalesced) and
// combine their partial results with gpu.all_reduce (warp shuffles, then shared
// memory across warps). Softmax and norm statistics, Reduce*, global pooling.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace kiln {

std::optional<Combiner> matchCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *c = yield.getOperand(0).getDefiningOp();
  if (!c || c->getBlock() != &body || c->getNumOperands() != 2 || !out.hasOneUse() ||
      !c->getResult(0).hasOneUse())
    return std::nullopt;
  Value other;
  if (c->getOperand(0) == out)
    other = c->getOperand(1);
  else if (c->getOperand(1) == out)
    other = c->getOperand(0);
  else
    return std::nullopt;
  using K = gpu::AllReduceOperation;
  std::optional<K> kind =
      llvm::TypeSwitch<Operation *, std::optional<K>>(c)
          .Case([](arith::AddFOp) { return K::ADD; })
          .Case([](arith::AddIOp) { return K::ADD; })
          .Case([](arith::MulFOp) { return K::MUL; })
          .Case([](arith::MulIOp) { return K::MUL; })
          .Case([](arith::MaximumFOp) { return K::MAXIMUMF; })
          .Case([](arith::MinimumFOp) { return K::MINIMUMF; })
          .Case([](arith::MaxNumFOp) { return K::MAXNUMF; })
          .Case([](arith::MinNumFOp) { return K::MINNUMF; })
          .Case([](arith::MaxSIOp) { return K::MAXSI; })
          .Case([](arith::MinSIOp) { return K::MINSI; })
          .Case([](arith::MaxUIOp) { return K::MAXUI; })
          .Case([](arith::MinUIOp) { return K::MINUI; })
          .Case([](arith::AndIOp) { return K::AND; })
          .Case([](arith::OrIOp) { return K::OR; })
          .Case([](arith::XOrIOp) { return K::XOR; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  Type t = out.getType();
  // gpu.all_reduce lowers through 32-bit shuffles.
  if (!t.isF32() && !t.isInteger(32))
    return std::nullopt;
  return Combiner{c, other, *kind};
}

namespace {
/// The identity of a combiner (its value before the first element).
Value identityOf(OpBuilder &b, Location loc, gpu::AllReduceOperation kind, Type t) {
  using K = gpu::AllReduceOperation;
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    APFloat v = APFloat::getZero(sem);
    if (kind == K::MUL)
      v = APFloat::getOne(sem);
    else if (kind == K::MAXIMUMF || kind == K::MAXNUMF)
      v = APFloat::getInf(sem, /*Negative=*/true);
    else if (kind == K::MINIMUMF || kind == K::MINNUMF)
      v = APFloat::getInf(sem);
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, v));
  }
  unsigned w = t.getIntOrFloatBitWidth();
  APInt v = APInt::getZero(w);
  switch (kind) {
  case K::MUL: v = APInt(w, 1); break;
  case K::MAXSI: v = APInt::getSignedMinValue(w); break;
  case K::MINSI: v = APInt::getSignedMaxValue(w); break;
  case K::MINUI:
  case K::AND: v = APInt::getAllOnes(w); break;
  default: break;
  }
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, v));
}
} // namespace

void mapBlockReduction(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims,
                                     const Combiner &combiner) {
  Location loc = op.getLoc();
  const auto &[ranges, par, red, parSizes, redSizes, outputs, length] = dims;
  int64_t threads = 32;
  while (threads < kMaxThreadsPerBlock && threads < length)
    threads *= 2;
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  SmallVector<Value> parIdx = delinearize(b, loc, bid, parSizes);
  SmallVector<Value> loopIdx(ranges.size());
  for (auto [i, d] : llvm::enumerate(par))
    loopIdx[d] = parIdx[i];
  Type t = combiner.op->getResult(0).getType();
  Value identity = identityOf(b, loc, combiner.kind, t);
  auto loop = b.create<scf::ForOp>(loc, tid, cIndex(b, loc, length),
                                   cIndex(b, loc, threads), ValueRange{identity});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> redIdx = delinearize(lb, loc, loop.getInductionVar(), redSizes);
    for (auto [i, d] : llvm::enumerate(red))
      loopIdx[d] = redIdx[i];
    builder.applyBody(lb, op, loopIdx, ValueRange{Value()}, combiner.op);
    Value x = builder.mapping.lookupOrDefault(combiner.other);
    IRMapping step;
    Operation *c = combiner.op;
    Block &body = op.getRegion().front();
    step.map(body.getArgument(op.getNumDpsInputs()), loop.getRegionIterArgs()[0]);
    step.map(combiner.other, x);
    Operation *partial = lb.clone(*c, step);
    lb.create<scf::YieldOp>(loc, partial->getResult(0));
  }
  Value total = b.create<gpu::AllReduceOp>(
      loc, loop.getResult(0),
      gpu::AllReduceOperationAttr::get(b.getContext(), combiner.kind), /*uniform=*/true);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                        cIndex(b, loc, 0));
  auto ifOp = b.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value zero = cIndex(b, loc, 0);
  for (unsigned d : red)
    loopIdx[d] = zero;
  Value init = builder.initialValue(b, op, 0, loopIdx);
  IRMapping fin;
  Block &body = op.getRegion().front();
  fin.map(body.getArgument(op.getNumDpsInputs()), init);
  fin.map(combiner.other, total);
  Value result = b.clone(*combiner.op, fin)->getResult(0);
  builder.storeOutput(b, op, 0, result, loopIdx);
  b.setInsertionPointAfter(ifOp);
  builder.finishStage(b, fn, {outputs, 1, 1}, {threads, 1, 1}, /*sync=*/true);
}

} // namespace kiln
