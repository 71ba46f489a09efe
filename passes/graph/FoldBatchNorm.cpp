//===- FoldBatchNorm.cpp - Inference BatchNormalization to an affine ------===//
//
// This file implements kiln-fold-batchnorm (see Passes.td): an inference-mode
// BatchNormalization whose scale, bias, mean and variance are constants becomes
// X * a + b with a = scale / sqrt(var + eps) and b = bias - mean * a computed here,
// laid along the channel axis. kiln-fold-affine then folds that affine into the
// Conv, ConvTranspose, Gemm or MatMul before it, where there is one; a standalone
// BatchNormalization stays a per-channel affine (one fused elementwise op).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The affine form of `bn`, or null when it is not an inference BatchNormalization
/// over constant per-channel statistics.
Value affineOf(kiln::onnx::BatchNormalizationOp bn) {
  if (auto t = bn.getTrainingMode(); t && *t)
    return nullptr;
  if (!kiln::absent(bn.getRunningMean()) && !bn.getRunningMean().use_empty())
    return nullptr;
  if (!kiln::absent(bn.getRunningVar()) && !bn.getRunningVar().use_empty())
    return nullptr;
  auto type = dyn_cast<RankedTensorType>(bn.getX().getType());
  if (!type || type.getRank() < 2 || type.isDynamicDim(1) || type != bn.getY().getType())
    return nullptr;
  int64_t channels = type.getDimSize(1);
  SmallVector<std::vector<double>> params;
  for (Value p : {bn.getScale(), bn.getB(), bn.getInputMean(), bn.getInputVar()}) {
    auto ptype = dyn_cast<RankedTensorType>(p.getType());
    std::optional<std::vector<double>> values = kiln::floatValuesOf(p);
    // Per-channel statistics only (the spatial=0 form of opsets 1-8 has more).
    if (!ptype || ptype.getRank() != 1 || !values ||
        static_cast<int64_t>(values->size()) != channels)
      return nullptr;
    params.push_back(std::move(*values));
  }
  double eps = bn.getEpsilon().convertToDouble();
  std::vector<double> a(channels), b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = params[0][c] / std::sqrt(params[3][c] + eps);
    b[c] = params[1][c] - params[2][c] * a[c];
  }
  SmallVector<int64_t> shape(type.getRank() - 1, 1);
  shape[0] = channels;
  auto ptype = RankedTensorType::get(shape, type.getElementType());
  kiln::OnnxBuilder builder(bn);
  Value scaled = builder.binary("Mul", bn.getX(), builder.floats(ptype, a, "bn_scale"));
  return builder.binary("Add", scaled, builder.floats(ptype, b, "bn_shift"));
}

struct FoldBatchNormPass : kiln::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    SmallVector<kiln::onnx::BatchNormalizationOp> norms;
    getOperation().walk([&](kiln::onnx::BatchNormalizationOp bn) { norms.push_back(bn); });
    for (kiln::onnx::BatchNormalizationOp bn : norms) {
      Value affine = affineOf(bn);
      if (!affine)
        continue;
      bn.getY().replaceAllUsesWith(affine);
      bn->erase();
    }
  }
};

} // namespace
