//===- BlockReduction.cpp - One output per block --------------------------===//
//
// This file implements the block-reduction strategy of kiln-map-to-gpu: one
// output per block; the block's threads stride over the reduction (coalesced) and
// combine their partial results with gpu.all_reduce (warp shuffles, then shared
// memory across warps). Softmax and norm statistics, Reduce*, global pooling.
// The row kernel runs such reductions and the elementwise stages around them, all
// over the same rows, one block per row in one launch; a batched contraction in
// the row (attention's Q K^T and P V) has each thread reduce its outputs serially.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"
#include "passes/fusion/Rows.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
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

namespace {
/// One block reduces `op` at the parallel indices already in `loopIdx`: the
/// threads stride over the reduction, gpu.all_reduce combines, thread 0 stores.
void emitBlockReduce(StageBuilder &builder, OpBuilder &b, linalg::GenericOp op,
                     const LoopDims &dims, const Combiner &combiner,
                     SmallVector<Value> &loopIdx, Value tid, int64_t threads) {
  Location loc = op.getLoc();
  const auto &[ranges, par, red, parSizes, redSizes, outputs, length] = dims;
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
  OpBuilder tb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
  Value zero = cIndex(tb, loc, 0);
  for (unsigned d : red)
    loopIdx[d] = zero;
  Value init = builder.initialValue(tb, op, 0, loopIdx);
  IRMapping fin;
  Block &body = op.getRegion().front();
  fin.map(body.getArgument(op.getNumDpsInputs()), init);
  fin.map(combiner.other, total);
  Value result = tb.clone(*combiner.op, fin)->getResult(0);
  builder.storeOutput(tb, op, 0, result, loopIdx);
  b.setInsertionPointAfter(ifOp);
}
} // namespace

void mapBlockReduction(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims,
                                     const Combiner &combiner) {
  Location loc = op.getLoc();
  int64_t threads = 32;
  while (threads < kMaxThreadsPerBlock && threads < dims.length)
    threads *= 2;
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  SmallVector<Value> parIdx = delinearize(b, loc, bid, dims.parSizes);
  SmallVector<Value> loopIdx(dims.ranges.size());
  for (auto [i, d] : llvm::enumerate(dims.par))
    loopIdx[d] = parIdx[i];
  emitBlockReduce(builder, b, op, dims, combiner, loopIdx, tid, threads);
  builder.finishStage(b, fn, {dims.outputs, 1, 1}, {threads, 1, 1}, /*sync=*/true);
}

namespace {
/// True when `v` (a buffer, perhaps through reshape views) is indexed by the same
/// leading n dims as its root buffer: reshapes with the same leading n sizes.
bool keepsRows(Value v, int64_t n) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      return !isa<ViewLikeOpInterface>(def);
    if (!keepsLeadingDims(cast<ShapedType>(def->getOperand(0).getType()),
                          cast<ShapedType>(v.getType()), n))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

} // namespace

