//===- CudaCodegen.h - The cuda target's codegen phase ----------*- C++ -*-===//
//
// The cuda codegen phase: `kiln-map-to-gpu` turns every kernel into gpu.funcs
// mapped to blocks and threads for one architecture (GpuArch.h), recorded as the
// gpu.module's #nvvm.target; `kiln-expand-math` replaces math without a PTX
// instruction; the gpu.module is lowered to the NVVM/LLVM dialects, and emitPtx
// translates it to LLVM IR and runs LLVM's NVPTX backend in-process. No CUDA
// toolkit is needed to compile a model.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_CUDACODEGEN_H
#define KILN_CODEGEN_CUDA_CUDACODEGEN_H

#include "codegen/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

/// kiln-map-to-gpu for `gpuArch`, then kiln-expand-math: the mapping the cuda
/// and cuda-sim targets share (their plan phase's target step).
void buildGpuMappingPipeline(mlir::OpPassManager &pm, const std::string &gpuArch,
                             const GpuOptions &gpu);

/// The cuda codegen phase: the mapped gpu.module -> NVVM + LLVM dialects.
/// The cuda codegen phase: the kernels lowered to NVVM and the LLVM dialect;
/// with a `cacheDir`, first kiln-take-cached-kernels (the kernels it holds are
/// left out).
void buildCudaCodegenPipeline(mlir::OpPassManager &pm, const std::string &cacheDir = "");

/// The kernel cache's directory: $KILN_KERNEL_CACHE ("off": none), else
/// $XDG_CACHE_HOME/kiln/kernels or ~/.cache/kiln/kernels; empty: no cache.
std::string kernelCacheDir();

/// What every cached kernel's PTX depends on beside its module: LLVM's version,
/// Kiln's PTX form and the libdevice it would link.
std::string kernelCacheContext();

/// A kernel's cache key (hex SHA-256): its IR as mapped and `shared`, what every
/// kernel of its module depends on (the target, the lowering pipeline,
/// kernelCacheContext()).
std::string kernelCacheKey(mlir::gpu::GPUFuncOp fn, llvm::StringRef shared);

/// Translates `gpu.module @kiln_kernels` to PTX for the chip of its #nvvm.target.
/// With `resources`, where ptxas is found ($KILN_PTXAS, "off": never; else
/// /usr/local/cuda/bin or PATH), each kernel is also assembled for that chip and
/// its registers, shared memory, stack and spills go to `resources` (in kernel
/// order); `resourcesFrom` says "ptxas <chip>" or why there are none.
bool emitPtx(mlir::ModuleOp module, std::string &ptx, std::string &error,
             std::vector<KernelResources> *resources = nullptr,
             std::string *resourcesFrom = nullptr);

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_CUDACODEGEN_H
