//===- CudaRuntime.cpp - The CUDA driver, loaded at run time --------------===//
//
// This file implements the CUDA runtime of generated cuda models (CudaRuntime.h):
// the driver loaded with dlopen, CudaModel (module, weights) and CudaContext
// (arena, staging buffers, streams, events, graph capture).
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/CudaRuntime.h"
#include "kiln/runtime/CudaLibraries.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace kiln::rt {
namespace {

constexpr int kCaptureModeThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr unsigned kStreamNonBlocking = 1; // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDisableTiming = 2; // CU_EVENT_DISABLE_TIMING

struct Loaded {
  CudaDriver driver{};
  std::string error;
};

Loaded loadOnce() {
  Loaded l;
  const char *path = std::getenv("KILN_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    l.error = std::string("no CUDA driver: cannot load ") + path + ": " +
              (why ? why : "unknown error") +
              " (a cuda model needs an NVIDIA GPU with its driver installed)";
    return l;
  }
  bool ok = true;
  auto bind = [&](auto &slot, const char *name) {
    void *sym = dlsym(lib, name);
    if (!sym && ok) {
      ok = false;
      l.error = std::string("the CUDA driver ") + path + " has no " + name +
                " (driver too old?)";
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(sym);
  };
  CudaDriver &d = l.driver;
  bind(d.cuInit, "cuInit");
  bind(d.cuDeviceGet, "cuDeviceGet");
  bind(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(d.cuModuleLoadData, "cuModuleLoadData");
  bind(d.cuModuleUnload, "cuModuleUnload");
  bind(d.cuModuleGetFunction, "cuModuleGetFunction");
  bind(d.cuMemAlloc, "cuMemAlloc_v2");
  bind(d.cuMemFree, "cuMemFree_v2");
  bind(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(d.cuLaunchKernel, "cuLaunchKernel");
  bind(d.cuStreamCreate, "cuStreamCreate");
  bind(d.cuStreamDestroy, "cuStreamDestroy_v2");
  bind(d.cuStreamSynchronize, "cuStreamSynchronize");
  bind(d.cuEventCreate, "cuEventCreate");
  bind(d.cuEventRecord, "cuEventRecord");
  bind(d.cuStreamWaitEvent, "cuStreamWaitEvent");
  bind(d.cuEventDestroy, "cuEventDestroy_v2");
  bind(d.cuGetErrorString, "cuGetErrorString");
  bind(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  bind(d.cuStreamEndCapture, "cuStreamEndCapture");
  bind(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  bind(d.cuGraphLaunch, "cuGraphLaunch");
  bind(d.cuGraphExecDestroy, "cuGraphExecDestroy");
  bind(d.cuGraphDestroy, "cuGraphDestroy");
  if (!ok)
    return l;
  d.mock = dlsym(lib, "kiln_mock_cuda_driver") != nullptr;
  if (CUresult r = d.cuInit(0)) {
    const char *text = nullptr;
    d.cuGetErrorString(r, &text);
    l.error = std::string("cuInit failed: ") + (text ? text : std::to_string(r)) +
              " (is there a GPU this process may use?)";
  }
  return l;
}

} // namespace

const CudaDriver *loadCudaDriver(std::string &error) {
  static Loaded loaded = loadOnce();
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

Status CudaModel::check(CUresult r, const char *what) const {
  if (r == 0)
    return Status::ok();
  const char *text = nullptr;
  if (d_->cuGetErrorString(r, &text) != 0 || !text)
    text = "unknown error";
  return Status::error(std::string(what) + " failed: " + text + " (CUresult " +
                           std::to_string(r) + ")",
                       r == 2 ? KILN_ERROR_MEMORY : KILN_ERROR_DEVICE);
}

#define KILN_CU(call, what)                                                            \
  do {                                                                                 \
    Status s_ = check(call, what);                                                     \
    if (!s_)                                                                           \
      return s_;                                                                       \
  } while (0)

Status CudaModel::init(const char *ptx, const char *const *functions, int numFunctions,
                       const void *weights, uint64_t weightBytes) {
  std::string error;
  d_ = loadCudaDriver(error);
  if (!d_)
    return Status::error(error, KILN_ERROR_DEVICE);
  CUdevice device = 0;
  KILN_CU(d_->cuDeviceGet(&device, 0), "cuDeviceGet");
  KILN_CU(d_->cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  KILN_CU(d_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  KILN_CU(d_->cuModuleLoadData(&module_, ptx), "loading the model's PTX");
  names_ = functions;
  functions_.resize(numFunctions);
  for (int i = 0; i < numFunctions; ++i) {
    Status s = check(d_->cuModuleGetFunction(&functions_[i], module_, functions[i]),
                     "cuModuleGetFunction");
    if (!s)
      return Status::error(s.message() + " for kernel " + functions[i], s.code());
  }
  KILN_CU(d_->cuMemAlloc(&weights_, weightBytes ? weightBytes : 1), "cuMemAlloc");
  if (weightBytes)
    KILN_CU(d_->cuMemcpyHtoD(weights_, weights, weightBytes), "uploading the weights");
  return Status::ok();
}

CudaModel::~CudaModel() {
  if (!d_)
    return;
  if (weights_)
    d_->cuMemFree(weights_);
  if (module_)
    d_->cuModuleUnload(module_);
}

Status CudaContext::init(const CudaModel &model, const Config &config) {
  model_ = &model;
  d_ = &model.driver();
  config_ = config;
  Status current = makeCurrent();
  if (!current)
    return current;
  auto alloc = [&](CUdeviceptr &p, uint64_t bytes) {
    return check(d_->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  };
  // Each stream's library workspace after the arena (256-byte aligned slices).
  auto align = [](uint64_t b) { return (b + 255) & ~uint64_t(255); };
  workspaceSlice_ = config.numLibraryCalls ? align(config.workspaceBytes) : 0;
  workspaceOffset_ = align(config.arenaBytes);
  Status s = alloc(arena_, workspaceOffset_ + workspaceSlice_ * config.numStreams);
  if (s && config.numLibraryCalls && config.zeroFloats) {
    std::vector<float> zeros(config.zeroFloats, 0.0f);
    s = alloc(zeros_, config.zeroFloats * sizeof(float));
    if (s)
      s = check(d_->cuMemcpyHtoD(zeros_, zeros.data(), config.zeroFloats * sizeof(float)),
                "uploading zeros");
  }
  if (s && config.numLibraryCalls)
    libraries_ = std::make_unique<CudaLibraryCalls>(config.numLibraryCalls, d_->mock,
                                                    config.allowTf32);
  inputs_.assign(config.inputBytes.size(), 0);
  outputs_.assign(config.outputBytes.size(), 0);
  for (size_t i = 0; s && i < inputs_.size(); ++i)
    s = alloc(inputs_[i], config.inputBytes[i]);
  for (size_t i = 0; s && i < outputs_.size(); ++i)
    s = alloc(outputs_[i], config.outputBytes[i]);
  if (!s)
    return s;
  streams_.assign(config.numStreams, nullptr);
  for (CUstream &st : streams_)
    KILN_CU(d_->cuStreamCreate(&st, kStreamNonBlocking), "cuStreamCreate");
  // The plan's events, then one for the caller's stream.
  events_.assign(config.numEvents + 1, nullptr);
  for (CUevent &e : events_)
    KILN_CU(d_->cuEventCreate(&e, kEventDisableTiming), "cuEventCreate");
  return Status::ok();
}

Status CudaContext::makeCurrent() {
  KILN_CU(d_->cuCtxSetCurrent(model_->context()), "cuCtxSetCurrent");
  return Status::ok();
}

Status CudaContext::begin(Caller caller) {
  // The plan forks its other streams from stream 0 with its own events.
  if (caller) {
    CUevent start = events_.back();
    KILN_CU(d_->cuEventRecord(start, *caller), "cuEventRecord");
    KILN_CU(d_->cuStreamWaitEvent(streams_[0], start, 0), "cuStreamWaitEvent");
  }
  return Status::ok();
}

Status CudaContext::launch(const Launch &l, std::initializer_list<CUdeviceptr> args) {
  // cuLaunchKernel takes one pointer per parameter, each to the parameter's value.
  CUdeviceptr values[64];
  void *params[64];
  if (args.size() > 64)
    return Status::error("too many kernel parameters");
  size_t n = 0;
  for (CUdeviceptr a : args) {
    values[n] = a;
    params[n] = &values[n];
    ++n;
  }
  KILN_CU(d_->cuLaunchKernel(model_->function(l.function), l.grid[0], l.grid[1], l.grid[2],
                             l.block[0], l.block[1], l.block[2], 0, streams_[l.stream],
                             params, nullptr),
          model_->functionName(l.function));
  return Status::ok();
}

Status CudaContext::library(int index, const LibraryCall &call,
                            std::initializer_list<CUdeviceptr> buffers, int stream, bool &ran) {
  ran = false;
  if (!libraries_ || buffers.size() != 5)
    return Status::ok();
  CUdeviceptr workspace = arena_ + workspaceOffset_ + workspaceSlice_ * stream;
  return libraries_->run(index, call, buffers.begin(), zeros_, streams_[stream], workspace,
                         config_.workspaceBytes, ran);
}

Status CudaContext::copy(CUdeviceptr to, CUdeviceptr from, uint64_t bytes, int stream) {
  KILN_CU(d_->cuMemcpyDtoDAsync(to, from, bytes, streams_[stream]), "cuMemcpyDtoDAsync");
  return Status::ok();
}

Status CudaContext::flag(CUdeviceptr at, int stream, int &value) {
  unsigned char byte = 0;
  KILN_CU(d_->cuMemcpyDtoHAsync(&byte, at, 1, streams_[stream]), "reading a branch condition");
  KILN_CU(d_->cuStreamSynchronize(streams_[stream]), "cuStreamSynchronize");
  value = byte != 0 ? 1 : 0;
  return Status::ok();
}

Status CudaContext::record(int event, int stream) {
  KILN_CU(d_->cuEventRecord(events_[event], streams_[stream]), "cuEventRecord");
  return Status::ok();
}

Status CudaContext::wait(int event, int stream) {
  KILN_CU(d_->cuStreamWaitEvent(streams_[stream], events_[event], 0), "cuStreamWaitEvent");
  return Status::ok();
}

Status CudaContext::end(Caller caller) {
  // The plan joins its streams into stream 0.
  if (caller) {
    CUevent done = events_.back();
    KILN_CU(d_->cuEventRecord(done, streams_[0]), "cuEventRecord");
    KILN_CU(d_->cuStreamWaitEvent(*caller, done, 0), "cuStreamWaitEvent");
  }
  return Status::ok();
}

Status CudaContext::beginCapture() {
  if (graphExec_) {
    d_->cuGraphExecDestroy(graphExec_);
    graphExec_ = nullptr;
  }
  KILN_CU(d_->cuStreamBeginCapture(streams_[0], kCaptureModeThreadLocal),
          "cuStreamBeginCapture");
  return begin(std::nullopt);
}

Status CudaContext::endCapture(const Status &body) {
  Status joined = body ? end(std::nullopt) : body;
  CUgraph graph = nullptr;
  Status s = check(d_->cuStreamEndCapture(streams_[0], &graph), "cuStreamEndCapture");
  if (!joined)
    s = joined;
  if (s)
    s = check(d_->cuGraphInstantiateWithFlags(&graphExec_, graph, 0), "cuGraphInstantiate");
  if (graph)
    d_->cuGraphDestroy(graph);
  return s;
}

Status CudaContext::replay(Caller caller) {
  KILN_CU(d_->cuGraphLaunch(graphExec_, caller ? *caller : streams_[0]), "cuGraphLaunch");
  return Status::ok();
}

Status CudaContext::upload(int input, const void *host) {
  KILN_CU(d_->cuMemcpyHtoDAsync(inputs_[input], host, config_.inputBytes[input],
                                streams_[0]),
          "copying an input to the GPU");
  return Status::ok();
}

Status CudaContext::download(int output, void *host) {
  KILN_CU(d_->cuMemcpyDtoHAsync(host, outputs_[output], config_.outputBytes[output],
                                streams_[0]),
          "copying an output from the GPU");
  return Status::ok();
}

Status CudaContext::synchronize() {
  KILN_CU(d_->cuStreamSynchronize(streams_[0]), "cuStreamSynchronize");
  return Status::ok();
}

void CudaContext::release() {
  if (!d_)
    return;
  if (graphExec_)
    d_->cuGraphExecDestroy(graphExec_);
  for (CUevent e : events_)
    if (e)
      d_->cuEventDestroy(e);
  for (CUstream st : streams_)
    if (st)
      d_->cuStreamDestroy(st);
  auto free = [&](CUdeviceptr p) {
    if (p)
      d_->cuMemFree(p);
  };
  std::for_each(inputs_.begin(), inputs_.end(), free);
  std::for_each(outputs_.begin(), outputs_.end(), free);
  libraries_.reset();
  free(zeros_);
  free(arena_);
}

CudaContext::CudaContext() = default;
CudaContext::~CudaContext() { release(); }

} // namespace kiln::rt
