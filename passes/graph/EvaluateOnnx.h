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

#include "dialects/onnx/OnnxConstants.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <vector>

namespace kiln {

/// The largest tensor the graph phase creates by folding.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// The result of onnx op `op` given its operands' values (null where not constant);
/// null when the op is not one Kiln evaluates, an operand it needs is unknown, or the
/// result would be too large. Shape and Size need only their operand's static type.
mlir::DenseElementsAttr evaluateOnnxOp(mlir::Operation *op,
                                       llvm::ArrayRef<mlir::Attribute> operandValues);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_EVALUATEONNX_H
