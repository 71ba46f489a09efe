//===- LoweringUtils.h - Helpers for onnx -> linalg lowering ---*- C++ -*-===//
//
// Shared by the per-family lowering files: the type converter (ONNX's unsigned
// integers become signless; the ops remember signedness), broadcasting
// elementwise generics, scalar constants, and the populate functions each family
// exports.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_LOWERINGUTILS_H
#define KILN_PASSES_LOWERING_LOWERINGUTILS_H

#include "dialects/onnx/OnnxDialect.h"

#include "dialects/onnx/OnnxConstants.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {

/// Converts ONNX tensor types to the ones the tensor phase uses: unsigned integer
/// elements become signless of the same width.
class OnnxTypeConverter : public mlir::TypeConverter {
public:
  OnnxTypeConverter();
};

/// Element kinds that decide which arith op implements an ONNX op.
enum class ElemKind { Float, Signed, Unsigned, Bool };
ElemKind elemKind(mlir::Type onnxType);

/// A zero-filled-free destination for a result of `type`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// A tensor of `type` filled with `value` (linalg.fill of a tensor.empty).
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value);

/// acc + a * x (float or integer), the contractions' body.
mlir::Value multiplyAdd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a, mlir::Value x,
                        mlir::Value acc);

/// Kiln's one accumulator-type policy: every lowering that sums (contractions,
/// convolutions, pooling, reductions) accumulates 16-bit floats in f32, reading and
/// writing the tensors' own type; other types accumulate in themselves. Both
/// targets inherit it from the IR (the f32 accumulator is the contraction's result,
/// the conversion back an epilogue that keeps it out of memory).
mlir::Type accumulatorType(mlir::Type elem);
/// `type` with accumulatorType() elements.
mlir::RankedTensorType accumulatorTensorType(mlir::RankedTensorType type);
/// The scalar `v` as the float type `to` (extf or truncf); `v` when it already is
/// (or is not a float).
mlir::Value castFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      mlir::Type to);
/// The accumulator tensor `acc` as `type` (an elementwise truncf), or `acc` when its
/// type is `type` already.
mlir::Value fromAccumulator(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                            mlir::RankedTensorType type);

/// A per-channel vector [C] reshaped to [C, 1, ..., 1] so that it broadcasts
/// against an (N, C, spatial...) tensor of rank `rank`.
mlir::Value perChannel(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       int64_t rank);

/// A scalar constant of element type `type` (float or integer) with `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// Builds a linalg.generic computing `resultType` elementwise from `inputs` with
/// NumPy broadcasting (each input's dims align to the right; size-1 dims repeat).
/// `body` receives one scalar per input and returns the result scalar.
using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange inputs, ScalarBody body);

/// Pads every dim d of `x` (static shape) with low[d] and high[d] elements of
/// `value` (tensor.pad); `x` itself when nothing is padded.
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      double value);

/// Reshapes `value` (static shape) to `type` with the same element count, through
/// tensor.collapse_shape / tensor.expand_shape.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type);

/// The converted type of `op`'s result `index`, or null when it is not a ranked
/// tensor.
mlir::RankedTensorType resultTypeOf(const mlir::TypeConverter *converter,
                                    mlir::Operation *op, unsigned index = 0);

/// A run-time index into a dimension of size `dim`, counting from the end when
/// negative (ONNX's Gather convention), as an index value; out-of-range values
/// are clamped into the dimension so that a read never leaves the tensor.
mlir::Value wrapIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value index,
                      int64_t dim);

/// Normalizes a possibly negative axis; false when out of range.
bool normalizeAxis(int64_t &axis, int64_t rank);

// One populate function per op family (one file each).
void populateElementwiseLoweringPatterns(mlir::RewritePatternSet &patterns,
                                         mlir::TypeConverter &converter);
void populateConstantLoweringPatterns(mlir::RewritePatternSet &patterns,
                                      mlir::TypeConverter &converter);
void populateMatMulLoweringPatterns(mlir::RewritePatternSet &patterns,
                                    mlir::TypeConverter &converter);
void populateViewLoweringPatterns(mlir::RewritePatternSet &patterns,
                                  mlir::TypeConverter &converter);
void populateIndexingLoweringPatterns(mlir::RewritePatternSet &patterns,
                                      mlir::TypeConverter &converter);
void populateResampleLoweringPatterns(mlir::RewritePatternSet &patterns,
                                      mlir::TypeConverter &converter);
void populateGeneratorLoweringPatterns(mlir::RewritePatternSet &patterns,
                                   mlir::TypeConverter &converter);
void populateReductionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                       mlir::TypeConverter &converter);
void populateLossLoweringPatterns(mlir::RewritePatternSet &patterns,
                                  mlir::TypeConverter &converter);
void populateNormalizationLoweringPatterns(mlir::RewritePatternSet &patterns,
                                           mlir::TypeConverter &converter);
void populateConvPoolLoweringPatterns(mlir::RewritePatternSet &patterns,
                                      mlir::TypeConverter &converter);
void populateAttentionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                       mlir::TypeConverter &converter);
void populateControlFlowLoweringPatterns(mlir::RewritePatternSet &patterns,
                                         mlir::TypeConverter &converter);

} // namespace kiln

#endif // KILN_PASSES_LOWERING_LOWERINGUTILS_H
