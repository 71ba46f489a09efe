//===- HostModelImpl.h - The host targets' hooks, per library --*- C++ -*-===//
//
// The hooks of the host and cuda-sim targets (HostModel.h), which differ only in
// who runs their library calls (`Library`: HostLibrary or SimCudaLibrary).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_SRC_HOSTMODELIMPL_H
#define KILN_RUNTIME_SRC_HOSTMODELIMPL_H

#include "kiln/runtime/HostModel.h"

namespace kiln::rt {

struct HostModelState : ModelState {
  AlignedBuffer weights;
};

template <typename Library>
struct HostContextState : ContextState, HostRun {
  HostContextState(const HostProgram &p)
      : HostRun(p.numStreams, p.numEvents), calls(p.numLibraryCalls) {}
  Status library(int index, const LibraryCall &call, const LibraryBuffers &buffers,
                 bool &ran) override {
    return calls.run(index, call, buffers, ran);
  }
  AlignedBuffer arenaBuffer;
  Library calls;
};

inline Status loadHostModel(const kiln_model_definition &, AlignedBuffer weights,
                            std::unique_ptr<ModelState> &out) {
  auto m = std::make_unique<HostModelState>();
  m->weights = std::move(weights);
  out = std::move(m);
  return Status::ok();
}

template <typename Library>
Status createHostContext(const kiln_model_definition &d, const ModelState &model,
                         std::unique_ptr<ContextState> &out) {
  const auto &p = *static_cast<const HostProgram *>(d.program);
  auto c = std::make_unique<HostContextState<Library>>(p);
  Status s = c->arenaBuffer.allocate(p.arenaBytes);
  if (!s)
    return s;
  c->arena = c->arenaBuffer.data.get();
  c->weights = static_cast<const HostModelState &>(model).weights.data.get();
  out = std::move(c);
  return Status::ok();
}

template <typename Library>
Status runHostModel(const kiln_model_definition &d, const ModelState &,
                    ContextState &context, const kiln_tensor *in, kiln_tensor *out, bool,
                    void *) {
  const auto &p = *static_cast<const HostProgram *>(d.program);
  auto &c = static_cast<HostContextState<Library> &>(context);
  return c.streams.run([&](int stream) { return p.stream(c, stream, in, out); });
}

template <typename Library>
constexpr TargetHooks hostHooks() {
  return {loadHostModel, createHostContext<Library>, runHostModel<Library>};
}

} // namespace kiln::rt

#endif // KILN_RUNTIME_SRC_HOSTMODELIMPL_H
