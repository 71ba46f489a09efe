//===- OnnxBuilder.h - Build onnx ops typed by their shape functions -*- C++ -*-===//
//
// The graph phase's rewrites (kiln-decompose) build new onnx ops with this: each op
// is created with a placeholder type and typed at once by its shape function, fed
// the values of constant operands.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_ONNXBUILDER_H
#define KILN_PASSES_GRAPH_ONNXBUILDER_H

#include "mlir/IR/Builders.h"

namespace kiln {

mlir::Type elementOf(mlir::Value v);
int64_t rankOf(mlir::Value v);
/// True for a missing optional operand.
bool absent(mlir::Value v);

/// Creates onnx ops before a given op, typed by their shape functions.
/// The largest finite f16 value.
constexpr double kHalfMax = 65504.0;

class OnnxBuilder {
public:
  explicit OnnxBuilder(mlir::Operation *at);

  /// onnx.`name` with one result of element type `elem`.
  mlir::Value create(llvm::StringRef name, mlir::ValueRange operands, mlir::Type elem,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  /// onnx.`name` with one result per entry of `elems`, their element types.
  llvm::SmallVector<mlir::Value> createResults(llvm::StringRef name, mlir::ValueRange operands,
                                               llvm::ArrayRef<mlir::Type> elems,
                                               llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  mlir::Value none();
  mlir::Value constant(mlir::DenseElementsAttr value);
  /// A float constant of `type` holding `values` (row-major, converted to the
  /// element type); a large one is a resource blob named after `name`, as the
  /// importer stores weights.
  mlir::Value floats(mlir::RankedTensorType type, llvm::ArrayRef<double> values,
                     llvm::StringRef name);
  /// The f16 constant of `type` converted from f32 values (`f32Data`: their bytes,
  /// row-major, little-endian), a resource blob named after `name`, without a detour
  /// through doubles (weights run to tens of millions of values); null when a value
  /// is finite but beyond f16's range.
  mlir::Value halvesOf(mlir::RankedTensorType type, llvm::ArrayRef<char> f32Data,
                       llvm::StringRef name);
  mlir::Value scalar(mlir::Type elem, double v);
  /// A 1-D i64 constant.
  mlir::Value ints(llvm::ArrayRef<int64_t> values);
  mlir::Value castTo(mlir::Value v, mlir::Type to);
  mlir::Value binary(llvm::StringRef name, mlir::Value x, mlir::Value y);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  /// v[start:end] along `axis`.
  mlir::Value slice(mlir::Value v, int64_t axis, int64_t start, int64_t end);
  /// v[index] along `axis` (the axis goes).
  mlir::Value pick(mlir::Value v, int64_t axis, int64_t index);
  mlir::Value concat(mlir::ValueRange values, int64_t axis);
  /// A per-axis parameter (1-D, one value per index of `axis`) shaped to broadcast
  /// against a rank-`rank` tensor; scalars and single values as they are.
  mlir::Value alongAxis(mlir::Value p, int64_t axis, int64_t rank);
  /// int32(v) - int32(zero point), the zero point laid along `axis`.
  mlir::Value minusZeroPoint(mlir::Value v, mlir::Value zeroPoint, int64_t axis,
                             int64_t rank);
  /// saturate(round(x / scale) + zero point) in integer type `out`.
  mlir::Value quantize(mlir::Value x, mlir::Value scale, mlir::Value zeroPoint,
                       int64_t axis, mlir::Type out);
  /// Conv of (x - x_zp) and (w - w_zp) (+ bias) in f64, with `conv`'s attributes.
  mlir::Value integerConv(mlir::Operation *conv, mlir::Value x, mlir::Value xZero,
                          mlir::Value w, mlir::Value wZero, mlir::Value bias);

  /// A scan input or output of `scan`: the tensor, its scan axis, reversed or not.
  struct Scanned {
    mlir::Value value;
    int64_t axis = 0;
    bool reverse = false;
  };
  /// onnx.Scan over `inputs` (their scan axes of one length) carrying `states`,
  /// whose body `step` builds with this builder: given the states and the inputs'
  /// slices, it returns the new states, then the step's outputs. `outputs` give
  /// each stacked output's type, axis and direction (their values are ignored).
  /// Returns the final states, then the stacked outputs. The tensor phase makes the
  /// Scan an scf.for: one kernel, one step at a time.
  llvm::SmallVector<mlir::Value>
  scan(mlir::ValueRange states, llvm::ArrayRef<Scanned> inputs,
       llvm::ArrayRef<std::pair<mlir::RankedTensorType, Scanned>> outputs,
       llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::ValueRange states,
                                                         mlir::ValueRange slices)>
           step);

  mlir::OpBuilder b;
  mlir::Location loc;
  /// Whether create() folds ops whose operands are all constants (where
  /// EvaluateOnnx can: up to kMaxFoldElements); kiln-decompose does.
  bool foldConstants = false;

  /// A constant of `type` holding `data` (its elements' bytes) in a resource blob.
  mlir::Value blobConstant(mlir::RankedTensorType type, llvm::ArrayRef<char> data,
                           llvm::StringRef name);
};

/// The decomposition of RNN, GRU or LSTM into per-time-step ops
/// (DecomposeRecurrent.cpp); fails after reporting a form Kiln lacks.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
decomposeRecurrent(mlir::Operation *op, OnnxBuilder &ob);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_ONNXBUILDER_H
