//===- ArtifactRun.h - Running a compiled artifact from the compiler ---*- C++ -*-===//
//
// What the compiler's own checks (the precision check, `kiln compare`) and `kiln
// run` do with a compiled artifact: load it with the runtime's loader
// (kiln/runtime/Artifact.h), read input files (.npy, ONNX .pb) or generate inputs,
// run it once, and read its outputs back as host tensors.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_ARTIFACTRUN_H
#define KILN_COMPILER_DRIVER_ARTIFACTRUN_H

#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct NamedTensor {
  std::string name;
  kiln::rt::HostTensor tensor;
};

/// One context of an artifact's model, destroyed with it.
struct ContextHandle {
  const kiln::rt::ModelAbi &abi;
  kiln_context *context;
  explicit ContextHandle(const kiln::rt::Artifact &a)
      : abi(a.abi()), context(a.abi().kiln_context_create(a.model())) {}
  ~ContextHandle() {
    if (context)
      abi.kiln_context_destroy(context);
  }
  std::string error() const {
    const char *e = context ? abi.kiln_context_error(context) : "out of memory";
    return e ? e : "run failed";
  }
  bool failed() const { return !context || abi.kiln_context_error(context); }
};

/// An artifact loaded, its inputs read (by name, NAME=path, or by position) and its
/// outputs allocated.
struct PreparedRun {
  kiln::rt::Artifact lib;
  int32_t numInputs = 0, numOutputs = 0;
  std::vector<kiln_tensor_info> inInfo, outInfo;
  std::vector<kiln::rt::HostTensor> host, results;
  std::vector<kiln_tensor> inputs, outputs;

  /// Opens `dir` and reads the input files of `specs` (NAME=path or path).
  bool prepare(const std::string &dir, const std::vector<std::string> &specs,
               std::string &err);
  /// Binds every tensor by name, as an application would, and runs once.
  bool execute(ContextHandle &ctx, std::string &err);
};

/// The inputs a compiled artifact (`--emit lib`) takes: names, dtypes, shapes
/// (zero-filled data of the right size).
bool artifactInputs(const std::string &dir, std::vector<NamedTensor> &inputs,
                    std::string &err);
/// Runs the artifact once on input files (NAME=path, as `kiln run --input`); its
/// outputs, in the model's order.
bool runArtifact(const std::string &dir, const std::vector<std::string> &inputs,
                 std::vector<NamedTensor> &outputs, std::string &err);

/// The inputs of a compiled artifact (`--emit lib`) as files: those GIVEN
/// (NAME=file.npy|.pb) as they are, the others generated into DIR as .npy from
/// SEED (floats N(0, 1), integers in [0, 8), booleans); SPECS gets NAME=path for
/// each input in the model's order.
bool prepareInputs(const std::string &artifacts, const std::vector<std::string> &given,
                   uint64_t seed, const std::string &dir, std::vector<std::string> &specs,
                   std::string &err);

/// Whether `t` is a floating-point type (f16, bf16, f32, f64).
bool isFloat(kiln::rt::DType t);
/// A host tensor's elements as doubles (f16 and bf16 widened).
std::vector<double> tensorValues(const kiln::rt::HostTensor &t);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_ARTIFACTRUN_H
