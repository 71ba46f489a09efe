//===- WeightsFile.h - Write model.weights ---------------------*- C++ -*-===//
//
// The plan's constants at the offsets memory planning gave them, behind the header
// of kiln/runtime/WeightsFormat.h (the format the runtime reads), and the assembly
// file that builds them into the model (`--embed-weights`).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_WEIGHTSFILE_H
#define KILN_CODEGEN_EMIT_WEIGHTSFILE_H

#include "dialects/kiln/KilnDialect.h"

#include <string>

namespace kiln {

/// Writes `path` (left as it is where it already holds the same bytes); the
/// payload's checksum in `checksum`. False with `error`.
bool writeWeightsFile(PlanOp plan, const std::string &path, uint64_t &checksum,
                      std::string &error);

/// model_weights.S: model.weights as a read-only section of the model, found by
/// .incbin from the artifact directory (or -Wa,-I,DIR).
const char *embeddedWeightsAssembly();

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_WEIGHTSFILE_H
