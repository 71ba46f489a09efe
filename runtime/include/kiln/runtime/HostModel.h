//===- HostModel.h - What a host or cuda-sim model's code fills in -*- C++ -*-===//
//
// The program of a model compiled for the host (or cuda-sim) target: its sizes and
// one function per plan stream (generated), which kiln_runtime runs on a context's
// streams (threads) with kHostHooks (oneDNN library calls) or kSimHooks (the mock
// cuBLASLt/cuDNN on host memory). A stream function sees a HostRun: the arena, the
// weights, the streams' events and the library calls.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HOSTMODEL_H
#define KILN_RUNTIME_HOSTMODEL_H

#include "kiln/runtime/HostStreams.h"
#include "kiln/runtime/LibraryCall.h"
#include "kiln/runtime/ModelDefinition.h"

namespace kiln::rt {

/// One run of a host model as its stream functions see it.
class HostRun {
public:
  HostRun(int numStreams, int numEvents) : streams(numStreams, numEvents) {}
  virtual ~HostRun();
  /// Runs library call `index`; `ran` false: the library cannot, run the kernel.
  virtual Status library(int index, const LibraryCall &call, const LibraryBuffers &buffers,
                         bool &ran) = 0;

  char *arena = nullptr;
  /// The model's weights (kernels take every buffer as a mutable pointer).
  char *weights = nullptr;
  HostStreams streams;
};

struct HostProgram {
  uint64_t arenaBytes;
  int numStreams;
  int numEvents;
  int numLibraryCalls;
  /// Runs plan stream `stream` of one run.
  Status (*stream)(HostRun &run, int stream, const kiln_tensor *in, kiln_tensor *out);
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_HOSTMODEL_H
