//===- SimulateGpu.h - What the cuda-sim passes share ----------*- C++ -*-===//
#ifndef KILN_CODEGEN_CUDA_SIM_SIMULATEGPU_H
#define KILN_CODEGEN_CUDA_SIM_SIMULATEGPU_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The names of the globals that hold simulated shared memory
/// (kiln-simulate-gpu) start with this.
constexpr llvm::StringLiteral kSimSharedPrefix = "kiln_sim_shared.";

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_SIM_SIMULATEGPU_H
