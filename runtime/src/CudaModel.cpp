//===- CudaModel.cpp - The cuda target's model hooks ----------------------===//
//
// This file implements kCudaHooks (CudaModel.h): a model is the loaded module and
// the weights on the device; a context, CudaContext's arena, staging buffers,
// streams and events; a run uploads host tensors (or takes the caller's device
// pointers, ordered with its stream), issues the program and downloads.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/CudaModel.h"

#include <string>
#include <vector>

namespace kiln::rt {
namespace {

struct CudaModelState : ModelState {
  CudaModel cuda;
};

struct CudaContextState : ContextState {
  CudaContext cuda;
  /// A run's device pointers, kept so that a run allocates nothing.
  std::vector<CUdeviceptr> inPtrs, outPtrs, bindings;
};

Status load(const kiln_model_definition &d, AlignedBuffer weights,
            std::unique_ptr<ModelState> &out) {
  const auto &p = *static_cast<const CudaProgram *>(d.program);
  auto m = std::make_unique<CudaModelState>();
  Status s = m->cuda.init(p.ptx, p.functions, p.numFunctions, weights.data.get(),
                          weights.size);
  if (s)
    out = std::move(m);
  return s;
}

Status createContext(const kiln_model_definition &d, const ModelState &model,
                     std::unique_ptr<ContextState> &out) {
  const auto &p = *static_cast<const CudaProgram *>(d.program);
  CudaContext::Config config;
  config.arenaBytes = p.arenaBytes;
  config.numStreams = p.numStreams;
  config.numEvents = p.numEvents;
  config.useGraph = p.useGraph;
  config.numLibraryCalls = p.numLibraryCalls;
  config.workspaceBytes = p.libraryWorkspaceBytes;
  config.zeroFloats = p.libraryZeroFloats;
  config.allowTf32 = p.allowTf32;
  auto c = std::make_unique<CudaContextState>();
  config.inputBytes.assign(p.inputBytes, p.inputBytes + d.numInputs);
  config.outputBytes.assign(p.outputBytes, p.outputBytes + d.numOutputs);
  Status s = c->cuda.init(static_cast<const CudaModelState &>(model).cuda, config);
  if (s)
    out = std::move(c);
  return s;
}

Status run(const kiln_model_definition &d, const ModelState &, ContextState &context,
           const kiln_tensor *in, kiln_tensor *out, bool staged, void *stream) {
  const auto &p = *static_cast<const CudaProgram *>(d.program);
  auto &state = static_cast<CudaContextState &>(context);
  CudaContext &c = state.cuda;
  // Kernels take every buffer as 16-byte aligned (vector loads and stores).
  for (int32_t i = 0; !staged && i < d.numInputs + d.numOutputs; ++i) {
    bool isInput = i < d.numInputs;
    const kiln_tensor &t = isInput ? in[i] : out[i - d.numInputs];
    if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
      return Status::error(std::string(isInput ? "input '" : "output '") +
                               (isInput ? d.inputs[i] : d.outputs[i - d.numInputs]).name +
                               "': device pointer is not 16-byte aligned",
                           KILN_ERROR_ARGUMENT);
  }
  Status s = Status::ok();
  std::vector<CUdeviceptr> &inPtrs = state.inPtrs, &outPtrs = state.outPtrs,
                           &bindings = state.bindings;
  inPtrs.assign(d.numInputs + 1, 0);
  outPtrs.assign(d.numOutputs + 1, 0);
  bindings.clear();
  for (int32_t i = 0; s && i < d.numInputs; ++i) {
    inPtrs[i] = staged ? c.stagedInput(i) : reinterpret_cast<CUdeviceptr>(in[i].data);
    if (staged)
      s = c.upload(i, in[i].data);
    bindings.push_back(inPtrs[i]);
  }
  for (int32_t i = 0; s && i < d.numOutputs; ++i) {
    outPtrs[i] = staged ? c.stagedOutput(i) : reinterpret_cast<CUdeviceptr>(out[i].data);
    bindings.push_back(outPtrs[i]);
  }
  // A device run is ordered with the caller's stream, null being CUDA's default one.
  CudaContext::Caller caller;
  if (!staged)
    caller = static_cast<CUstream>(stream);
  if (s)
    s = c.run(caller, bindings, [&] { return p.issue(c, inPtrs.data(), outPtrs.data()); });
  for (int32_t i = 0; s && staged && i < d.numOutputs; ++i)
    s = c.download(i, out[i].data);
  if (s && staged)
    s = c.synchronize();
  return s;
}

} // namespace

constexpr TargetHooks kCudaHooks = {load, createContext, run};

} // namespace kiln::rt
