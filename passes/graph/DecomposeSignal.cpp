//===- DecomposeSignal.cpp - Signal operators ---===//
//
// This file implements kiln-decompose's signal operators (Decompositions.h).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Decompositions.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {

/// DFT-17 as two MatMuls with constant cosine and sine matrices (computed in
/// double): Y = X · e^{∓2πi nk/L} over the signal axis, 1/L for the inverse, the
/// first L/2 + 1 frequencies when onesided; dft_length (a constant) pads or cuts.
FailureOr<SmallVector<Value>> decomposeDft(Operation *op, OnnxBuilder &ob) {
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), axis = axisOf(op, rank);
  Type elem = type.getElementType();
  if (axis < 0 || axis >= rank - 1 || !elem.isF32()) {
    op->emitError() << "DFT needs an f32 signal and an axis before the last";
    return failure();
  }
  int64_t n = type.getDimSize(axis), length = n;
  if (!absent(op->getOperand(1))) {
    auto value = dyn_cast_or_null<DenseElementsAttr>(kiln::constantValueOf(op->getOperand(1)));
    if (!value || value.getNumElements() != 1) {
      op->emitError() << "DFT's dft_length must be a constant (freeze it with --input-value)";
      return failure();
    }
    length = (*value.template getValues<APInt>().begin()).getSExtValue();
  }
  bool inverse = op->getAttrOfType<IntegerAttr>("inverse").getInt() != 0;
  bool onesided = op->getAttrOfType<IntegerAttr>("onesided").getInt() != 0;
  int64_t bins = onesided ? length / 2 + 1 : length;
  if (length <= 0 || length * bins > (int64_t{1} << 22)) {
    op->emitError() << "DFT length " << length << " is out of the supported range";
    return failure();
  }
  // The signal axis next to the complex one, cut or zero-padded to `length`.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[axis], perm[rank - 2]);
  Value signal = axis == rank - 2 ? x : ob.transpose(x, perm);
  if (length < n)
    signal = ob.slice(signal, rank - 2, 0, length);
  if (length > n) {
    SmallVector<int64_t> pads(2 * rank, 0);
    pads[rank + rank - 2] = length - n;
    signal = ob.create("Pad", {signal, ob.ints(pads), ob.scalar(elem, 0), ob.none()}, elem,
                       {ob.b.getNamedAttr("mode", ob.b.getStringAttr("constant"))});
  }
  Value re = ob.pick(signal, rank - 1, 0);
  Value im = type.getDimSize(rank - 1) == 2 ? ob.pick(signal, rank - 1, 1) : Value();
  SmallVector<float> cosines, sines;
  for (int64_t t = 0; t < length; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * static_cast<double>((t * k) % length) / length;
      cosines.push_back(static_cast<float>(std::cos(angle)));
      sines.push_back(static_cast<float>(std::sin(angle)));
    }
  auto matrixType = RankedTensorType::get({length, bins}, elem);
  Value c = ob.constant(DenseElementsAttr::get(matrixType, ArrayRef(cosines)));
  Value sn = ob.constant(DenseElementsAttr::get(matrixType, ArrayRef(sines)));
  auto matmul = [&](Value a, Value m) { return ob.create("MatMul", {a, m}, elem); };
  // Forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin) / L.
  Value yr = matmul(re, c), yi = matmul(re, sn);
  if (!inverse)
    yi = ob.create("Neg", yi, elem);
  if (im) {
    yr = ob.binary(inverse ? "Sub" : "Add", yr, matmul(im, sn));
    yi = ob.binary("Add", yi, matmul(im, c));
  }
  if (inverse) {
    yr = ob.binary("Mul", yr, ob.scalar(elem, 1.0 / length));
    yi = ob.binary("Mul", yi, ob.scalar(elem, 1.0 / length));
  }
  auto withUnit = [&](Value v) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
    shape.push_back(1);
    return ob.reshape(v, shape);
  };
  Value y = ob.concat({withUnit(yr), withUnit(yi)}, rank - 1);
  return SmallVector<Value>{axis == rank - 2 ? y : ob.transpose(y, perm)};
}

/// STFT-17 with a constant frame step and length (the model's, or frozen with
/// --input-value): the frames gathered by constant indices, times the window, then
/// a DFT over each frame (decomposed as above).
FailureOr<SmallVector<Value>> decomposeStft(Operation *op, OnnxBuilder &ob) {
  auto scalarOf = [](Value v) -> std::optional<int64_t> {
    auto d = dyn_cast_or_null<DenseElementsAttr>(kiln::constantValueOf(v));
    if (!d || d.getNumElements() != 1)
      return std::nullopt;
    return (*d.template getValues<APInt>().begin()).getSExtValue();
  };
  Value signal = op->getOperand(0), window = op->getOperand(2);
  auto type = cast<RankedTensorType>(signal.getType());
  std::optional<int64_t> step = scalarOf(op->getOperand(1));
  std::optional<int64_t> length =
      !absent(window) ? cast<RankedTensorType>(window.getType()).getDimSize(0)
                      : (absent(op->getOperand(3)) ? std::nullopt : scalarOf(op->getOperand(3)));
  if (!step || !length) {
    op->emitError() << "STFT needs a constant frame_step and frame length (a window, or "
                       "frame_length frozen with --input-value)";
    return failure();
  }
  int64_t samples = type.getDimSize(1);
  if (*step <= 0 || *length <= 0 || *length > samples) {
    op->emitError() << "STFT frame_step " << *step << " and frame length " << *length
                    << " do not fit a signal of " << samples;
    return failure();
  }
  int64_t frames = (samples - *length) / *step + 1;
  SmallVector<int64_t> indices;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < *length; ++j)
      indices.push_back(f * *step + j);
  auto indexType = RankedTensorType::get({frames, *length}, ob.b.getI64Type());
  Type elem = type.getElementType();
  Value framed = ob.create("Gather", {signal, ob.constant(DenseElementsAttr::get(indexType, ArrayRef(indices)))},
                           elem, {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(1))});
  if (!absent(window))
    framed = ob.binary("Mul", framed, ob.reshape(window, {1, 1, *length, 1}));
  Value dft = ob.create(
      "DFT", {framed, ob.none()}, elem,
      {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(2)),
       ob.b.getNamedAttr("inverse", ob.b.getI64IntegerAttr(0)),
       ob.b.getNamedAttr("onesided", op->getAttrOfType<IntegerAttr>("onesided"))});
  Operation *dftOp = dft.getDefiningOp();
  OnnxBuilder atDft(dftOp);
  FailureOr<SmallVector<Value>> spectrum = decomposeDft(dftOp, atDft);
  if (failed(spectrum))
    return failure();
  dftOp->erase();
  return spectrum;
}

} // namespace kiln
