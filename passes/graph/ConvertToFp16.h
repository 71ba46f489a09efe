//===- ConvertToFp16.h - What kiln-convert-to-fp16 keeps in f32 -*- C++ -*-===//
//
// The keep-list of kiln-convert-to-fp16, shared with the compile report (which
// lists every op left in f32 and why) and --precision auto.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_CONVERTTOFP16_H
#define KILN_PASSES_GRAPH_CONVERTTOFP16_H

#include "mlir/IR/Operation.h"

#include <string>

namespace kiln {

/// Why `op` computes in f32 under kiln-convert-to-fp16 whatever its neighbours
/// do ("range", "precision", "type", "subgraph"), or empty when it may compute
/// in f16. Nodes named by the pass's keep-f32 option are kept besides these.
std::string fp16KeepReason(mlir::Operation *op);

/// The ONNX node name of `op` (its NameLoc; the first of a fused location), or
/// empty.
std::string onnxNodeName(mlir::Operation *op);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_CONVERTTOFP16_H
