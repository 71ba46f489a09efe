//===- CompareCommand.h - `kiln compare` ------------------------*- C++ -*-===//
//
// Runs one model two ways and compares the outputs: two targets, or a Kiln build
// against expected outputs (.npy/.pb) or ONNX Runtime (through python3, when its
// package is importable). `--all-tensors` compares every intermediate tensor of
// two Kiln builds and names the first node whose output diverges.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_COMPARECOMMAND_H
#define KILN_TOOLS_KILN_COMPARECOMMAND_H

#include "compiler/driver/Driver.h"
#include "kiln/runtime/Npy.h"

#include <string>
#include <vector>

namespace kiln {

struct CompareOptions {
  ModelInput model;
  /// The Kiln builds: one (against --expected or ONNX Runtime) or two targets.
  std::vector<std::string> targets = {"host", "cuda-sim"};
  /// Each build's precision (fp32, fp16, auto), in the order of `targets`; one
  /// value applies to every build.
  std::vector<std::string> precisions = {"fp32"};
  /// Who runs every build's contractions (TargetOptions::contractions).
  std::string contractions = "auto";
  /// NAME=file.npy|.pb, one per input; the others are generated from `seed`.
  std::vector<std::string> inputs;
  uint64_t seed = 0;
  /// NAME=file.npy|.pb: the reference outputs instead of a second target.
  std::vector<std::string> expected;
  /// ONNX Runtime (CPU) as the reference instead of a second target.
  bool onnxruntime = false;
  /// Passes where |a - b| <= atol + rtol * |b| everywhere (b: the reference).
  double atol = 1e-4, rtol = 1e-3;
  bool allTensors = false;
  /// Testing: the second build's node so named is broken on purpose.
  std::string injectFault;
  /// Where the builds, inputs and outputs go (default: a new temporary directory).
  std::string workDir;
  std::string cxx = kiln::CompileRequest().cxx;
};

/// Returns the exit code: 0 when every compared tensor is within tolerance, 1 when
/// one is not, 2 on an error (reported as one line on stderr).
int compareModel(const CompareOptions &options);

} // namespace kiln

#endif // KILN_TOOLS_KILN_COMPARECOMMAND_H
