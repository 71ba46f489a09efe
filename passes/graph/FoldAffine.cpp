//===- FoldAffine.cpp - Fold constant affines into contraction weights ----===//
//
// This file implements kiln-fold-affine (see Passes.td): a Mul, Div, Add or Sub of
// a Conv, ConvTranspose, Gemm or MatMul result (its only use) by a constant that
// is uniform or per output channel is folded into the contraction's constant
// weights and bias: scaling multiplies the weights (and bias) of each output
// channel, shifting adds to the bias. BatchNormalization reaches here as such an
// affine (kiln-fold-batchnorm). The weights are rewritten in the element type, the
// arithmetic done in double.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDAFFINE
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The contraction kinds folded into and the output axis of their channels.
enum class Kind { Conv, ConvTranspose, Gemm, MatMul };

struct Contraction {
  Operation *op;
  Kind kind;
  int64_t channelAxis;
  int64_t channels;
  /// ConvTranspose's group; Gemm's transB.
  int64_t group = 1;
  bool transB = false;
};

std::optional<Contraction> contractionOf(Value v) {
  Operation *op = v.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!op || !v.hasOneUse() || !type || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    return std::nullopt;
  auto make = [&](Kind kind, int64_t axis) -> std::optional<Contraction> {
    Contraction c{op, kind, axis, type.getDimSize(axis)};
    if (auto group = op->getAttrOfType<IntegerAttr>("group"))
      c.group = group.getInt();
    if (auto transB = op->getAttrOfType<IntegerAttr>("transB"))
      c.transB = transB.getInt() != 0;
    return c;
  };
  if (isa<kiln::onnx::ConvOp>(op) && type.getRank() >= 3)
    return make(Kind::Conv, 1);
  if (isa<kiln::onnx::ConvTransposeOp>(op) && type.getRank() >= 3)
    return make(Kind::ConvTranspose, 1);
  if (isa<kiln::onnx::GemmOp>(op) && type.getRank() == 2)
    return make(Kind::Gemm, 1);
  if (isa<kiln::onnx::MatMulOp>(op) && kiln::rankOf(op->getOperand(1)) == 2 &&
      type.getRank() >= 1)
    return make(Kind::MatMul, type.getRank() - 1);
  return std::nullopt;
}

/// The constant `k`, broadcast against a rank-`rank` result, as one value per
/// channel along `axis`; nullopt when it varies along any other axis.
std::optional<std::vector<double>> perChannel(Value k, int64_t rank, int64_t axis,
                                              int64_t channels) {
  auto type = dyn_cast<RankedTensorType>(k.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > rank)
    return std::nullopt;
  bool varies = false;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    bool isChannel = rank - type.getRank() + d == axis;
    if (size != 1 && !(isChannel && size == channels))
      return std::nullopt;
    varies |= size != 1;
  }
  std::optional<std::vector<double>> values = kiln::floatValuesOf(k);
  if (!values)
    return std::nullopt;
  if (!varies)
    return std::vector<double>(channels, values->front());
  return values;
}

/// A contraction operand's constant values with their shape; nullopt when it is
/// not a float constant.
struct Tensor {
  RankedTensorType type;
  std::vector<double> values;
};
std::optional<Tensor> tensorOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  std::optional<std::vector<double>> values = kiln::floatValuesOf(v);
  if (!type || !values)
    return std::nullopt;
  return Tensor{type, std::move(*values)};
}

/// The output channel each element of weight tensor `w` contributes to.
int64_t channelOfWeight(const Contraction &c, const Tensor &w, int64_t index) {
  ArrayRef<int64_t> shape = w.type.getShape();
  int64_t inner = 1;
  switch (c.kind) {
  case Kind::Conv: // [M, C/group, k...]
    for (int64_t d = 1; d < w.type.getRank(); ++d)
      inner *= shape[d];
    return index / inner;
  case Kind::ConvTranspose: { // [C, M/group, k...]
    for (int64_t d = 2; d < w.type.getRank(); ++d)
      inner *= shape[d];
    int64_t perGroup = shape[1];
    int64_t inputChannel = index / (inner * perGroup);
    int64_t j = (index / inner) % perGroup;
    return inputChannel / (shape[0] / c.group) * perGroup + j;
  }
  case Kind::Gemm: // [K, N], or [N, K] with transB
    return c.transB ? index / shape[1] : index % shape[1];
  case Kind::MatMul: // [K, N]
    return index % shape[1];
  }
  return 0;
}

