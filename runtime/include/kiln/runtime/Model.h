//===- Model.h - A C++ owner for a compiled model --------------*- C++ -*-===//
//
// What every generated model.h includes: the model's C ABI (model_abi.h) and
// kiln::Model, which owns one loaded model and releases it on destruction.
//
//   kiln::Model m("out/model.weights");    // or kiln::Model m; with --embed-weights
//   if (!m.ok()) std::cerr << m.error();
//   m.run(inputs, 1, outputs, 1);
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime/model_abi.h"

#ifdef __cplusplus
#include <string>

namespace kiln {

/// Owns a loaded model: Model m("model.weights"); if (!m.ok()) m.error();
class Model {
public:
  explicit Model(const std::string &weightsPath)
      : model(kiln_model_create(weightsPath.c_str())) {}
  /// A model compiled with --embed-weights: its weights are built in.
  Model() : model(kiln_model_create(nullptr)) {}
  ~Model() { kiln_model_destroy(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  bool ok() const { return model && !kiln_model_error(model); }
  std::string error() const {
    const char *e = model ? kiln_model_error(model) : "out of memory";
    return e ? e : "";
  }
  /// Runs on the caller's tensors; false with error() on a mismatch.
  bool run(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
           int32_t numOutputs) {
    return model && kiln_model_run(model, inputs, numInputs, outputs, numOutputs) == 0;
  }
  /// Runs on tensors in the target's memory (cuda: device pointers, enqueued on
  /// `stream`, a CUstream or nullptr).
  bool runDevice(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
                 int32_t numOutputs, void *stream = nullptr) {
    return model && kiln_model_run_device(model, inputs, numInputs, outputs, numOutputs,
                                          stream) == 0;
  }
  kiln_model *get() const { return model; }

private:
  kiln_model *model;
};

} // namespace kiln
#endif // __cplusplus

#endif // KILN_RUNTIME_MODEL_H