bool mapRowKernel(StageBuilder &builder) {
  SmallVector<linalg::GenericOp> stages(builder.getStageOps());
  if (stages.size() < 2)
    return false;
  // The row: the leading parallel loops of the row reductions (all parallel loops
  // lead); a contraction with more leading parallel loops (attention's Q K^T and
  // P V) computes its outputs in the row one per thread, reducing serially.
  auto leading = [](linalg::GenericOp s) {
    LoopDims dims(s);
    int64_t lead = 0;
    while (lead < static_cast<int64_t>(dims.par.size()) &&
           dims.par[lead] == static_cast<unsigned>(lead))
      ++lead;
    return lead;
  };
  int64_t n = 0;
  for (linalg::GenericOp s : stages)
    if (s.getNumReductionLoops() > 0 && leading(s) == static_cast<int64_t>(LoopDims(s).par.size()))
      n = n == 0 ? leading(s) : std::min(n, leading(s));
  if (n == 0)
    return false;
  SmallVector<int64_t> rowSizes(stages.front().getStaticLoopRanges());
  rowSizes.resize(std::min<size_t>(rowSizes.size(), n));
  auto isBlockReduction = [&](linalg::GenericOp s) {
    return s.getNumReductionLoops() > 0 && static_cast<int64_t>(LoopDims(s).par.size()) == n;
  };
  for (linalg::GenericOp s : stages) {
    if (s.getNumReductionLoops() == 0)
      continue;
    if (leading(s) < n || (isBlockReduction(s) && !matchCombiner(s)))
      return false;
  }
  if (static_cast<int64_t>(rowSizes.size()) != n || product(rowSizes) > INT32_MAX)
    return false;
  // Every stage (and absorbed epilogue) runs over the rows first and touches the
  // buffers the kernel writes only in its own row.
  SmallVector<linalg::GenericOp> all = builder.stagesAndEpilogues();
  llvm::DenseSet<Value> written, read;
  for (linalg::GenericOp s : all) {
    for (Value v : s.getDpsInits())
      written.insert(viewRoot(v));
    for (Value v : s.getDpsInputs())
      read.insert(viewRoot(v));
  }
  // An output no stage reads may be written at any index that names its row.
  auto writesOwnRow = [&](linalg::GenericOp s, OpOperand &o) {
    AffineMap map = s.getMatchingIndexingMap(&o);
    if (!s.isDpsInit(&o) || read.contains(viewRoot(o.get())) || !map.isProjectedPermutation())
      return false;
    for (int64_t d = 0; d < n; ++d)
      if (!map.isFunctionOfDim(d))
        return false;
    return true;
  };
  int64_t longest = 1;
  for (linalg::GenericOp s : all) {
    SmallVector<int64_t> ranges = s.getStaticLoopRanges();
    if (static_cast<int64_t>(ranges.size()) < n ||
        !std::equal(rowSizes.begin(), rowSizes.end(), ranges.begin()))
      return false;
    for (int64_t i = 0; i < n; ++i)
      if (s.getIteratorTypesArray()[i] != utils::IteratorType::parallel)
        return false;
    for (OpOperand &o : s->getOpOperands()) {
      if (!isa<MemRefType>(o.get().getType()) || !written.contains(viewRoot(o.get())))
        continue;
      if ((!leadsWithRows(s.getMatchingIndexingMap(&o), n) || !keepsRows(o.get(), n)) &&
          !writesOwnRow(s, o))
        return false;
    }
    // The threads stride over a row's outputs (its elements, for a row reduction).
    LoopDims dims(s);
    int64_t perRow = isBlockReduction(s) ? product(dims.redSizes)
                                         : product(ArrayRef<int64_t>(dims.parSizes).drop_front(n));
    longest = std::max(longest, perRow);
  }

  Location loc = stages.front().getLoc();
  int64_t threads = 32;
  while (threads < kMaxThreadsPerBlock && threads < longest)
    threads *= 2;
  OpBuilder b(stages.front().getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  SmallVector<Value> row = delinearize(b, loc, bid, rowSizes);
  for (linalg::GenericOp s : stages) {
    LoopDims dims(s);
    SmallVector<Value> loopIdx(dims.ranges.size());
    for (int64_t i = 0; i < n; ++i)
      loopIdx[i] = row[i];
    if (isBlockReduction(s)) {
      emitBlockReduce(builder, b, s, dims, *matchCombiner(s), loopIdx, tid, threads);
    } else {
      // The threads stride over the row's outputs: elementwise, or reduced
      // serially by the thread that owns the output (a row contraction).
      builder.strideOverOutputs(b, s, dims, loopIdx, n, tid, threads);
    }
    // The next stage reads what this one wrote anywhere in the row.
    b.create<gpu::BarrierOp>(loc);
  }
  builder.finishStage(b, fn, {product(rowSizes), 1, 1}, {threads, 1, 1}, /*sync=*/true);
  return true;
}

} // namespace kiln
