//===- Decompositions.h - kiln-decompose's rewrites, by family --*- C++ -*-===//
//
// Each decomposition rewrites one onnx op (through `ob`, placed before it) into
// simpler ones and returns the values that replace its results (null for a result
// the model does not use); an empty list leaves the op as it is (a form that
// lowers directly); failure means the op is in a form Kiln lacks, reported on it.
// Decompose.cpp's table says which op each serves; one file per family:
//   DecomposeQuantization.cpp  QuantizeLinear, DequantizeLinear,
//                              DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
//                              ConvInteger, QLinearConv
//   DecomposeOldForms.cpp      Upsample, Resize-10, Pad-1/2, Slice-1, PRelu-6
//   DecomposeComposites.cpp    MaxUnpool, BatchNormalization (training), TfIdfVectorizer
//   DecomposeDataSized.cpp     Compress, NonZero, Unique, NonMaxSuppression (sizes
//                              the model declares), Reduce* with run-time axes
//   DecomposeSignal.cpp        DFT, STFT
//   DecomposeRecurrent.cpp     RNN, GRU, LSTM (OnnxBuilder.h)
//   ControlFlow.cpp            If decided at run time (ControlFlow.h)
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_DECOMPOSITIONS_H
#define KILN_PASSES_GRAPH_DECOMPOSITIONS_H

#include "dialects/onnx/OnnxConstants.h"
#include "passes/graph/OnnxBuilder.h"

namespace kiln {

using Decomposition = mlir::FailureOr<llvm::SmallVector<mlir::Value>> (*)(mlir::Operation *,
                                                                        OnnxBuilder &);

/// The op's `axis` attribute (default 1), made non-negative for `rank`.
inline int64_t axisOf(mlir::Operation *op, int64_t rank) {
  auto attr = op->getAttrOfType<mlir::IntegerAttr>("axis");
  int64_t axis = attr ? attr.getInt() : 1;
  return axis < 0 ? axis + rank : axis;
}

#define KILN_DECOMPOSITION(name)                                                       \
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> name(mlir::Operation *op, OnnxBuilder &ob);
KILN_DECOMPOSITION(decomposeQuantizeLinear)
KILN_DECOMPOSITION(decomposeDynamicQuantizeLinear)
KILN_DECOMPOSITION(decomposeMatMulInteger)
KILN_DECOMPOSITION(decomposeQLinearMatMul)
KILN_DECOMPOSITION(decomposeConvInteger)
KILN_DECOMPOSITION(decomposeQLinearConv)
KILN_DECOMPOSITION(decomposeUpsample)
KILN_DECOMPOSITION(decomposePadAttributes)
KILN_DECOMPOSITION(decomposeSliceAttributes)
KILN_DECOMPOSITION(decomposePRelu)
KILN_DECOMPOSITION(decomposeMaxUnpool)
KILN_DECOMPOSITION(decomposeBatchNormalization)
KILN_DECOMPOSITION(decomposeTfIdf)
KILN_DECOMPOSITION(decomposeSelection)
KILN_DECOMPOSITION(decomposeUnique)
KILN_DECOMPOSITION(decomposeNonMaxSuppression)
KILN_DECOMPOSITION(selectRuntimeAxes)
KILN_DECOMPOSITION(decomposeDft)
KILN_DECOMPOSITION(decomposeStft)
#undef KILN_DECOMPOSITION

} // namespace kiln

#endif // KILN_PASSES_GRAPH_DECOMPOSITIONS_H
