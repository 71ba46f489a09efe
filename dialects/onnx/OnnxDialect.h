//===- OnnxDialect.h - The onnx dialect ------------------------*- C++ -*-===//
//
// Declares the onnx dialect and its ops (generated from the ONNX schema).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_ONNX_ONNXDIALECT_H
#define KILN_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/onnx/OnnxDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/onnx/OnnxOps.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXDIALECT_H
