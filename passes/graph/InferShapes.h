//===- InferShapes.h - kiln-infer-shapes' type rules ------------*- C++ -*-===//
//
// How kiln-infer-shapes refines a type, shared with the control flow it unrolls
// (ControlFlow.h): types only ever get more precise, and a contradiction is an
// error naming the op.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_INFERSHAPES_H
#define KILN_PASSES_GRAPH_INFERSHAPES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"

#include <string>

namespace kiln {

/// A none type or a ranked tensor of static shape.
bool isStaticType(mlir::Type t);
/// `t` as MLIR prints it.
std::string typeString(mlir::Type t);
/// The more precise of the type an op had and the one its shape function gave;
/// null when they contradict each other.
mlir::Type mergeTypes(mlir::Type old, mlir::Type inferred);
/// The error for output `i` of `op`, inferred as `inferred` but declared `old`.
mlir::LogicalResult typeContradiction(mlir::Operation *op, unsigned i, mlir::Type old,
                                      mlir::Type inferred);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_INFERSHAPES_H
