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

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_CUDATARGET_H
