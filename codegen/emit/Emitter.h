//===- Emitter.h - Write the artifact directory ----------------*- C++ -*-===//
//
// The emit phase: the target's kernel writer compiles the codegen phase's output;
// then, from the kiln.plan, model.weights (WeightsFile.h), model.h (which includes
// kiln/runtime/Model.h), model.cpp (the interface tables, the target's program:
// straight-line code that calls or launches each kernel in plan order, and the
// model's kiln_model_definition, which the C ABI in kiln_runtime runs) and, with
// `--emit lib`, libmodel.so (LibraryBuild.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_EMITTER_H
#define KILN_CODEGEN_EMIT_EMITTER_H

#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

/// The name of a model compiled without `--name`.
inline constexpr const char *kDefaultModelName = "model";

struct EmitOptions {
  std::string outputDir;
  /// A C identifier: the model exports kiln_model_definition_<name> (and, when it
  /// is the default, kiln_model_create).
  std::string modelName = kDefaultModelName;
  /// For the manifest: fp32, fp16 or auto (as compiled).
  std::string precision = "fp32";
  bool buildLibrary = false; // also link libmodel.so
  bool embedWeights = false; // model_weights.S: the weights built into the model
  bool optimizeLibrary = true; // false: libmodel.so's C++ at -O0 (LibraryBuild)
  std::string compiler = "c++";
  std::string runtimeIncludeDir;
  std::string runtimeLibrary;
};

/// Compiles the kernels for `target` and writes the artifacts; `code` says what the
/// kernel writer made. On failure returns false with a one-line `error`.
bool emitArtifacts(mlir::ModuleOp module, const Target &target, const EmitOptions &options,
                   KernelCode &code, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_EMITTER_H
