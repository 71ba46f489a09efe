//===- CudaRuntime.h - What generated cuda model code calls ----*- C++ -*-===//
//
// The cuda half of kiln_runtime. The CUDA driver is loaded with dlopen
// (libcuda.so.1, or the library $KILN_CUDA_DRIVER names — the tests point it at a
// mock), so everything builds and runs its checks on machines without a GPU, and
// a machine without a driver gets a clear message instead of a link error.
//
// CudaModel holds what a loaded model's contexts share (module, weights);
// CudaContext what one caller runs with (arena, staging buffers, streams, events,
// CUDA graph), so threads with contexts of their own run one model at once.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDARUNTIME_H
#define KILN_RUNTIME_CUDARUNTIME_H

#include "kiln/runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::rt {

class CudaLibraryCalls;
struct LibraryCall;

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
  /// The driver is Kiln's mock (it exports kiln_mock_cuda_driver): its memory is
  /// host memory, and library calls go to the mock libraries.
  bool mock;
};

/// Loads and initializes the driver once per process; null with `error` set when
/// there is none ("no CUDA driver: libcuda.so.1: cannot open ...").
const CudaDriver *loadCudaDriver(std::string &error);

/// One kernel launch of the generated code.
struct Launch {
  int function;           // index into the functions given to CudaModel::init
  unsigned grid[3];
  unsigned block[3];
  int stream;             // plan stream
};

/// What one loaded cuda model shares between its contexts, immutable once
/// loaded: the driver's primary context, the module (PTX loaded once) and its
/// functions, and the weights (uploaded once).
class CudaModel {
public:
  CudaModel() = default;
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;
  ~CudaModel();

  /// Loads the driver and the module and uploads `weights` (host bytes).
  Status init(const char *ptx, const char *const *functions, int numFunctions,
              const void *weights, uint64_t weightBytes);

  const CudaDriver &driver() const { return *d_; }
  CUcontext context() const { return context_; }
  CUfunction function(int i) const { return functions_[i]; }
  const char *functionName(int i) const { return names_[i]; }
  CUdeviceptr weights() const { return weights_; }
  /// A driver result as a Status ("what failed: text (CUresult n)").
  Status check(CUresult r, const char *what) const;

private:
  const CudaDriver *d_ = nullptr;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
  const char *const *names_ = nullptr;
  CUdeviceptr weights_ = 0;
};

/// One caller's run state on the device: the arena (kernels' scratch included),
/// staging buffers for host-side inputs and outputs, one stream per plan stream,
/// the plan's events, and optionally a captured CUDA graph of a whole run. The
/// generated code issues exactly the plan: launches, copies, records and waits.
class CudaContext {
public:
  struct Config {
    uint64_t arenaBytes = 0;
    int numStreams = 1;
    int numEvents = 0;
    bool useGraph = false;
    std::vector<uint64_t> inputBytes, outputBytes;
    /// Library calls (CudaLibraries.h): how many, each stream's workspace (a slice
    /// after the arena's end), and how many zero floats a bias-less convolution
    /// reads as its bias.
    int numLibraryCalls = 0;
    uint64_t workspaceBytes = 0;
    uint64_t zeroFloats = 0;
    /// f32 library calls may compute in TF32 (--allow-tf32).
    bool allowTf32 = false;
  };

  CudaContext();
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;
  ~CudaContext();

  /// Allocates the arena and staging buffers, creates the streams and events.
  Status init(const CudaModel &model, const Config &config);

  /// Device addresses the generated code offsets from.
  CUdeviceptr arena() const { return arena_; }
  CUdeviceptr weights() const { return model_->weights(); }
  CUdeviceptr stagedInput(int i) const { return inputs_[i]; }
  CUdeviceptr stagedOutput(int i) const { return outputs_[i]; }

  /// The stream a run is ordered with: none for a staged run (the context's own
  /// streams, synchronized by the caller of upload/download); otherwise the caller's
  /// CUstream, where null is CUDA's default (legacy) stream, as in cuBLAS and cuDNN.
  using Caller = std::optional<CUstream>;

  /// Starts a run on the calling thread (the model's context made current):
  /// stream 0 waits for `caller`'s work so far.
  Status begin(Caller caller);
  /// One kernel launch with `args` device pointers as its parameters.
  Status launch(const Launch &l, std::initializer_list<CUdeviceptr> args);
  /// Library call `index` on a plan stream; `buffers`: input, weights, bias,
  /// residual, output (0 where absent). `ran` false: the caller launches its kernels.
  Status library(int index, const LibraryCall &call, std::initializer_list<CUdeviceptr> buffers,
                 int stream, bool &ran);
  /// Device-to-device copy on a plan stream.
  Status copy(CUdeviceptr to, CUdeviceptr from, uint64_t bytes, int stream);
  /// Reads a branch condition (one byte at `at`, written by work `stream` has
  /// waited for) onto the host: `value` 1 or 0. Synchronizes `stream`.
  Status flag(CUdeviceptr at, int stream, int &value);
  /// The plan's events: record on one stream, wait on another.
  Status record(int event, int stream);
  Status wait(int event, int stream);
  /// Ends a run: `caller` waits for stream 0, which the plan joined every other
  /// stream into.
  Status end(Caller caller);

  /// Runs `body` (which issues the launches) directly, or through a CUDA graph
  /// captured on the first call for these `bindings` and replayed afterwards.
  template <typename Body>
  Status run(Caller caller, const std::vector<CUdeviceptr> &bindings, Body body) {
    Status current = makeCurrent();
    if (!current)
      return current;
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
  Status check(CUresult r, const char *what) const { return model_->check(r, what); }
  Status makeCurrent();
  Status beginCapture();
  Status endCapture(const Status &body);
  Status replay(Caller caller);
  void release();

  const CudaModel *model_ = nullptr;
  const CudaDriver *d_ = nullptr;
  Config config_;
  CUdeviceptr arena_ = 0;
  std::vector<CUdeviceptr> inputs_, outputs_;
  std::vector<CUstream> streams_;
  std::vector<CUevent> events_; // the plan's, then one for the caller
  CUgraphExec graphExec_ = nullptr;
  std::vector<CUdeviceptr> graphBindings_;
  std::unique_ptr<CudaLibraryCalls> libraries_;
  uint64_t workspaceOffset_ = 0, workspaceSlice_ = 0; // stream s's: offset + s * slice
  CUdeviceptr zeros_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_CUDARUNTIME_H
