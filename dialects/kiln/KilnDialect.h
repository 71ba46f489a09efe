//===- KilnDialect.h - Kiln's kernels and plans ----------------*- C++ -*-===//
//
// The kiln dialect (KilnOps.td): kernels on tensors, the plan on buffers, and the
// attributes phases hand to each other (#kiln.gpu_stage, kiln.kernel,
// kiln.element_type).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/kiln/KilnDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.h.inc"

namespace kiln {
/// The engines of Kiln's own contraction kernels (kiln.engine on a launch).
constexpr llvm::StringLiteral kEngineTensorCores = "tensor_cores", kEngineSimt = "simt";

/// True when kiln-map-to-gpu put a stage of `launch` on tensor cores.
inline bool onTensorCores(LaunchOp launch) {
  auto engine = KilnDialect::EngineAttrHelper(launch.getContext()).getAttr(launch);
  return engine && engine.getValue() == kEngineTensorCores;
}

/// Bytes of a static buffer (sub-byte elements rounded up to a byte each).
inline int64_t bufferBytes(mlir::MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}
} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
