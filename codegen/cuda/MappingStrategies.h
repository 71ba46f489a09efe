//===- MappingStrategies.h - How a stage maps to the GPU -------*- C++ -*-===//
//
// kiln-map-to-gpu maps each stage by the first strategy that fits, in this order:
//
//   tensor-core        (TensorCoreContraction.cpp) a contraction whose operands are
//   contraction        f16 or bf16 (after conversions of each operand alone) and whose
//                      accumulator is f32: warps of mma.sync m16n8k16 (nvgpu), the
//                      epilogue applied to the accumulator registers.
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

#include <functional>
#include <optional>

namespace kiln {

/// A contraction's loop dims split by operand: the rows (dims only the row operand
/// indexes), the columns (only the column operand: the side holding the output's
/// innermost dim) and the batch (both, or the output only); the reduction is
/// `LoopDims::red`.
struct ContractionDims {
  unsigned rowOperand = 0, colOperand = 1;
  llvm::SmallVector<unsigned> rowDims, colDims, batch;
  int64_t rows = 0, cols = 0, k = 0, batches = 0;
};

/// `op`'s dims as a contraction of two memref operands into one output (GEMM,
/// batched GEMM, convolution as implicit GEMM: no linalg.index, only the operands,
/// the accumulator and constants flowing into the body, each operand read once);
/// nullopt when it is not one.
std::optional<ContractionDims> splitContraction(mlir::linalg::GenericOp op,
                                                const LoopDims &dims);

/// `operand`'s indexing map with every loop dim of range 1 at 0 (a 1x1
/// convolution's window dims): what is left shows how it runs in memory.
mlir::AffineMap mapWithoutUnitDims(mlir::linalg::GenericOp op, mlir::OpOperand &operand,
                                   llvm::ArrayRef<int64_t> ranges);

/// One operand's tile of a contraction, staged into shared memory K step by K step.
struct OperandTile {
  unsigned operand;                  // the linalg operand
  llvm::ArrayRef<unsigned> outerDims; // its non-reduction dims (rows or columns)
  mlir::Value base;                  // the block's first outer index
  int64_t outerSize, outerTile;      // the outer extent, and the tile's
  /// Storage: buf[outer][k] (K innermost) or buf[k][outer].
  bool kInner;
  /// The walk: consecutive threads along the outer dims (where the operand is
  /// contiguous along them) or along K.
  bool walkOuter;
  /// Applied to each loaded element before it is stored (a conversion to the
  /// tile's element type); null: stored as loaded.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Value)> convert;
};

/// How the block's threads walk an operand tile's K step: `groups` groups a thread
/// of `width` consecutive elements (several where the operand runs contiguously
/// along the walk and 16 bytes of them are aligned), group g = tid + threads * r.
struct TileWalk {
  /// One group at a K step: its place in the tile (o, kk), the operand's outer
  /// and K indices, whether it is inside the operand (a group is all in or all
  /// out).
  struct Group {
    mlir::Value o, kk, outer, k, inBounds;
  };

  TileWalk(StageBuilder &builder, mlir::linalg::GenericOp op, const LoopDims &dims,
           const OperandTile &tile, int64_t kt, mlir::Value tid, int64_t threads);
  Group group(mlir::OpBuilder &b, int64_t r, mlir::Value k0) const;
  /// `loopIdx` at element j of `g`.
  void setIndices(mlir::OpBuilder &b, const Group &g, int64_t j,
                  llvm::SmallVectorImpl<mlir::Value> &loopIdx) const;
  /// The group's elements, converted to `stored` (zero outside the operand).
  llvm::SmallVector<mlir::Value> load(mlir::OpBuilder &b, const Group &g, mlir::Type stored,
                                      llvm::SmallVectorImpl<mlir::Value> &loopIdx) const;
  /// Stores them into `buf` at `prefix` (a stage of a multi-buffered tile) + (o, kk).
  void store(mlir::OpBuilder &b, const Group &g, mlir::ValueRange values, mlir::Value buf,
             mlir::ValueRange prefix) const;

  StageBuilder &builder;
  /// Mutable: an op handle is a value, and its generated accessors are not const.
  mutable mlir::linalg::GenericOp op;
  const LoopDims &dims;
  const OperandTile &tile;
  int64_t kt;
  mlir::Value tid;
  int64_t threads, inner = 1, width = 1, groups = 0;
  /// Element j of a group is its first one with walked dim `stepDim` (the
  /// fastest but unit dims) plus j.
  bool stepFastest = false;
  unsigned stepDim = 0;
};

/// Stages `tile` for the K step starting at `k0` (`kt` deep, of `k`): the block's
/// `threads` threads load its elements in turn from `tid`, several consecutive
/// ones at a time where the operand runs contiguously along the walk (16 bytes
/// at most), zero outside the operand. `loopIdx` holds the batch indices.
void stageOperandTile(StageBuilder &builder, mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                      const LoopDims &dims, const OperandTile &tile, mlir::Value buf,
                      mlir::Value k0, int64_t kt, mlir::Value tid, int64_t threads,
                      llvm::SmallVectorImpl<mlir::Value> &loopIdx);

/// Sets `loopIdx` at `dims` to `linear` delinearized over their ranges.
void setLoopDims(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> ranges,
                 llvm::ArrayRef<unsigned> dims, mlir::Value linear,
                 llvm::SmallVectorImpl<mlir::Value> &loopIdx);

/// Builds the stage with warps of tensor-core mma.sync when its operands are f16
/// or bf16 (or, with `tf32`, f32) into an f32 accumulator and its rows, columns
/// and K are at least `minSize`; false (nothing built) otherwise. Where `op` is a contraction,
/// `reason` says what was built or why it was not (the report's engine_reason);
/// it is left alone otherwise.
struct TensorCoreOptions {
  bool enabled = true;  // false: every contraction SIMT (--no-tensor-cores)
  int64_t minSize = 16; // the fewest rows, columns and K
  bool tf32 = false;    // f32 contractions too, as TF32 (m16n8k8)
};
bool mapTensorCoreContraction(StageBuilder &builder, mlir::linalg::GenericOp op,
                              const LoopDims &dims, const TensorCoreOptions &options,
                              std::string &reason);

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
