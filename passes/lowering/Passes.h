//===- Passes.h - The tensor phase's pass -*- C++ -*-===//
//
// Declares the passes of passes/lowering/Passes.td (generated) and registerKilnLoweringPasses().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_PASSES_H
#define KILN_PASSES_LOWERING_PASSES_H

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
#include "passes/lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/lowering/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_LOWERING_PASSES_H
