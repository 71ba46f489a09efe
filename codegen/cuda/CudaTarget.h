//===- CudaTarget.h - The cuda target --------------------------*- C++ -*-===//
//
// The `cuda` target: kernels mapped to the GPU and compiled to PTX in-process
// (CudaCodegen.h), and a generated runtime on the CUDA driver (CudaRuntime.h) that
// launches every stage of every kernel on the plan's streams.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_CUDATARGET_H
#define KILN_CODEGEN_CUDA_CUDATARGET_H

#include "codegen/Target.h"

namespace kiln {

std::unique_ptr<Target> createCudaTarget(const TargetOptions &options, std::string &error);

/// kiln-select-library-calls for cuBLASLt and cuDNN, unless `--contractions kiln`
/// (the cuda and cuda-sim targets' kernel mapping starts with it).
void buildCudaLibraryCallsPipeline(mlir::OpPassManager &pm, const TargetOptions &options);

/// The GPU targets' scheduling defaults: the device model (the one named, else
/// h200) and how many streams a plan may use.
std::string cudaDeviceModel(const TargetOptions &options);
constexpr int64_t kCudaDefaultMaxStreams = 4;

/// The stages kiln-map-to-gpu recorded on `launch`; null with `error` when it has
/// none (the GPU mapping did not run).
mlir::ArrayAttr gpuStagesOf(LaunchOp launch, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_CUDATARGET_H
