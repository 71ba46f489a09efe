//===- CudaSimTarget.h - The cuda-sim target -------------------*- C++ -*-===//
//
// The `cuda-sim` target, a checker: the cuda target's kernels (the same
// kiln-map-to-gpu mapping and math expansion) turned into host functions that call
// the SIMT simulator (kiln-simulate-gpu, runtime/SimRuntime.h), compiled like host
// kernels, and run stage by stage with the geometry the mapping chose.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_SIM_CUDASIMTARGET_H
#define KILN_CODEGEN_CUDA_SIM_CUDASIMTARGET_H

#include "codegen/Target.h"

namespace kiln {

std::unique_ptr<Target> createCudaSimTarget(const TargetOptions &options,
                                            std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_SIM_CUDASIMTARGET_H
