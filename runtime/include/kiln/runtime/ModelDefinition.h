//===- ModelDefinition.h - What a generated model hands the runtime -*- C++ -*-===//
//
// A compiled model's generated model.cpp holds only what is its own: the interface
// tables, the weights' size and checksum, the kernels and the launch sequence. It
// describes them in one constant kiln_model_definition; the C ABI (model_abi.h)
// that every model shares is compiled once, in kiln_runtime (ModelAbi.cpp), and
// works on any definition. A target's part is a table of hooks (load the weights
// and kernels, create a context, run) that kiln_runtime implements per target
// (HostModel.cpp, CudaModel.cpp) and a program the generated code fills in
// (HostProgram, CudaProgram): the launch sequence as a function, the sizes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_MODELDEFINITION_H
#define KILN_RUNTIME_MODELDEFINITION_H

#include "kiln/runtime/ModelSupport.h"

#include <memory>

struct kiln_model_definition;

namespace kiln::rt {

/// A target's loaded model (weights, kernels): immutable once loaded.
struct ModelState {
  virtual ~ModelState();
};

/// A target's run state of one context (arena, streams, events, graph).
struct ContextState {
  virtual ~ContextState();
};

/// What a target implements for its models (kiln_runtime: kHostHooks, kSimHooks,
/// kCudaHooks); each reads the definition's program.
struct TargetHooks {
  /// Takes the model's weights (loaded and checked) and loads its kernels.
  Status (*load)(const kiln_model_definition &model, AlignedBuffer weights,
                 std::unique_ptr<ModelState> &state);
  Status (*createContext)(const kiln_model_definition &model, const ModelState &state,
                          std::unique_ptr<ContextState> &context);
  /// One run on tensors checked against the interface: host tensors when
  /// `staged`, else the target's memory ordered with `stream`.
  Status (*run)(const kiln_model_definition &model, const ModelState &state,
                ContextState &context, const kiln_tensor *in, kiln_tensor *out,
                bool staged, void *stream);
};

extern const TargetHooks kHostHooks, kSimHooks, kCudaHooks;

} // namespace kiln::rt

/// A compiled model as its generated code describes it; constant, one per model.
struct kiln_model_definition {
  /// KILN_ABI_VERSION of the model_abi.h the model was compiled against.
  int32_t abiVersion;
  /// `kiln compile --name` ("model" when none was given).
  const char *name;
  const kiln_tensor_info *inputs;
  int32_t numInputs;
  const kiln_tensor_info *outputs;
  int32_t numOutputs;
  uint64_t weightBytes;
  uint64_t weightsChecksum;
  /// With --embed-weights, the weights image built in; null otherwise.
  const char *embeddedWeights;
  const char *embeddedWeightsEnd;
  const kiln::rt::TargetHooks *target;
  /// The target's program (kiln::rt::HostProgram, kiln::rt::CudaProgram).
  const void *program;
};

#endif // KILN_RUNTIME_MODELDEFINITION_H
