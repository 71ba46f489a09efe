//===- Artifact.h - A compiled artifact directory, loaded -------*- C++ -*-===//
//
// The one loader of compiled models: `kiln run`/`kiln bench`, the Python module
// and the tests open an artifact directory through it. It reads the artifact's
// manifest.json (what the emitter wrote: target, ABI and weights versions,
// precision, inputs and outputs, library calls), opens its libmodel.so with
// RTLD_LOCAL (so that several models live in one process), looks up the C ABI
// (model_abi.h) there, checks its version and creates the model from
// model.weights, or from the weights built in when there is no such file.
//
//   kiln::rt::Artifact a;
//   if (kiln::rt::Status s = a.open("out/"); !s) fail(s.message());
//   kiln_context *c = a.abi().kiln_context_create(a.model());
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_H

#include "kiln/runtime/Tensor.h"
#include "kiln/runtime/model_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

/// What an artifact's manifest.json says (the fields Kiln's tools read).
struct Manifest {
  int version = 0;
  std::string name;
  /// The target compiled for ("host", "cuda", "cuda-sim") and, for GPU targets,
  /// the architecture ("sm_90"); empty otherwise.
  std::string target, gpuArch;
  int abiVersion = 0;
  int weightsFormat = 0;
  std::string precision;
  /// Who runs the library calls: "onednn", "cuda" (cuBLASLt/cuDNN on the device),
  /// "cuda-mock" (the mocks, host memory); empty with none.
  std::string libraryEngine;
  int64_t libraryCalls = 0;
  bool embeddedWeights = false;
  struct Tensor {
    std::string name;
    std::string dtype; // numpy's name: "float32", "int64", ...
    std::vector<int64_t> shape;
  };
  std::vector<Tensor> inputs, outputs;
};

/// Reads `dir`/manifest.json; a missing file or one that is not Kiln's manifest is
/// an error naming it.
Status readManifest(const std::string &dir, Manifest &manifest);

/// The C ABI of one model library, each function looked up in its own handle.
struct ModelAbi {
#define KILN_ABI_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_MODEL_ABI_FUNCTIONS(KILN_ABI_MEMBER)
#undef KILN_ABI_MEMBER
};

/// An artifact directory's model, loaded: the library stays open and the model
/// alive until destruction (destroy the model's contexts first).
class Artifact {
public:
  Artifact() = default;
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  /// Opens `dir` (compiled with `--emit lib`) and creates its model.
  Status open(const std::string &dir);

  const Manifest &manifest() const { return manifest_; }
  const ModelAbi &abi() const { return abi_; }
  kiln_model *model() const { return model_; }
  /// The model's inputs and outputs as its C ABI describes them.
  const std::vector<kiln_tensor_info> &inputs() const { return inputs_; }
  const std::vector<kiln_tensor_info> &outputs() const { return outputs_; }

private:
  void close();

  Manifest manifest_;
  ModelAbi abi_;
  void *handle_ = nullptr;
  kiln_model *model_ = nullptr;
  std::vector<kiln_tensor_info> inputs_, outputs_;
};

/// Bytes of a dense tensor as `info` describes it.
size_t tensorBytes(const kiln_tensor_info &info);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARTIFACT_H
