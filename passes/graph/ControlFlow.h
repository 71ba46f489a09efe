//===- ControlFlow.h - The graph phase's control flow ----------*- C++ -*-===//
//
// Everything the graph phase does to ONNX control flow, in one place:
// kiln-infer-shapes hands each If, Loop and Scan to GraphControlFlow as it sweeps
// (a constant If's branch inlined, a run-time If's branches inferred, Loop and
// Scan unrolled: each step a copy of the body, folded and typed by the pass's
// sweep; a run-time trip count up to a declared bound or a condition that folds);
// kiln-decompose turns a run-time If into Where (small branches) or kiln.if over
// outlined branch functions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_CONTROLFLOW_H
#define KILN_PASSES_GRAPH_CONTROLFLOW_H

#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/OnnxBuilder.h"

#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <optional>

namespace kiln {

class GraphControlFlow {
public:
  /// `sweep` visits ops in order as kiln-infer-shapes does (folds, types them).
  using Sweep = std::function<mlir::LogicalResult(llvm::ArrayRef<mlir::Operation *>)>;
  explicit GraphControlFlow(Sweep sweep) : sweep(std::move(sweep)) {}

  /// Replaces `ifOp` by the ops of `branch` (which may use values from above) and
  /// sweeps them.
  mlir::LogicalResult inlineBranch(onnx::IfOp ifOp, mlir::Region &branch);
  /// An If decided at run time: its branches are swept like the main body, and a
  /// result both branches give the same type gets it (the same value: replaced).
  mlir::LogicalResult inferBranches(onnx::IfOp ifOp);
  /// Scan (9+ or 8) with static shapes, unrolled; left alone otherwise.
  mlir::LogicalResult unrollScan(mlir::Operation *scan);
  /// Loop with `values` its operands' constants (null where unknown), unrolled.
  mlir::LogicalResult unrollLoop(onnx::LoopOp loop, llvm::ArrayRef<mlir::Attribute> values);

private:
  mlir::LogicalResult unrollBounded(onnx::LoopOp loop, int64_t bound);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> runBody(mlir::Block &body,
                                                          mlir::ValueRange args,
                                                          mlir::Operation *at);
  static mlir::Value stack(OnnxBuilder &ob, llvm::ArrayRef<mlir::Value> parts, int64_t axis);
  mlir::LogicalResult replaceUnrolled(mlir::Operation *op, llvm::ArrayRef<mlir::Value> values);
  static std::optional<int64_t> scalar(mlir::Attribute a);

  Sweep sweep;
};

/// kiln-decompose's run-time If (its condition known only at run time): both
/// branches and Where where they compute at most 4,096 elements, else each branch
/// outlined into a function of the values it captures and `kiln.if` picking one
/// on the host. Every result needs one static type, the same from both branches.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> decomposeRuntimeIf(onnx::IfOp ifOp,
                                                                   OnnxBuilder &ob);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_CONTROLFLOW_H
