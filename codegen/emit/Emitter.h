//===- Emitter.h - Write the artifact directory ----------------*- C++ -*-===//
//
// The emit phase: from the kiln.plan, write model.h and model.cpp (straight-line
// code that checks the arguments, binds buffers and calls each kernel in order),
// model.weights (the constants at their planned offsets, checksummed), and with
// `--emit lib` compile them with the target's object into libmodel.so.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_EMITTER_H
#define KILN_CODEGEN_EMIT_EMITTER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

struct EmitOptions {
  std::string outputDir;
  std::string objectFile;    // the target's kernels, already written
  bool buildLibrary = false; // also link libmodel.so
  std::string compiler = "c++";
  std::string runtimeIncludeDir;
  std::string runtimeLibrary;
};

/// Writes the artifacts; on failure returns false with a one-line `error`.
bool emitArtifacts(mlir::ModuleOp module, const EmitOptions &options,
                   std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_EMITTER_H
