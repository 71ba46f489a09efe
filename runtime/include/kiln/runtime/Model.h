//===- Model.h - C++ owners for a compiled model ---------------*- C++ -*-===//
//
// What every generated model.h includes: the model's C ABI (model_abi.h) and
// kiln::Model and kiln::Context, which own a loaded model and one caller's run
// state and release them on destruction.
//
//   kiln::Model model("out/model.weights");  // or kiln::Model model; with --embed-weights
//   kiln::Model named(KILN_MODEL(classifier), path);  // a model compiled with --name
//   if (!model.ok()) std::cerr << model.error();
//   kiln::Context ctx(model);                // one per thread that runs the model
//   ctx.setInput("x", x); ctx.setOutput("y", y);
//   if (!ctx.execute()) std::cerr << ctx.error();
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime/model_abi.h"

#ifdef __cplusplus
#include <string>

namespace kiln {

/// Owns a loaded model (weights, kernels): immutable, shared by its contexts.
class Model {
public:
  explicit Model(const std::string &weightsPath)
      : model(kiln_model_create(weightsPath.c_str())) {}
  /// A model compiled with --embed-weights: its weights are built in.
  Model() : model(kiln_model_create(nullptr)) {}
  /// The model `definition` (KILN_MODEL(NAME) of a model compiled with --name NAME);
  /// an empty path: its weights built in.
  Model(const kiln_model_definition *definition, const std::string &weightsPath)
      : model(kiln_model_create_from(definition, weightsPath.c_str())) {}
  ~Model() { kiln_model_destroy(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  kiln_status status() const { return model ? kiln_model_status(model) : KILN_ERROR_MEMORY; }
  bool ok() const { return status() == KILN_OK; }
  std::string error() const {
    const char *e = model ? kiln_model_error(model) : "out of memory";
    return e ? e : "";
  }
  kiln_model *get() const { return model; }

private:
  kiln_model *model;
};

/// Owns one caller's run state of a model (arena, streams, events). Create one per
/// thread; destroy it before its model.
class Context {
public:
  explicit Context(const Model &model) : context(kiln_context_create(model.get())) {}
  ~Context() { kiln_context_destroy(context); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  /// The last call's status and message.
  kiln_status status() const {
    return context ? kiln_context_status(context) : KILN_ERROR_MEMORY;
  }
  bool ok() const { return status() == KILN_OK; }
  std::string error() const {
    const char *e = context ? kiln_context_error(context) : "out of memory";
    return e ? e : "";
  }
  /// Binds host tensors by name; false with error() when the name or tensor is wrong.
  bool setInput(const char *name, const kiln_tensor &t) {
    return context && kiln_context_set_input(context, name, &t) == KILN_OK;
  }
  bool setOutput(const char *name, kiln_tensor &t) {
    return context && kiln_context_set_output(context, name, &t) == KILN_OK;
  }
  /// Runs on the bound tensors.
  bool execute() { return context && kiln_context_execute(context) == KILN_OK; }
  /// Runs on the caller's tensors in the model's order.
  bool run(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
           int32_t numOutputs) {
    return context &&
           kiln_context_run(context, inputs, numInputs, outputs, numOutputs) == KILN_OK;
  }
  /// Runs on tensors in the target's memory (cuda: device pointers, enqueued on
  /// `stream`, a CUstream or nullptr).
  bool runDevice(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
                 int32_t numOutputs, void *stream = nullptr) {
    return context && kiln_context_run_device(context, inputs, numInputs, outputs,
                                              numOutputs, stream) == KILN_OK;
  }
  kiln_context *get() const { return context; }

private:
  kiln_context *context;
};

} // namespace kiln
#endif // __cplusplus

#endif // KILN_RUNTIME_MODEL_H
