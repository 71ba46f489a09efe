//===- Passes.h - The graph phase's passes -*- C++ -*-===//
//
// Declares the passes of passes/graph/Passes.td (generated) and registerKilnGraphPasses().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_PASSES_H
#define KILN_PASSES_GRAPH_PASSES_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/graph/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/graph/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_GRAPH_PASSES_H
