//===- Decompose.cpp - Composite onnx ops into simpler ones ---------------===//
//
// This file implements kiln-decompose (see Passes.td): operators that are defined
// as compositions of others are rewritten into them, so that one lowering per
// primitive serves them all and fusion sees their insides:
//
//   QuantizeLinear    saturate(round(x / scale) + zero_point)
//   DequantizeLinear  (int32(x) - zero_point) * scale
//   DynamicQuantizeLinear  scale and zero point from min/max, then QuantizeLinear
//   MatMulInteger     int32 MatMul of (A - a_zp) and (B - b_zp)
//   ConvInteger       Conv of (x - x_zp) and (w - w_zp) in f64 (exact: every
//                     product and sum of 8-bit differences is an integer below 2^53)
//   QLinearMatMul     MatMulInteger, times a_scale * b_scale / y_scale, QuantizeLinear
//   QLinearConv       ConvInteger + bias, times x_scale * w_scale / y_scale, QuantizeLinear
//   Upsample, Resize-10  Resize with asymmetric coordinates (and floor for nearest)
//   BatchNormalization (training mode)  batch mean and variance, running statistics
//   TfIdfVectorizer   n-gram matches by Equal/And against the pool, counts mapped
//                     to the outputs by a constant matrix
//   Compress, NonZero where the model declares the output size: the selected
//                     positions by an exclusive CumSum and a match table, then
//                     Gather or unravel
//   Unique where the model declares the count: an equality table of the slices,
//                     first occurrences taken in order or by lexicographic rank
//   NonMaxSuppression where the model declares how many boxes it selects: the
//                     boxes in score order (TopK), the greedy selection as a Scan
//                     over them (a time loop), then the selected boxes in
//                     (batch, class, score) order
//   Reduce* with run-time axes, no keepdims, shapes that fit several axis sets:
//                     one reduction per fitting set, Where picks by the axes input
//
//   RNN, GRU, LSTM    per-time-step ops in a Scan (a time loop)
//   If (run time)     both branches and Where, or kiln.if over outlined branches
//
// Each family is a file of its own (Decompositions.h); this file holds the table
// of which op each decomposition serves, and the pass. Each new op is typed by its
// shape function, so the pass runs after kiln-infer-shapes and leaves static types.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/ControlFlow.h"
#include "passes/graph/Decompositions.h"
#include "passes/graph/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringMap.h"

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSE
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

FailureOr<SmallVector<Value>> decomposeIf(Operation *op, OnnxBuilder &ob) {
  return decomposeRuntimeIf(cast<onnx::IfOp>(op), ob);
}

/// Which decomposition serves each op (by ONNX name; Reduce* by prefix).
const llvm::StringMap<Decomposition> &decompositions() {
  static const llvm::StringMap<Decomposition> table = {
      {"QuantizeLinear", decomposeQuantizeLinear},
      {"DequantizeLinear", decomposeQuantizeLinear},
      {"DynamicQuantizeLinear", decomposeDynamicQuantizeLinear},
      {"MatMulInteger", decomposeMatMulInteger},
      {"QLinearMatMul", decomposeQLinearMatMul},
      {"ConvInteger", decomposeConvInteger},
      {"QLinearConv", decomposeQLinearConv},
      {"Upsample", decomposeUpsample},
      {"Resize", decomposeUpsample},
      {"Pad", decomposePadAttributes},
      {"Slice", decomposeSliceAttributes},
      {"PRelu", decomposePRelu},
      {"MaxUnpool", decomposeMaxUnpool},
      {"BatchNormalization", decomposeBatchNormalization},
      {"TfIdfVectorizer", decomposeTfIdf},
      {"Compress", decomposeSelection},
      {"NonZero", decomposeSelection},
      {"Unique", decomposeUnique},
      {"NonMaxSuppression", decomposeNonMaxSuppression},
      {"DFT", decomposeDft},
      {"STFT", decomposeStft},
      {"RNN", decomposeRecurrent},
      {"GRU", decomposeRecurrent},
      {"LSTM", decomposeRecurrent},
      {"If", decomposeIf},
  };
  return table;
}

/// The decomposition of `op`, or an empty list when it is not one to decompose.
/// Fails (after reporting) when the op is one but in a form Kiln lacks.
FailureOr<SmallVector<Value>> decompose(Operation *op) {
  auto isStatic = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return isa<NoneType>(v.getType()) || (t && t.hasStaticShape());
  };
  if (!llvm::all_of(op->getOperands(), isStatic))
    return SmallVector<Value>{};
  std::string name = onnx::onnxOperatorName(op);
  Decomposition d = decompositions().lookup(name);
  if (!d && StringRef(name).starts_with("Reduce"))
    d = selectRuntimeAxes;
  if (!d)
    return SmallVector<Value>{};
  OnnxBuilder ob(op);
  ob.foldConstants = true;
  return d(op, ob);
}

struct DecomposePass : kiln::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<kiln::onnx::OnnxDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      FailureOr<SmallVector<Value>> values = decompose(op);
      if (failed(values))
        return signalPassFailure();
      if (values->empty())
        continue;
      for (auto [result, value] : llvm::zip(op->getResults(), *values)) {
        if (!value)
          continue; // An output the model does not use.
        // The model may know more than the shape function (declared output types).
        if (result.getType() != value.getType() &&
            succeeded(verifyCompatibleShape(result.getType(), value.getType())) &&
            elementOf(result) == elementOf(value))
          value.setType(result.getType());
        if (result.getType() != value.getType()) {
          op->emitError() << "decomposition of " << op->getName() << " gives "
                          << value.getType() << " for " << result.getType();
          return signalPassFailure();
        }
        result.replaceAllUsesWith(value);
      }
      op->erase();
    }
  }
};

} // namespace
