//===- EvaluateOnnx.h - Evaluate onnx ops on constants ---------*- C++ -*-===//
//
// Kiln's constant evaluator for the graph phase: the ops that compute shapes and
// small index tensors (Shape, Size, Gather, Slice, Concat, Unsqueeze/Squeeze, Cast,
// Range, ConstantOfShape, Reshape, Expand, arithmetic, comparisons, reductions), run
// on the host at compile time. Results over kMaxFoldElements are not folded.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_EVALUATEONNX_H
#define KILN_PASSES_GRAPH_EVALUATEONNX_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <vector>

namespace kiln {

/// The largest tensor the graph phase creates by folding.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// The value of `v` when an onnx.Constant (any of its attribute forms) defines it
/// and it has a static shape; null otherwise.
mlir::ElementsAttr constantValueOf(mlir::Value v);

/// The bytes of a dense_resource constant whose blob holds exactly its elements,
/// row-major (as the importer keeps weights); empty for anything else.
llvm::ArrayRef<char> resourceBytes(mlir::ElementsAttr attr);

/// The elements of float constant `v` (any size; f16, bf16, f32 or f64), row-major;
/// nullopt when `v` is not such a constant.
std::optional<std::vector<double>> floatValuesOf(mlir::Value v);

/// The result of onnx op `op` given its operands' values (null where not constant);
/// null when the op is not one Kiln evaluates, an operand it needs is unknown, or the
/// result would be too large. Shape and Size need only their operand's static type.
mlir::DenseElementsAttr evaluateOnnxOp(mlir::Operation *op,
                                       llvm::ArrayRef<mlir::Attribute> operandValues);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_EVALUATEONNX_H
