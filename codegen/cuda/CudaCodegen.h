//===- CudaCodegen.h - The cuda target -------------------------*- C++ -*-===//
//
// The cuda codegen phase: `kiln-map-to-gpu` turns every kernel into gpu.funcs
// mapped to blocks and threads (MapToGpu.cpp), the gpu.module is lowered to the
// NVVM/LLVM dialects, and emitPtx translates it to LLVM IR and runs LLVM's NVPTX
// backend in-process. No CUDA toolkit is needed to compile a model.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_CUDACODEGEN_H
#define KILN_CODEGEN_CUDA_CUDACODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace kiln {

/// The GPU architectures PTX can be generated for; sm_80 is the default (the
/// driver JITs its PTX for newer GPUs).
bool isSupportedGpuArch(const std::string &arch);

std::unique_ptr<mlir::Pass> createMapToGpu();
/// kiln-gpu-to-sim: the mapped gpu.funcs as host functions calling the simulator.
std::unique_ptr<mlir::Pass> createSimulateGpu();

/// kiln-map-to-gpu, then gpu.module -> NVVM + LLVM dialects.
void buildCudaCodegenPipeline(mlir::OpPassManager &pm);
/// The `cuda-sim` target: kiln-map-to-gpu, kiln-gpu-to-sim, then the host pipeline.
void buildCudaSimCodegenPipeline(mlir::OpPassManager &pm);

/// Translates `gpu.module @kiln_kernels` to PTX for `arch` (e.g. "sm_80").
bool emitPtx(mlir::ModuleOp module, const std::string &arch, std::string &ptx,
             std::string &error);

void registerCudaCodegenPasses();

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_CUDACODEGEN_H