/// The bias operand and attributes of `c` after folding: Gemm's C (any shape
/// broadcasting to [M, N] along rows) is scaled and shifted by shift / beta.
LogicalResult foldGemmBias(const Contraction &c, kiln::OnnxBuilder &b,
                           SmallVectorImpl<Value> &operands,
                           SmallVectorImpl<NamedAttribute> &attrs,
                           const std::vector<double> *scale,
                           const std::vector<double> *shift) {
  const unsigned bias = 2;
  double beta = 1.0;
  if (auto a = c.op->getAttrOfType<FloatAttr>("beta"))
    beta = a.getValueAsDouble();
  Value cv = operands.size() > bias ? operands[bias] : Value();
  bool hasC = !kiln::absent(cv) && beta != 0.0;
  if (!hasC && !shift)
    return success();
  int64_t n = c.channels, rows = 1;
  std::vector<double> values(n, 0.0);
  if (hasC) {
    std::optional<Tensor> ct = tensorOf(cv);
    if (!ct || ct->type.getRank() > 2)
      return failure();
    ArrayRef<int64_t> s = ct->type.getShape();
    int64_t cn = s.empty() ? 1 : s.back();
    rows = ct->type.getRank() == 2 ? s[0] : 1;
    if (cn != 1 && cn != n)
      return failure();
    values.assign(rows * n, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j)
        values[r * n + j] = ct->values[r * cn + (cn == 1 ? 0 : j)];
  } else {
    beta = 1.0;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double &v = values[r * n + j];
      if (scale)
        v *= (*scale)[j];
      if (shift)
        v += (*shift)[j] / beta;
    }
  SmallVector<int64_t> shape{n};
  if (rows != 1)
    shape.insert(shape.begin(), rows);
  auto type = RankedTensorType::get(shape, kiln::elementOf(c.op->getResult(0)));
  operands.resize(std::max<size_t>(operands.size(), bias + 1));
  operands[bias] = b.floats(type, values, "folded_bias");
  llvm::erase_if(attrs, [](NamedAttribute a) { return a.getName() == "beta"; });
  attrs.push_back(b.b.getNamedAttr("beta", b.b.getF32FloatAttr(beta)));
  return success();
}

/// The bias operand of Conv or ConvTranspose `c` after folding: one value per
/// output channel.
LogicalResult foldConvBias(const Contraction &c, kiln::OnnxBuilder &b,
                           SmallVectorImpl<Value> &operands,
                           const std::vector<double> *scale,
                           const std::vector<double> *shift) {
  const unsigned bias = 2;
  Value bv = operands.size() > bias ? operands[bias] : Value();
  std::vector<double> values(c.channels, 0.0);
  if (!kiln::absent(bv)) {
    std::optional<Tensor> bt = tensorOf(bv);
    if (!bt || static_cast<int64_t>(bt->values.size()) != c.channels)
      return failure();
    values = std::move(bt->values);
  } else if (!shift) {
    return success();
  }
  for (int64_t j = 0; j < c.channels; ++j) {
    if (scale)
      values[j] *= (*scale)[j];
    if (shift)
      values[j] += (*shift)[j];
  }
  auto type = RankedTensorType::get({c.channels}, kiln::elementOf(c.op->getResult(0)));
  operands.resize(std::max<size_t>(operands.size(), bias + 1));
  operands[bias] = b.floats(type, values, "folded_bias");
  return success();
}

/// Folds `scale` (per channel) into the weights and bias of `c`, or `shift` into
/// its bias; the folded contraction's result, or null when it cannot take it.
Value fold(const Contraction &c, const std::vector<double> *scale,
           const std::vector<double> *shift) {
  const unsigned weight = 1;
  if (c.kind == Kind::MatMul && shift)
    return nullptr; // No bias to take it.
  kiln::OnnxBuilder b(c.op);
  SmallVector<Value> operands(c.op->getOperands());
  SmallVector<NamedAttribute> attrs(c.op->getAttrs());
  std::optional<Tensor> w;
  if (scale && !(w = tensorOf(operands[weight])))
    return nullptr;
  if (c.kind == Kind::Gemm ? failed(foldGemmBias(c, b, operands, attrs, scale, shift))
      : c.kind != Kind::MatMul && failed(foldConvBias(c, b, operands, scale, shift)))
    return nullptr;
  if (scale) {
    for (size_t i = 0; i < w->values.size(); ++i)
      w->values[i] *= (*scale)[channelOfWeight(c, *w, i)];
    operands[weight] = b.floats(w->type, w->values, "folded_weight");
  }
  OperationState state(c.op->getLoc(), c.op->getName());
  state.addOperands(operands);
  state.addTypes(c.op->getResultTypes());
  state.addAttributes(attrs);
  return b.b.create(state)->getResult(0);
}

/// Folds affine op `op` into the contraction producing one of its operands;
/// true when it did (`op` and the old contraction are then erased).
bool foldAffine(Operation *op) {
  std::string name = kiln::onnx::onnxOperatorName(op);
  bool scales = name == "Mul" || name == "Div";
  bool shifts = name == "Add" || name == "Sub";
  if ((!scales && !shifts) || op->getNumOperands() != 2)
    return false;
  bool commutes = name == "Mul" || name == "Add";
  for (unsigned side : {0u, 1u}) {
    if (side == 1 && !commutes)
      break;
    Value r = op->getOperand(side), k = op->getOperand(1 - side);
    std::optional<Contraction> c = contractionOf(r);
    if (!c || r.getType() != op->getResult(0).getType())
      continue;
    std::optional<std::vector<double>> v =
        perChannel(k, kiln::rankOf(r), c->channelAxis, c->channels);
    if (!v)
      continue;
    if (name == "Div")
      for (double &x : *v)
        x = 1.0 / x;
    if (name == "Sub")
      for (double &x : *v)
        x = -x;
    Value folded = fold(*c, scales ? &*v : nullptr, shifts ? &*v : nullptr);
    if (!folded)
      continue;
    op->getResult(0).replaceAllUsesWith(folded);
    op->erase();
    c->op->erase();
    return true;
  }
  return false;
}

struct FoldAffinePass : kiln::impl::FoldAffineBase<FoldAffinePass> {
  void runOnOperation() override {
    // Program order: a Conv -> Mul -> Add chain folds the Mul, then the Add into the
    // Conv that replaced it.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<kiln::onnx::MulOp, kiln::onnx::DivOp, kiln::onnx::AddOp, kiln::onnx::SubOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      foldAffine(op);
  }
};

} // namespace
