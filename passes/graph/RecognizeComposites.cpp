//===- RecognizeComposites.cpp - LayerNorm, GELU, attention from pieces ---===//
//
// This file implements kiln-recognize-composites (see Passes.td). Exporters write
// LayerNormalization (before opset 17) and GELU (before opset 20) as chains of
// primitives; recognized, each is one op the later phases fuse as a unit.
//
//   LayerNorm: ReduceMean -> Sub -> Pow 2 (or Mul by itself) -> ReduceMean ->
//     Add eps -> Sqrt -> Div (or Mul by its Reciprocal) [-> Mul scale] [-> Add bias],
//     over trailing axes, matched structurally.
//   GELU: any chain of elementwise ops on one tensor x and scalar constants that
//     contains an Erf or a Tanh and computes x * Phi(x) (exactly, or the tanh
//     approximation) is recognized by evaluating it: the chain is run on sample
//     points and compared with both GELUs. So every arrangement exporters write
//     (Div by sqrt 2 or Mul by its inverse, the 0.5 first or last) is one matcher.
//
//   Attention: MatMul(Q, Kt) -> [Mul or Div by a scalar] -> [Add mask, or
//     Where(keep, scores, fill)] -> Softmax over the last axis -> MatMul(P, V)
//     becomes kiln.attention (equal batch dims, static shapes), which the tensor
//     phase lowers and the `attention` fusion rule makes one kernel.
//
// Every intermediate must be used only inside the composite.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"
#include "dialects/onnx/OnnxConstants.h"
#include "dialects/kiln/KilnDialect.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_RECOGNIZECOMPOSITES
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

std::string nameOf(Operation *op) {
  return op ? kiln::onnx::onnxOperatorName(op) : std::string();
}

/// The value of a one-element float constant.
std::optional<double> scalarOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt;
  std::optional<std::vector<double>> values = kiln::floatValuesOf(v);
  if (!values)
    return std::nullopt;
  return values->front();
}

/// `op`'s operand that is not `v` (binary ops), or null.
Value otherOperand(Operation *op, Value v) {
  if (op->getNumOperands() != 2)
    return nullptr;
  return op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

bool isGeluPiece(Operation *op) {
  static const char *names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Erf",
                                "Tanh", "Sqrt", "Neg", "Reciprocal"};
  return op && op->getNumResults() == 1 && llvm::is_contained(names, nameOf(op));
}

/// A chain of GELU pieces ending at `root` over one variable.
struct Chain {
  Value root;
  Value x;
  bool valid = true;

  /// Visits `v`: the variable, a scalar constant, or a piece used only here.
  void visit(Value v) {
    if (!valid || v == x || scalarOf(v))
      return;
    Operation *op = v.getDefiningOp();
    if (isGeluPiece(op) && (v == root || v.hasOneUse()) && v.getType() == root.getType()) {
      for (Value operand : op->getOperands())
        visit(operand);
      return;
    }
    if (!x && v.getType() == root.getType()) {
      x = v; // The first leaf that is neither a constant nor a piece.
      return;
    }
    valid = false;
  }

  double evaluate(Value v, double t) const {
    if (v == x)
      return t;
    if (std::optional<double> c = scalarOf(v))
      return *c;
    Operation *op = v.getDefiningOp();
    std::string name = nameOf(op);
    double a = evaluate(op->getOperand(0), t);
    if (name == "Erf") return std::erf(a);
    if (name == "Tanh") return std::tanh(a);
    if (name == "Sqrt") return std::sqrt(a);
    if (name == "Neg") return -a;
    if (name == "Reciprocal") return 1.0 / a;
    double b = evaluate(op->getOperand(1), t);
    if (name == "Add") return a + b;
    if (name == "Sub") return a - b;
    if (name == "Mul") return a * b;
    if (name == "Div") return a / b;
    return std::pow(a, b); // Pow
  }
};

