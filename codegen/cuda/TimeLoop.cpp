//===- TimeLoop.cpp - A kernel with a time loop as one launch ---------------===//
//
// A recurrent op's time loop (its Scan, an scf.for at kernel level) needs every
// step to see the state the previous one wrote, so the kernel is one launch whose
// blocks never wait for each other: one block per row, where every stage runs
// over the same leading rows (a recurrent op's batch) and touches the buffers the
// kernel writes only in its own row, else one block. The block's threads stride
// over each stage's outputs in its row (reducing a contraction's serially, as the
// row kernel does), a barrier after every stage, and the loop runs around the
// stages of its body; stages before and after it (the initial state's copy, the
// final state's) run once.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"
#include "passes/fusion/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace kiln {
namespace {

/// For each of the first `n` dims of view `v`, the dim of its root buffer it is
/// (through rank-reducing subviews that take those dims whole); nullopt when a
/// view of another kind, or one that offsets or cuts them, is in between.
std::optional<SmallVector<int64_t>> rootDims(Value v, int64_t n) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < n; ++d)
    dims.push_back(d);
  while (Operation *def = v.getDefiningOp()) {
    auto sub = dyn_cast<memref::SubViewOp>(def);
    if (!sub)
      return isa<ViewLikeOpInterface>(def) ? std::nullopt
                                           : std::optional<SmallVector<int64_t>>(dims);
    // The source dims the view keeps, in order (dropped ones are unit dims).
    llvm::SmallBitVector dropped = sub.getDroppedDims();
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < sub.getSourceType().getRank(); ++d)
      if (!dropped.test(d))
        kept.push_back(d);
    for (int64_t &d : dims) {
      d = kept[d];
      if (sub.getStaticOffsets()[d] != 0 || sub.getStaticStrides()[d] != 1 ||
          sub.getStaticSizes()[d] != sub.getSourceType().getDimSize(d))
        return std::nullopt;
    }
    v = sub.getSource();
  }
  return dims;
}

/// The rows every stage runs over first (their leading parallel loops, sizes equal
/// across stages), as many as keep each buffer the kernel writes touched only in
/// its own row: every access indexes it by the row loops, at the same root dims.
SmallVector<int64_t> timeLoopRows(StageBuilder &builder) {
  SmallVector<linalg::GenericOp> stages(builder.getStageOps());
  llvm::DenseSet<Value> written;
  for (linalg::GenericOp s : stages)
    for (Value v : s.getDpsInits())
      written.insert(viewRoot(v));
  SmallVector<int64_t> rows(stages.front().getStaticLoopRanges());
  for (linalg::GenericOp s : stages) {
    SmallVector<int64_t> ranges = s.getStaticLoopRanges();
    auto iters = s.getIteratorTypesArray();
    size_t n = 0;
    while (n < rows.size() && n < ranges.size() && ranges[n] == rows[n] &&
           iters[n] == utils::IteratorType::parallel)
      ++n;
    rows.resize(n);
  }
  for (int64_t n = rows.size(); n > 0; --n) {
    llvm::DenseMap<Value, SmallVector<int64_t>> at;
    bool ok = true;
    for (linalg::GenericOp s : stages)
      for (OpOperand &o : s->getOpOperands()) {
        if (!ok || !isa<MemRefType>(o.get().getType()) || !written.contains(viewRoot(o.get())))
          continue;
        std::optional<SmallVector<int64_t>> dims = rootDims(o.get(), n);
        ok = dims && leadsWithRows(s.getMatchingIndexingMap(&o), n);
        if (!ok)
          break;
        auto [it, inserted] = at.try_emplace(viewRoot(o.get()), *dims);
        ok = inserted || it->second == *dims;
      }
    if (ok)
      return SmallVector<int64_t>(rows.begin(), rows.begin() + n);
  }
  return {};
}

} // namespace

LogicalResult mapTimeLoopKernel(StageBuilder &builder) {
  scf::ForOp timeLoop = builder.getTimeLoop();
  SmallVector<int64_t> rows = timeLoopRows(builder);
  int64_t n = rows.size();
  if (product(rows) > INT32_MAX) {
    rows.clear();
    n = 0;
  }
  int64_t longest = 1;
  for (linalg::GenericOp s : builder.getStageOps())
    longest = std::max(longest, LoopDims(s).outputs / std::max<int64_t>(product(rows), 1));
  if (longest > INT32_MAX)
    return timeLoop.emitError("kernel ")
           << builder.getKernel().getName() << ": a time loop's stage is too large";
  int64_t threads = 32;
  while (threads < kMaxThreadsPerBlock && threads < longest)
    threads *= 2;
  Location loc = timeLoop.getLoc();
  OpBuilder b(timeLoop.getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  SmallVector<Value> row;
  if (n > 0)
    row = delinearize(b, loc, b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x), rows);

  llvm::DenseSet<Operation *> stages;
  for (linalg::GenericOp s : builder.getStageOps())
    stages.insert(s);
  // The block's threads stride over the stage's outputs; a barrier after it.
  auto emitStage = [&](OpBuilder &sb, linalg::GenericOp s) {
    LoopDims dims(s);
    SmallVector<Value> loopIdx(dims.ranges.size());
    for (int64_t i = 0; i < n; ++i)
      loopIdx[i] = row[i];
    builder.strideOverOutputs(sb, s, dims, loopIdx, n, tid, threads);
    sb.create<gpu::BarrierOp>(loc);
  };

  for (Operation &op : builder.getKernel().getBody().front()) {
    if (stages.contains(&op)) {
      emitStage(b, cast<linalg::GenericOp>(op));
      continue;
    }
    if (&op != timeLoop.getOperation())
      continue; // the prelude (cloned by startStage), deallocations, the return
    IRMapping &mapping = builder.mapping;
    auto loop = b.create<scf::ForOp>(loc, mapping.lookupOrDefault(timeLoop.getLowerBound()),
                                     mapping.lookupOrDefault(timeLoop.getUpperBound()),
                                     mapping.lookupOrDefault(timeLoop.getStep()));
    mapping.map(timeLoop.getInductionVar(), loop.getInductionVar());
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    for (Operation &inner : timeLoop.getBody()->without_terminator()) {
      if (stages.contains(&inner))
        emitStage(lb, cast<linalg::GenericOp>(inner));
      else if (!isa<memref::DeallocOp>(inner))
        lb.clone(inner, mapping); // views at the step, index arithmetic
    }
  }
  builder.finishStage(b, fn, {std::max<int64_t>(product(rows), 1), 1, 1}, {threads, 1, 1},
                      /*sync=*/true);
  return success();
}

} // namespace kiln
