//===- StageBuilder.h - Build the gpu.funcs of one kernel ------*- C++ -*-===//
//
// kiln-map-to-gpu maps each kernel function stage by stage (one stage per top-level
// linalg op). StageBuilder holds what every mapping strategy needs: the kernel's
// prelude (scalar code, views, scratch buffers), fills folded into reductions, and
// the helpers that start a gpu.func, load operands at loop indices, clone a linalg
// body and record the stage's geometry. Two kinds of stage never launch: a padding
// (the fill and copy of a tensor.pad's buffer: readers load the source with bounds
// checks) and an epilogue (an elementwise stage that alone reads a reduction's
// intermediate at the same index: applied where the reduction stores). The strategies themselves live in one file
// each (MappingStrategies.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_STAGEBUILDER_H
#define KILN_CODEGEN_CUDA_STAGEBUILDER_H

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {

/// Threads per block the strategies use at most.
constexpr int64_t kMaxThreadsPerBlock = 256;

int64_t product(llvm::ArrayRef<int64_t> sizes);
/// The buffer `v` views (through subviews, reshapes, ...), or `v` itself.
mlir::Value viewRoot(mlir::Value v);
int64_t ceilDiv(int64_t a, int64_t b);
mlir::Value cIndex(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// Index arithmetic with a constant c: x + c (x itself for c = 0), x * c, x / c and
/// x % c (unsigned), x < c (unsigned).
mlir::Value addIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t c);
mlir::Value mulIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t c);
mlir::Value divIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t c);
mlir::Value remIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t c);
mlir::Value ltIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t c);
/// Row-major delinearization of `linear` over `sizes`.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value linear,
                                           llvm::ArrayRef<int64_t> sizes);
/// `ranges` at `dims`.
llvm::SmallVector<int64_t> sizesOf(llvm::ArrayRef<int64_t> ranges,
                                   llvm::ArrayRef<unsigned> dims);

/// A stage's loop nest: static ranges, parallel and reduction dims (in loop
/// order), their extents and element counts.
struct LoopDims {
  llvm::SmallVector<int64_t> ranges;
  llvm::SmallVector<unsigned> par, red;
  llvm::SmallVector<int64_t> parSizes, redSizes;
  int64_t outputs = 1, length = 1;

  explicit LoopDims(mlir::linalg::GenericOp op);
};

/// Builds the gpu.funcs (stages) of one kernel function.
class StageBuilder {
public:
  StageBuilder(mlir::func::FuncOp kernel, mlir::gpu::GPUModuleOp gpuModule)
      : kernel(kernel), gpuModule(gpuModule) {}

  /// Generalizes the kernel's linalg ops into stages, collects the prelude, folds
  /// fills into reductions and places scratch buffers. Emits a diagnostic on
  /// failure.
  mlir::LogicalResult prepare();

  mlir::func::FuncOp getKernel() const { return kernel; }
  llvm::ArrayRef<mlir::linalg::GenericOp> getStageOps() const { return stageOps; }
  /// The stages built so far.
  llvm::ArrayRef<mlir::Attribute> getStages() const { return stages; }
  /// Bytes of kernel-internal buffers, a scratch argument of every stage.
  int64_t getScratchBytes() const { return scratch; }

  /// Creates a gpu.func with the kernel's arguments (plus scratch), the prelude
  /// cloned into it, and `b` positioned after it.
  mlir::gpu::GPUFuncOp startStage(mlir::OpBuilder &b, llvm::ArrayRef<int64_t> block);
  /// Closes `fn` and records its geometry; `sync`: its threads meet at barriers or
  /// exchange values by shuffles.
  void finishStage(mlir::OpBuilder &b, mlir::gpu::GPUFuncOp fn,
                   llvm::ArrayRef<int64_t> grid, llvm::ArrayRef<int64_t> block, bool sync);