/// "none" or "tanh" when `chain` computes that GELU at every sample point.
std::optional<StringRef> geluKind(const Chain &chain) {
  auto exact = [](double t) { return 0.5 * t * (1.0 + std::erf(t / std::sqrt(2.0))); };
  auto tanhForm = [](double t) {
    return 0.5 * t *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (t + 0.044715 * t * t * t)));
  };
  // The two differ by up to 5e-4 (near |t| = 2); f32 constants are good to 1e-7.
  auto matches = [&](auto reference) {
    for (double t : {-6.0, -3.0, -2.0, -1.5, -1.0, -0.5, -0.1, 0.0, 0.1, 0.5, 1.0,
                     1.5, 2.0, 3.0, 6.0}) {
      double got = chain.evaluate(chain.root, t), want = reference(t);
      if (!(std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want))))
        return false;
    }
    return true;
  };
  if (matches(exact))
    return StringRef("none");
  if (matches(tanhForm))
    return StringRef("tanh");
  return std::nullopt;
}

/// Replaces the GELU around Erf or Tanh `anchor` by onnx.Gelu; true when it did.
bool recognizeGelu(Operation *anchor) {
  // The variable: the leaf of the anchor's own operand chain.
  Chain inner{anchor->getResult(0)};
  inner.visit(anchor->getResult(0));
  if (!inner.valid || !inner.x)
    return false;
  // Candidate roots: the anchor's single-use successors, the furthest first.
  SmallVector<Operation *> path;
  for (Operation *op = anchor; op->getResult(0).hasOneUse();) {
    Operation *user = *op->getResult(0).getUsers().begin();
    if (!isGeluPiece(user) || user->getResult(0).getType() != anchor->getResult(0).getType())
      break;
    path.push_back(op = user);
  }
  for (Operation *root : llvm::reverse(path)) {
    Chain chain{root->getResult(0), inner.x};
    chain.visit(chain.root);
    if (!chain.valid)
      continue;
    std::optional<StringRef> kind = geluKind(chain);
    if (!kind)
      continue;
    OpBuilder b(root);
    auto gelu = b.create<kiln::onnx::GeluOp>(root->getLoc(), root->getResultTypes(),
                                             inner.x, b.getStringAttr(*kind));
    root->getResult(0).replaceAllUsesWith(gelu.getResult());
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// The first reduced axis of a keepdims ReduceMean over trailing axes of `x`.
std::optional<int64_t> trailingMeanAxis(Operation *op, Value x) {
  std::string name = nameOf(op);
  if (name != "ReduceMean" || op->getOperand(0) != x)
    return std::nullopt;
  auto keep = op->getAttrOfType<IntegerAttr>("keepdims");
  if (keep && !keep.getInt())
    return std::nullopt;
  SmallVector<int64_t> axes;
  if (auto attr = op->getAttrOfType<ArrayAttr>("axes")) {
    for (Attribute a : attr)
      axes.push_back(cast<IntegerAttr>(a).getInt());
  } else if (op->getNumOperands() < 2 || !kiln::getConstantInts(op->getOperand(1), axes)) {
    return std::nullopt;
  }
  int64_t rank = kiln::rankOf(x);
  for (int64_t &a : axes)
    a = a < 0 ? a + rank : a;
  llvm::sort(axes);
  if (axes.empty() || axes.back() != rank - 1 ||
      axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
    return std::nullopt;
  return axes.front();
}

Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `p` as a LayerNormalization scale or bias for `axis` of rank-`rank` values: it
/// varies only along the normalized axes (reshaped to them when it has more dims).
Value normalizedParameter(kiln::OnnxBuilder &b, Value p, int64_t axis, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(p.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > rank)
    return nullptr;
  int64_t lead = type.getRank() - (rank - axis);
  for (int64_t d = 0; d < lead; ++d)
    if (type.getDimSize(d) != 1)
      return nullptr;
  if (lead <= 0)
    return p;
  return b.reshape(p, type.getShape().drop_front(lead));
}

/// Replaces the LayerNorm whose mean is ReduceMean `mean` by
/// onnx.LayerNormalization; true when it did.
bool recognizeLayerNorm(Operation *mean) {
  Value x = mean->getOperand(0);
  auto type = dyn_cast<RankedTensorType>(x.getType());
  std::optional<int64_t> axis = trailingMeanAxis(mean, x);
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()) || !axis)
    return false;
  Operation *sub = onlyUser(mean->getResult(0));
  if (nameOf(sub) != "Sub" || sub->getOperand(0) != x || sub->getResult(0).getType() != type)
    return false;
  Value d = sub->getResult(0);
  // d feeds the square and the division, nothing else.
  Operation *square = nullptr, *divide = nullptr;
  for (Operation *user : d.getUsers()) {
    std::string name = nameOf(user);
    bool squares = (name == "Pow" && user->getOperand(0) == d &&
                    scalarOf(user->getOperand(1)) == 2.0) ||
                   (name == "Mul" && user->getOperand(0) == d && user->getOperand(1) == d);
    if (squares && !square)
      square = user;
    else if ((name == "Div" || name == "Mul") && user->getOperand(0) == d && !divide)
      divide = user;
    else
      return false;
  }
  if (!square || !divide)
    return false;
  Operation *var = onlyUser(square->getResult(0));
  if (!var || trailingMeanAxis(var, square->getResult(0)) != axis)
    return false;
  Operation *addEps = onlyUser(var->getResult(0));
  if (nameOf(addEps) != "Add")
    return false;
  std::optional<double> eps = scalarOf(otherOperand(addEps, var->getResult(0)));
  Operation *sqrt = onlyUser(addEps->getResult(0));
  if (!eps || nameOf(sqrt) != "Sqrt")
    return false;
  Value denominator = sqrt->getResult(0);
  if (nameOf(divide) == "Mul") { // d * Reciprocal(sqrt(...))
    Operation *reciprocal = onlyUser(denominator);
    if (nameOf(reciprocal) != "Reciprocal" || divide->getOperand(1) != reciprocal->getResult(0))
      return false;
  } else if (divide->getOperand(1) != denominator || !denominator.hasOneUse()) {
    return false;
  }
  Value y = divide->getResult(0);
  if (y.getType() != type)
    return false;
  int64_t rank = type.getRank();
  kiln::OnnxBuilder b(divide);
  Value scale, bias;
  Operation *last = divide;
  if (Operation *mul = onlyUser(y); nameOf(mul) == "Mul" && mul->getResult(0).getType() == type) {
    b = kiln::OnnxBuilder(mul);
    if ((scale = normalizedParameter(b, otherOperand(mul, y), *axis, rank)))
      last = mul;
  }
  if (Operation *add = onlyUser(last->getResult(0));
      scale && nameOf(add) == "Add" && add->getResult(0).getType() == type) {
    b = kiln::OnnxBuilder(add);
    if ((bias = normalizedParameter(b, otherOperand(add, last->getResult(0)), *axis, rank)))
      last = add;
  }
  if (!scale) {
    SmallVector<int64_t> shape(type.getShape().drop_front(*axis));
    std::vector<double> ones(RankedTensorType::get(shape, type.getElementType()).getNumElements(), 1.0);
    scale = b.floats(RankedTensorType::get(shape, type.getElementType()), ones, "ln_scale");
  }
  auto ln = b.b.create<kiln::onnx::LayerNormalizationOp>(
      last->getLoc(), TypeRange{type, b.b.getNoneType(), b.b.getNoneType()},
      x, scale, bias ? bias : b.none(), b.b.getI64IntegerAttr(*axis),
      b.b.getF32FloatAttr(static_cast<float>(*eps)), b.b.getI64IntegerAttr(1));
  last->getResult(0).replaceAllUsesWith(ln.getY());
  return true;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The defining op of `v` when it is an onnx op named `name` and `v` its only use.
Operation *onlyUseOf(Value v, StringRef name) {
  Operation *def = v.getDefiningOp();
  return def && v.hasOneUse() && nameOf(def) == name ? def : nullptr;
}

/// Replaces MatMul -> [scale] -> [mask] -> Softmax (last axis) -> MatMul around
/// Softmax `softmax` by kiln.attention; true when it did.
bool recognizeAttention(Operation *softmax) {
  auto type = dyn_cast<RankedTensorType>(softmax->getResult(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 3 ||
      !isa<FloatType>(type.getElementType()) || !softmax->getResult(0).hasOneUse())
    return false;
  int64_t r = type.getRank();
  int64_t axis = -1;
  if (auto a = softmax->getAttrOfType<IntegerAttr>("axis"))
    axis = a.getInt();
  if (axis != -1 && axis != r - 1)
    return false;
  Operation *pv = *softmax->getResult(0).getUsers().begin();
  if (nameOf(pv) != "MatMul" || pv->getOperand(0) != softmax->getResult(0))
    return false;
  // Mask: Where(keep, scores, fill) or scores + mask.
  Value x = softmax->getOperand(0), mask;
  StringRef kind = "none";
  double fill = 0.0;
  if (Operation *where = onlyUseOf(x, "Where")) {
    std::optional<double> f = scalarOf(where->getOperand(2));
    if (!f || where->getResult(0).getType() != type)
      return false;
    mask = where->getOperand(0);
    kind = "keep";
    fill = *f;
    x = where->getOperand(1);
  } else if (Operation *add = onlyUseOf(x, "Add")) {
    Value a = add->getOperand(0), b = add->getOperand(1);
    bool aScores = nameOf(a.getDefiningOp()) == "MatMul" || nameOf(a.getDefiningOp()) == "Mul" ||
                   nameOf(a.getDefiningOp()) == "Div";
    mask = aScores ? b : a;
    x = aScores ? a : b;
    kind = "add";
    if (add->getResult(0).getType() != type || x.getType() != type)
      return false;
  }
  // Scale: Mul or Div by a scalar constant.
  double scale = 1.0;
  if (Operation *mul = onlyUseOf(x, "Mul")) {
    std::optional<double> c = scalarOf(mul->getOperand(1));
    Value other = mul->getOperand(0);
    if (!c) {
      c = scalarOf(mul->getOperand(0));
      other = mul->getOperand(1);
    }
    if (!c)
      return false;
    scale = *c;
    x = other;
  } else if (Operation *div = onlyUseOf(x, "Div")) {
    std::optional<double> c = scalarOf(div->getOperand(1));
    if (!c || *c == 0.0)
      return false;
    scale = 1.0 / *c;
    x = div->getOperand(0);
  }
  Operation *qk = onlyUseOf(x, "MatMul");
  if (!qk || x.getType() != type)
    return false;
  Value q = qk->getOperand(0), kt = qk->getOperand(1), v = pv->getOperand(1);
  // The shapes the op takes: static, one rank, equal batch dims (no broadcasting).
  SmallVector<RankedTensorType> types;
  for (Value t : {q, kt, v, Value(pv->getResult(0))}) {
    auto tt = dyn_cast<RankedTensorType>(t.getType());
    if (!tt || !tt.hasStaticShape() || tt.getRank() != r ||
        tt.getElementType() != type.getElementType())
      return false;
    types.push_back(tt);
  }
  for (RankedTensorType t : types)
    if (t.getShape().drop_back(2) != type.getShape().drop_back(2))
      return false;
  if (kind == "keep" && !getElementTypeOrSelf(mask.getType()).isInteger(1))
    return false;
  OpBuilder b(pv);
  auto op = b.create<kiln::AttentionOp>(pv->getLoc(), types[3], q, kt, v, mask,
                                        b.getF64FloatAttr(scale), b.getStringAttr(kind),
                                        b.getF64FloatAttr(fill));
  pv->getResult(0).replaceAllUsesWith(op.getOutput());
  return true;
}

struct RecognizeCompositesPass
    : kiln::impl::RecognizeCompositesBase<RecognizeCompositesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> means, anchors, softmaxes;
    getOperation().walk([&](Operation *op) {
      std::string name = nameOf(op);
      if (name == "ReduceMean")
        means.push_back(op);
      else if (name == "Erf" || name == "Tanh")
        anchors.push_back(op);
      else if (name == "Softmax")
        softmaxes.push_back(op);
    });
    for (Operation *softmax : softmaxes)
      recognizeAttention(softmax);
    // The replaced ops are left dead; the canonicalizer after the phase removes them.
    for (Operation *mean : means)
      recognizeLayerNorm(mean);
    for (Operation *anchor : anchors)
      recognizeGelu(anchor);
  }
};

} // namespace
