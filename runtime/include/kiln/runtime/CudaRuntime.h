//===- CudaRuntime.h - What generated cuda model code calls ----*- C++ -*-===//
//
// The cuda half of kiln_runtime. The CUDA driver is loaded with dlopen
// (libcuda.so.1, or the library $KILN_CUDA_DRIVER names — the tests point it at a
// mock), so everything builds and runs its checks on machines without a GPU, and
// a machine without a driver gets a clear message instead of a link error.
//
// CudaModel owns what one loaded model needs on the device: the module (PTX loaded
// once), the arena, the weights (uploaded once), a scratch area, staging buffers for
// host-side inputs and outputs, one stream per plan stream and the events that
// order them, and optionally a captured CUDA graph of a whole run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDARUNTIME_H
#define KILN_RUNTIME_CUDARUNTIME_H

#include "kiln/runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

// The driver API's types, declared here so that no CUDA header is needed.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// The driver entry points Kiln uses (the _v2 ABI where one exists).
struct CudaDriver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

/// Loads and initializes the driver once per process; null with `error` set when
/// there is none ("no CUDA driver: libcuda.so.1: cannot open ...").
const CudaDriver *loadCudaDriver(std::string &error);

/// One kernel launch of the generated code.
struct Launch {
  int function;           // index into the names given to CudaModel::init
  unsigned grid[3];
  unsigned block[3];
  int stream;             // plan stream
};

class CudaModel {
public:
  struct Config {
    const char *ptx = nullptr;
    const char *const *functions = nullptr;
    int numFunctions = 0;
    uint64_t arenaBytes = 0;
    uint64_t scratchBytes = 0;
    int numStreams = 1;
    bool useGraph = false;
    std::vector<uint64_t> inputBytes, outputBytes;
  };

  CudaModel() = default;
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;
  ~CudaModel();

  /// Loads the driver and the module, allocates the arena, scratch and staging
  /// buffers, uploads `weights` (host bytes) once.
  Status init(const Config &config, const void *weights, uint64_t weightBytes);

  /// Device addresses the generated code offsets from.
  CUdeviceptr arena() const { return arena_; }
  CUdeviceptr weights() const { return weights_; }
  CUdeviceptr scratch() const { return scratch_; }
  CUdeviceptr stagedInput(int i) const { return inputs_[i]; }
  CUdeviceptr stagedOutput(int i) const { return outputs_[i]; }

  /// Starts a run: the plan's streams wait for `caller` (may be null).
  Status begin(CUstream caller);
  /// One kernel launch with `args` device pointers as its parameters.
  Status launch(const Launch &l, std::initializer_list<CUdeviceptr> args);
  /// Device-to-device copy on a plan stream.
  Status copy(CUdeviceptr to, CUdeviceptr from, uint64_t bytes, int stream);
  /// `waiter` waits for everything issued so far on `producer`.
  Status crossStream(int producer, int waiter);
  /// Ends a run: `caller` (or the model's stream) waits for every plan stream.
  Status end(CUstream caller);

  /// Runs `body` (which issues the launches) directly, or through a CUDA graph
  /// captured on the first call for these `bindings` and replayed afterwards.
  template <typename Body>
  Status run(CUstream caller, const std::vector<CUdeviceptr> &bindings, Body body) {
    if (!config_.useGraph) {
      Status s = begin(caller);
      if (s)
        s = body();
      if (s)
        s = end(caller);
      return s;
    }
    if (!graphExec_ || bindings != graphBindings_) {
      Status s = beginCapture();
      if (s)
        s = body();
      Status e = endCapture(s);
      if (!s || !e)
        return s ? e : s;
      graphBindings_ = bindings;
    }
    return replay(caller);
  }

  /// Host tensors in and out through the staging buffers; synchronizes.
  Status upload(int input, const void *host);
  Status download(int output, void *host);
  Status synchronize();

private:
  Status check(CUresult r, const char *what);
  Status beginCapture();
  Status endCapture(const Status &body);
  Status replay(CUstream caller);
  void release();

  const CudaDriver *d_ = nullptr;
  Config config_;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
  CUdeviceptr arena_ = 0, weights_ = 0, scratch_ = 0;
  std::vector<CUdeviceptr> inputs_, outputs_;
  std::vector<CUstream> streams_;
  std::vector<CUevent> events_; // one per plan stream, plus one for the caller
  CUgraphExec graphExec_ = nullptr;
  std::vector<CUdeviceptr> graphBindings_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_CUDARUNTIME_H
