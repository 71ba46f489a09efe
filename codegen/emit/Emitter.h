//===- Emitter.h - Write the artifact directory ----------------*- C++ -*-===//
//
// The emit phase: from the kiln.plan, write model.h and model.cpp (straight-line
// code that checks the arguments, binds buffers and calls — host — or launches —
// cuda — each kernel in order), model.weights (the constants at their planned
// offsets, checksummed), model.ptx for cuda, and with `--emit lib` compile them
// (with the host object) into libmodel.so.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_EMITTER_H
#define KILN_CODEGEN_EMIT_EMITTER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

struct EmitOptions {
  std::string outputDir;
  bool cuda = false;         // the cuda runtime (else host calls)
  bool simulate = false;     // cuda-sim: host object, gpu stages through the simulator
  std::string objectFile;    // host: the kernels' object, already written
  std::string ptx;           // cuda: the kernels' PTX
  bool cudaGraph = false;    // cuda: capture a run as a CUDA graph, replay it
  bool buildLibrary = false; // also link libmodel.so
  bool embedWeights = false; // model_weights.S: the weights built into the model
  std::string compiler = "c++";
  std::string runtimeIncludeDir;
  std::string runtimeLibrary;
};

/// Writes the artifacts; on failure returns false with a one-line `error`.
bool emitArtifacts(mlir::ModuleOp module, const EmitOptions &options,
                   std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_EMITTER_H
