//===- OnnxConstants.h - The values of onnx constants ----------*- C++ -*-===//
//
// What the graph and lowering phases both read of constants: an onnx.Constant's
// value in any of its attribute forms, the bytes of a weights blob, a float
// constant's elements, a constant integer operand.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_ONNX_ONNXCONSTANTS_H
#define KILN_DIALECTS_ONNX_ONNXCONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace kiln {

/// The value of `v` when an onnx.Constant (any of its attribute forms) defines it
/// and it has a static shape; null otherwise.
mlir::ElementsAttr constantValueOf(mlir::Value v);

/// The bytes of a dense_resource constant whose blob holds exactly its elements,
/// row-major (as the importer keeps weights); empty for anything else.
llvm::ArrayRef<char> resourceBytes(mlir::ElementsAttr attr);

/// The elements of float constant `v` (any size; f16, bf16, f32 or f64), row-major;
/// nullopt when `v` is not such a constant.
std::optional<std::vector<double>> floatValuesOf(mlir::Value v);

/// Reads a constant integer tensor operand (an onnx.Constant or arith.constant);
/// false when it is not a compile-time constant.
bool getConstantInts(mlir::Value value, llvm::SmallVectorImpl<int64_t> &out);

} // namespace kiln

#endif // KILN_DIALECTS_ONNX_ONNXCONSTANTS_H
