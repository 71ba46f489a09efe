//===- CudaModel.h - What a cuda model's code fills in ----------*- C++ -*-===//
//
// The program of a model compiled for the cuda target: its PTX, the functions it
// launches, its sizes and its launch sequence (generated), which kiln_runtime loads
// and runs with kCudaHooks (CudaModel.cpp) on CudaModel and CudaContext
// (CudaRuntime.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDAMODEL_H
#define KILN_RUNTIME_CUDAMODEL_H

#include "kiln/runtime/CudaRuntime.h"
#include "kiln/runtime/LibraryCall.h"
#include "kiln/runtime/ModelDefinition.h"

namespace kiln::rt {

struct CudaProgram {
  const char *ptx;
  const char *const *functions;
  int numFunctions;
  uint64_t arenaBytes;
  int numStreams;
  int numEvents;
  bool useGraph;
  /// Dense bytes of each input and output (the staging buffers).
  const uint64_t *inputBytes;
  const uint64_t *outputBytes;
  int numLibraryCalls;
  uint64_t libraryWorkspaceBytes;
  uint64_t libraryZeroFloats;
  bool allowTf32;
  /// Issues every launch, copy and event of one run, in plan order.
  Status (*issue)(CudaContext &c, const CUdeviceptr *in, const CUdeviceptr *out);
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_CUDAMODEL_H
