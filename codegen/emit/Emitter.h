//===- Emitter.h - Write the artifact directory ----------------*- C++ -*-===//
//
// The emit phase: the target's kernel writer compiles the codegen phase's output;
// then, from the kiln.plan, model.weights (WeightsFile.h), model.h (which includes
// kiln/runtime/Model.h), model.cpp (the interface tables, then the target's emit
// hooks: straight-line code that checks the arguments, binds buffers and calls or
// launches each kernel in plan order) and, with `--emit lib`, libmodel.so
// (LibraryBuild.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_EMITTER_H
#define KILN_CODEGEN_EMIT_EMITTER_H

#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

struct EmitOptions {
  std::string outputDir;
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
