//===- TimeLoop.cpp - A kernel with a time loop as one launch ---------------===//
//
// A recurrent op's time loop (its Scan, an scf.for at kernel level) needs every
// step to see the whole state the previous one wrote, so the kernel is one launch
// of one block: the block's threads stride over each stage's outputs (reducing a
// contraction's serially, as the row kernel does), a barrier after every stage,
// and the loop runs around the stages of its body; stages before and after it (the
// initial state's copy, the final state's) run once.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln {

LogicalResult mapTimeLoopKernel(StageBuilder &builder) {
  scf::ForOp timeLoop = builder.getTimeLoop();
  int64_t longest = 1;
  for (linalg::GenericOp s : builder.getStageOps())
    longest = std::max(longest, LoopDims(s).outputs);
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

  llvm::DenseSet<Operation *> stages;
  for (linalg::GenericOp s : builder.getStageOps())
    stages.insert(s);
  // The block's threads stride over the stage's outputs; a barrier after it.
  auto emitStage = [&](OpBuilder &sb, linalg::GenericOp s) {
    LoopDims dims(s);
    SmallVector<Value> loopIdx(dims.ranges.size());
    builder.strideOverOutputs(sb, s, dims, loopIdx, /*rowDims=*/0, tid, threads);
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
  builder.finishStage(b, fn, {1, 1, 1}, {threads, 1, 1}, /*sync=*/true);
  return success();
}

} // namespace kiln
