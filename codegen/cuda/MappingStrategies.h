//===- MappingStrategies.h - How a stage maps to the GPU -------*- C++ -*-===//
//
// kiln-map-to-gpu maps each stage by the first strategy that fits, in this order:
//
//   tiled contraction  (TiledContraction.cpp) two operands combined over reduction
//                      dims into an output whose parallel dims split into rows
//                      (only the first operand) and columns (only the second):
//                      GEMM, batched GEMM, convolution as implicit GEMM.
//   block reduction    (BlockReduction.cpp) one output per block, threads stride
//                      over the reduction and combine with gpu.all_reduce: softmax
//                      and norm statistics, Reduce*, global pooling.
//   thread per output  (ThreadPerOutput.cpp) everything else, consecutive threads
//                      on consecutive outputs.
//
// Before those, a whole kernel may map as one row kernel (BlockReduction.cpp):
// every stage row-local over the same leading loops (a Softmax, a LayerNorm), one
// block per row runs the stages in turn, barriers between them. A kernel with a
// time loop (TimeLoop.cpp) is one launch that runs the loop, one block per row
// (the batch) where the stages allow, else one block.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_MAPPINGSTRATEGIES_H
#define KILN_CODEGEN_CUDA_MAPPINGSTRATEGIES_H

#include "codegen/cuda/GpuArch.h"
#include "codegen/cuda/StageBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>

namespace kiln {

/// Builds the stage as a tiled contraction of at most `maxTile` (the architecture's);
/// false (nothing built) when it is not one.
bool mapTiledContraction(StageBuilder &builder, mlir::linalg::GenericOp op,
                         const LoopDims &dims, const ContractionTile &maxTile);

/// The combiner of a reduction body `yield C(%out, x)`, as a gpu.all_reduce kind.
struct Combiner {
  mlir::Operation *op = nullptr;
  mlir::Value other; // x
  mlir::gpu::AllReduceOperation kind;
};

/// The combiner of `op`'s single output when a block reduction can compute it.
std::optional<Combiner> matchCombiner(mlir::linalg::GenericOp op);

/// Builds the stage as a block reduction over `combiner`.
void mapBlockReduction(StageBuilder &builder, mlir::linalg::GenericOp op,
                       const LoopDims &dims, const Combiner &combiner);

/// Builds the whole kernel as one launch, one block per row, when all its stages
/// work row by row (reductions over trailing loops and elementwise stages that
/// read and write the kernel's own buffers only in their own row); false
/// (nothing built) otherwise.
bool mapRowKernel(StageBuilder &builder);

/// Builds a kernel with a time loop (StageBuilder::getTimeLoop) as one launch, a
/// block per row where every stage keeps to its row, else one block: the stages in
/// turn, the loop's every iteration, barriers between.
mlir::LogicalResult mapTimeLoopKernel(StageBuilder &builder);

/// Builds the stage with one thread per output (four for 32-bit elementwise stages).
mlir::LogicalResult mapThreadPerOutput(StageBuilder &builder, mlir::linalg::GenericOp op,
                                       const LoopDims &dims);

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_MAPPINGSTRATEGIES_H
