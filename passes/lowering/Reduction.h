//===- Reduction.h - Reduction helpers shared by lowering families -*- C++ -*-===//
//
// Reductions over chosen dimensions as linalg.generic, used by the reduction,
// softmax, normalization and pooling lowerings.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_REDUCTION_H
#define KILN_PASSES_LOWERING_REDUCTION_H

#include "passes/lowering/LoweringUtils.h"

#include <functional>

namespace kiln {

/// acc' = combine(acc, x)
using ReduceCombiner = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                 mlir::Value, mlir::Value)>;
/// x' = pre(x), applied to each input element before combining.
using ScalarMap =
    std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)>;

/// Reduces the dimensions marked in `reduced` (dropping them) from `init`.
mlir::Value reduceDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                       llvm::ArrayRef<bool> reduced, double init,
                       ReduceCombiner combine, ScalarMap pre = nullptr);

/// The same, keeping reduced dimensions as size 1 (ready to broadcast back).
mlir::Value reduceKeepDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                           llvm::ArrayRef<bool> reduced, double init,
                           ReduceCombiner combine, ScalarMap pre = nullptr);

/// exp(x - max) / sum over the dimensions marked in `reduced` (keeping them);
/// `logSoftmax`: x - max - log(sum).
mlir::Value softmax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    llvm::ArrayRef<bool> reduced, bool logSoftmax = false);

} // namespace kiln

#endif // KILN_PASSES_LOWERING_REDUCTION_H