  /// Loads the used inputs at `loopIdx`, clones the body; returns the yields.
  /// `skip` (the combiner) is left out; `outs` bind the output block arguments.
  llvm::SmallVector<mlir::Value> applyBody(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                                           mlir::ValueRange loopIdx, mlir::ValueRange outs,
                                           mlir::Operation *skip = nullptr);
  /// applyBody for an all-parallel op: the output block arguments its body uses
  /// are bound to the outputs' current values.
  llvm::SmallVector<mlir::Value> applyParallelBody(mlir::OpBuilder &b,
                                                   mlir::linalg::GenericOp op,
                                                   mlir::ValueRange loopIdx);
  /// The outputs of reduction stage `op` at the parallel indices in `loopIdx`,
  /// reduced in this thread: one scf.for per reduction dim carrying the outputs
  /// from their initial values (`loopIdx`'s reduction entries are zero after).
  llvm::SmallVector<mlir::Value> reduceSerially(mlir::OpBuilder &b,
                                                mlir::linalg::GenericOp op,
                                                const LoopDims &dims,
                                                llvm::SmallVectorImpl<mlir::Value> &loopIdx);
  /// Computes `op`'s outputs beyond its first `rowDims` parallel loops (set in
  /// `loopIdx`) with the block's `threads` threads striding over them from `tid`,
  /// each reducing its outputs serially; stores them (applying an epilogue).
  void strideOverOutputs(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                         const LoopDims &dims, llvm::SmallVectorImpl<mlir::Value> &loopIdx,
                         int64_t rowDims, mlir::Value tid, int64_t threads);
  mlir::Value loadOperand(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                          mlir::OpOperand &operand, mlir::ValueRange loopIdx);
  /// The output's initial value where it is the same everywhere (a folded fill's
  /// value); null where it is loaded.
  mlir::Value uniformInitialValue(mlir::linalg::GenericOp op, unsigned outIndex);
  /// The output's initial value: a folded fill's constant, or a load.
  mlir::Value initialValue(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                           unsigned outIndex, mlir::ValueRange loopIdx);
  /// Stores `value` into output `outIndex` of `op` at `loopIdx`; where `op` has an
  /// absorbed epilogue, applies it to the value and stores its results instead.
  void storeOutput(mlir::OpBuilder &b, mlir::linalg::GenericOp op, unsigned outIndex,
                   mlir::Value value, mlir::ValueRange loopIdx);
  bool hasEpilogue(mlir::linalg::GenericOp op) const { return epilogues.count(op); }
  /// Whether reads of `buffer` go to a padded source (loadOperand selects per element).
  bool isPadded(mlir::Value buffer) const { return paddings.count(buffer); }
  /// Merges runs of consecutive stages that touch disjoint memory (a Concat's
  /// producers, each writing its slice) and have as many threads per block into one
  /// launch: its blocks are the stages' blocks one after another, each running its
  /// stage's code with its own block and thread indices. Call after every stage op
  /// was mapped to exactly one stage.
  void mergeIndependentStages();
  /// The stages, then the absorbed epilogues (each keyed by the stage that applies it).
  llvm::SmallVector<mlir::linalg::GenericOp> stagesAndEpilogues() const;

  /// The kernel's time loop (a recurrent op's Scan as an scf.for at kernel level),
  /// whose body's stages run every iteration; null when there is none.
  mlir::scf::ForOp getTimeLoop() const { return timeLoop; }

  /// Kernel values -> their clones in the current stage.
  mlir::IRMapping mapping;

private:
  mlir::func::FuncOp kernel;
  mlir::gpu::GPUModuleOp gpuModule;
  llvm::SmallVector<mlir::Operation *> prelude;
  llvm::SmallVector<mlir::linalg::GenericOp> stageOps;
  mlir::scf::ForOp timeLoop;
  llvm::SmallVector<mlir::Attribute> stages;
  /// Reduction outputs whose initial value is a folded fill: (op, out) -> value.
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, mlir::Value> foldedInit;
  /// A padded buffer the kernel never materializes: reads of it load `source` at
  /// the index minus `low` where in bounds, `value` elsewhere.
  struct Padding {
    mlir::Value source, value;
    llvm::SmallVector<int64_t> low;
  };
  llvm::DenseMap<mlir::Value, Padding> paddings;
  /// Reduction stage -> the elementwise stage applied where it stores (its
  /// intermediate buffer is never written).
  llvm::DenseMap<mlir::Operation *, mlir::linalg::GenericOp> epilogues;
  /// Buffers no stage writes any more (paddings, epilogue intermediates).
  llvm::DenseSet<mlir::Value> elided;
  /// Epilogue intermediates: their readers take the stored value instead.
  llvm::DenseSet<mlir::Value> intermediates;
  void absorbPaddings();
  void absorbEpilogues();
  /// Kernel-internal buffers: alloc -> byte offset in the scratch argument.
  llvm::DenseMap<mlir::Operation *, int64_t> scratchOffsets;
  int64_t scratch = 0;
};

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_STAGEBUILDER_H
