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

#include <string>

namespace kiln::onnx {
/// The shape function behind every op's InferShapesInterface (OnnxShapeInference.cpp).
mlir::LogicalResult inferResultTypes(mlir::Operation *op,
                                     llvm::ArrayRef<mlir::Attribute> operandValues,
                                     llvm::SmallVectorImpl<mlir::Type> &resultTypes,
                                     std::string &why);
/// The ONNX operator type of an onnx dialect op ("onnx.ClipV6" -> "Clip").
std::string onnxOperatorName(mlir::Operation *op);
/// `name` as a dense_resource key: printed bare, so letters, digits, '_', '.' and
/// '$' only, not starting with a digit (PyTorch names weights "onnx::Add_213"),
/// so that a printed phase parses again.
std::string resourceKey(llvm::StringRef name);
/// The dialect op of ONNX operator `name` whose schema starts at `sinceVersion`
/// ("Clip", 6 -> "onnx.ClipV6"; the newest versions are unsuffixed).
std::string dialectOpName(const std::string &name, int sinceVersion);
} // namespace kiln::onnx

#include "dialects/onnx/OnnxDialect.h.inc"
#include "dialects/onnx/OnnxInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/onnx/OnnxOps.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXDIALECT_H
