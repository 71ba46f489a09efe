//===- MapToGpu.cpp - Map kernels to blocks and threads -------------------===//
//
// This file implements `kiln-map-to-gpu` (see Passes.td), the first step of the
// cuda and cuda-sim codegen phases. Every kiln.kernel function (memref arguments,
// linalg ops) becomes one or more `gpu.func`s in `gpu.module @kiln_kernels` — one
// per top-level linalg op (a "stage"), launched in order on the kernel's stream.
// StageBuilder prepares the kernel; each stage is mapped by the first strategy
// that fits (MappingStrategies.h): tensor-core contraction, tiled contraction, block reduction, thread per
// output. Independent consecutive stages with one block shape (a Concat's
// producers) are then merged into one launch.
//
// A `linalg.fill` of a reduction's output is folded into the reduction's initial
// value. Buffers a kernel allocates for its own use become views of one scratch
// argument, an arena slice of the launch's own that memory planning places. The gpu.module records the architecture
// (#nvvm.target, from the gpu-arch option); every launch of the plan records its
// stages (#kiln.gpu_stage) and its scratch slice, so the emitter bakes them in.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuArch.h"
#include "codegen/cuda/MappingStrategies.h"
#include "codegen/cuda/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_MAPTOGPU
#include "codegen/cuda/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The engine of a kernel's contractions (kiln.engine, kiln.engine_reason): on
/// tensor cores where any stage is, with why; SIMT with why not otherwise.
struct EngineChoice {
  StringRef engine;
  std::string reason;
  void add(bool tensorCoresBuilt, std::string why) {
    if (engine == kEngineTensorCores || (!tensorCoresBuilt && !engine.empty()))
      return;
    engine = tensorCoresBuilt ? kEngineTensorCores : kEngineSimt;
    reason = std::move(why);
  }
};

/// A kernel function's text without its name (generic form, its own value
/// numbering): equal for kernels that map to the same stages.
std::string structuralKey(func::FuncOp fn) {
  StringAttr name = fn.getSymNameAttr();
  fn.setSymName("kernel");
  std::string key;
  llvm::raw_string_ostream os(key);
  fn->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  fn.setSymNameAttr(name);
  return key;
}

/// Maps every stage of the kernel `builder` prepared.
LogicalResult mapStages(StageBuilder &builder, const GpuArch &arch,
                        const TensorCoreOptions &tc, EngineChoice &choice) {
  for (linalg::GenericOp op : builder.getStageOps())
    if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
      return op.emitError("kernel ") << builder.getKernel().getName()
                                     << ": dynamic loop bounds have no cuda mapping";
  if (builder.getTimeLoop())
    return mapTimeLoopKernel(builder);
  if (mapRowKernel(builder)) {
    for (linalg::GenericOp op : builder.getStageOps())
      if (LoopDims dims(op); splitContraction(op, dims))
        choice.add(false, "fused row by row with its neighbours (attention: scores, "
                          "softmax and P.V a row at a time), which mma.sync's tiles cannot "
                          "take");
    return success();
  }
  for (linalg::GenericOp op : builder.getStageOps()) {
    LoopDims dims(op);
    std::string reason;
    if (tc.enabled && mapTensorCoreContraction(builder, op, dims, tc, reason)) {
      choice.add(true, reason);
      continue;
    }
    if (!tc.enabled && splitContraction(op, dims))
      reason = "tensor cores are off (--no-tensor-cores)";
    if (!reason.empty())
      choice.add(false, reason);
    if (mapTiledContraction(builder, op, dims, arch.tile))
      continue;
    std::optional<Combiner> combiner = matchCombiner(op);
    bool wide = dims.length >= 256 || (dims.length >= 32 && dims.outputs < 4096);
    if (combiner && !dims.red.empty() && wide && dims.outputs > 0 &&
        dims.outputs <= INT32_MAX) {
      mapBlockReduction(builder, op, dims, *combiner);
      continue;
    }
    if (failed(mapThreadPerOutput(builder, op, dims)))
      return failure();
  }
  builder.mergeIndependentStages();
  return success();
}

struct MapToGpuPass : kiln::impl::MapToGpuBase<MapToGpuPass> {
  using MapToGpuBase::MapToGpuBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const GpuArch *arch = findGpuArch(gpuArch);
    if (!arch) {
      module.emitError() << "kiln-map-to-gpu: gpu-arch '" << gpuArch
                         << "' is not supported (" << gpuArchList() << ")";
      return signalPassFailure();
    }
    PlanOp plan;
    module.walk([&](PlanOp p) { plan = p; });
    if (!plan) {
      module.emitError("kiln-map-to-gpu needs a kiln.plan");
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    auto target = NVVM::NVVMTargetAttr::get(b.getContext(), /*optLevel=*/3,
                                            "nvptx64-nvidia-cuda", arch->name,
                                            arch->ptxFeature);
    auto gpuModule = b.create<gpu::GPUModuleOp>(module.getLoc(), "kiln_kernels",
                                                b.getArrayAttr({target}));
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    auto isKernel = KilnDialect::KernelAttrHelper(&getContext());
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (isKernel.isAttrPresent(fn))
        kernels.push_back(fn);
    struct Mapped {
      ArrayAttr stages;
      int64_t scratchBytes;
      EngineChoice engine;
    };
    llvm::StringMap<Mapped> mapped;
    // Kernels with the same body (a transformer's layers, a ResNet's repeated
    // blocks) are mapped once: their launches share the first one's stages.
    llvm::StringMap<StringRef> mappedAs;
    for (func::FuncOp fn : kernels) {
      auto [first, isNew] = mappedAs.try_emplace(structuralKey(fn), fn.getName());
      if (!isNew) {
        Mapped same = mapped.lookup(first->second);
        mapped[fn.getName()] = same;
        continue;
      }
      StageBuilder builder(fn, gpuModule);
      EngineChoice engine;
      if (failed(builder.prepare()) ||
          failed(mapStages(builder, *arch, {tensorCores, tensorCoreMinSize, tf32}, engine)))
        return signalPassFailure();
      mapped[fn.getName()] = {b.getArrayAttr(builder.getStages()),
                              builder.getScratchBytes(), std::move(engine)};
    }
    for (func::FuncOp fn : kernels)
      fn.erase();
    WalkResult result = plan.getBody().walk([&](LaunchOp l) {
      auto it = mapped.find(l.getKernel());
      if (it == mapped.end()) {
        l.emitError() << "launches @" << l.getKernel() << ", which is no kernel function";
        return WalkResult::interrupt();
      }
      l.setGpuStagesAttr(it->second.stages);
      if (const EngineChoice &e = it->second.engine; !e.engine.empty()) {
        KilnDialect::EngineAttrHelper(l.getContext()).setAttr(l, b.getStringAttr(e.engine));
        KilnDialect::EngineReasonAttrHelper(l.getContext())
            .setAttr(l, b.getStringAttr(e.reason));
      }
      if (int64_t bytes = it->second.scratchBytes) {
        OpBuilder sb(l);
        auto slice = sb.create<SliceOp>(l.getLoc(), MemRefType::get({bytes}, sb.getI8Type()),
                                        sb.getI64IntegerAttr(-1), sb.getI64IntegerAttr(bytes));
        l.getScratchMutable().assign(slice.getBuffer());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    // Block reductions -> shuffles + shared memory.
    RewritePatternSet patterns(&getContext());
    populateGpuAllReducePatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(gpuModule, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
