//===- SimModel.cpp - The cuda-sim target's model hooks -------------------===//
//
// This file implements kSimHooks (HostModel.h): the host target's run, with the
// library calls on the mock cuBLASLt and cuDNN in host memory (SimCudaLibrary).
// Apart from HostModel.cpp so that a host model does not link the CUDA libraries'
// code.
//
//===----------------------------------------------------------------------===//
#include "HostModelImpl.h"
#include "kiln/runtime/CudaLibraries.h"

namespace kiln::rt {

constexpr TargetHooks kSimHooks = hostHooks<SimCudaLibrary>();

} // namespace kiln::rt
