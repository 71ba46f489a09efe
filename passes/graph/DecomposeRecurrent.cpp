//===- DecomposeRecurrent.cpp - RNN, GRU and LSTM as per-step ops ---------===//
//
// This file implements the recurrent part of kiln-decompose. The input projection
// of all time steps is one MatMul per direction (X · Wᵀ + Wb); each time step is
// then a MatMul with the recurrence weights and the gate arithmetic of the ONNX
// definition, in the op's direction (forward, reverse, or both), with its
// activations (and their alpha/beta), clip, initial states, peepholes, layout and
// sequence_lens (steps past a sequence's length keep its state and output zeros).
// The time loop is an onnx.Scan whose body is one step; the tensor phase makes it
// an scf.for, which the kernels phase keeps as one kernel.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

struct Activation {
  std::string name; // lower case
  float alpha = 0, beta = 0;
};

bool takesAlpha(StringRef n) {
  return llvm::is_contained({"hardsigmoid", "leakyrelu", "elu", "thresholdedrelu",
                             "scaledtanh", "affine"},
                            n);
}
bool takesBeta(StringRef n) {
  return llvm::is_contained({"hardsigmoid", "scaledtanh", "affine"}, n);
}
float defaultAlpha(StringRef n) {
  return n == "hardsigmoid" ? 0.2f : n == "leakyrelu" ? 0.01f : 1.0f;
}
float defaultBeta(StringRef n) { return n == "hardsigmoid" ? 0.5f : 0.0f; }

class Recurrence {
public:
  Recurrence(Operation *op, OnnxBuilder &ob) : op(op), ob(ob) {}
  FailureOr<SmallVector<Value>> run();

private:
  Value in(unsigned i) {
    return i < op->getNumOperands() && !absent(op->getOperand(i)) ? op->getOperand(i)
                                                                   : Value();
  }
  Value apply(const Activation &a, Value x);
  Value clip(Value x) {
    if (!clipValue)
      return x;
    Value lo = ob.create("Max", {x, ob.scalar(f, -*clipValue)}, f);
    return ob.create("Min", {lo, ob.scalar(f, *clipValue)}, f);
  }
  Value add(Value x, Value y) { return ob.binary("Add", x, y); }
  Value mul(Value x, Value y) { return ob.binary("Mul", x, y); }
  Value gate(Value v, int64_t k) { return ob.slice(v, 1, k * hidden, (k + 1) * hidden); }
  Value zeros(ArrayRef<int64_t> shape) {
    return ob.constant(DenseElementsAttr::get(RankedTensorType::get(shape, f),
                                              FloatAttr::get(f, 0.0).getValue()));
  }

  Operation *op;
  OnnxBuilder &ob;
  std::string kind;
  Type f;
  int64_t hidden = 0;
  std::optional<float> clipValue;
};

Value Recurrence::apply(const Activation &a, Value x) {
  auto attr = [&](StringRef n, float v) {
    return ob.b.getNamedAttr(n, ob.b.getF32FloatAttr(v));
  };
  const std::string &n = a.name;
  if (n == "sigmoid") return ob.create("Sigmoid", x, f);
  if (n == "tanh") return ob.create("Tanh", x, f);
  if (n == "relu") return ob.create("Relu", x, f);
  if (n == "softsign") return ob.create("Softsign", x, f);
  if (n == "softplus") return ob.create("Softplus", x, f);
  if (n == "hardsigmoid")
    return ob.create("HardSigmoid", x, f, {attr("alpha", a.alpha), attr("beta", a.beta)});
  if (n == "leakyrelu") return ob.create("LeakyRelu", x, f, {attr("alpha", a.alpha)});
  if (n == "elu") return ob.create("Elu", x, f, {attr("alpha", a.alpha)});
  if (n == "thresholdedrelu")
    return ob.create("ThresholdedRelu", x, f, {attr("alpha", a.alpha)});
  if (n == "scaledtanh")
    return mul(ob.scalar(f, a.alpha), ob.create("Tanh", mul(x, ob.scalar(f, a.beta)), f));
  // affine
  return add(mul(x, ob.scalar(f, a.alpha)), ob.scalar(f, a.beta));
}

FailureOr<SmallVector<Value>> Recurrence::run() {
  kind = onnx::onnxOperatorName(op);
  int64_t gates = kind == "LSTM" ? 4 : kind == "GRU" ? 3 : 1;
  auto intAttr = [&](StringRef n, int64_t def) {
    auto a = op->getAttrOfType<IntegerAttr>(n);
    return a ? a.getInt() : def;
  };
  auto strAttr = [&](StringRef n, StringRef def) {
    auto a = op->getAttrOfType<StringAttr>(n);
    return a ? a.getValue().str() : def.str();
  };
  // LSTM's input_forget couples the gates: f = 1 - i (as ONNX Runtime computes it,
  // the forget gate's own weights unused).
  bool coupled = kind == "LSTM" && intAttr("input_forget", 0);
  if (auto c = op->getAttrOfType<FloatAttr>("clip"))
    clipValue = static_cast<float>(c.getValueAsDouble());
  std::string direction = strAttr("direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  bool batchFirst = intAttr("layout", 0) != 0;

  Value x = in(0), w = in(1), r = in(2), bias = in(3), lens = in(4), h0 = in(5);
  Value c0 = kind == "LSTM" ? in(6) : Value(), peep = kind == "LSTM" ? in(7) : Value();
  f = elementOf(x);
  // The operands' shapes as ONNX defines them from X ([S, B, I], or [B, S, I] with
  // layout 1), hidden_size and direction; anything else is an error naming the op.
  auto staticType = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t : RankedTensorType();
  };
  RankedTensorType xt = staticType(x), rt = staticType(r);
  if (!xt || !rt || xt.getRank() != 3 || rt.getRank() != 3) {
    op->emitError() << kind << " needs X and R of static rank-3 shapes";
    return failure();
  }
  int64_t h = intAttr("hidden_size", rt.getDimSize(2));
  int64_t nb = xt.getDimSize(batchFirst ? 0 : 1), gh = gates * h;
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{nb, dirs, h} : SmallVector<int64_t>{dirs, nb, h};
  std::pair<StringRef, SmallVector<int64_t>> expected[] = {
      {"W", {dirs, gh, xt.getDimSize(2)}}, {"R", {dirs, gh, h}},
      {"B", {dirs, 2 * gh}},              {"sequence_lens", {nb}},
      {"initial_h", stateShape},          {"initial_c", stateShape},
      {"P", {dirs, 3 * h}}};
  Value given[] = {w, r, bias, lens, h0, c0, peep};
  for (auto [operand, shape] : llvm::zip(given, expected)) {
    if (!operand)
      continue;
    RankedTensorType t = staticType(operand);
    if (!t || t.getShape() != ArrayRef<int64_t>(shape.second)) {
      InFlightDiagnostic d = op->emitError() << kind << "'s " << shape.first << " is "
                                             << operand.getType() << ", not [";
      llvm::interleave(shape.second, d, ",");
      d << "] (from X, hidden_size and direction)";
      return failure();
    }
  }
  if (batchFirst) {
    x = ob.transpose(x, {1, 0, 2});
    if (h0)
      h0 = ob.transpose(h0, {1, 0, 2});
    if (c0)
      c0 = ob.transpose(c0, {1, 0, 2});
  }
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t steps = xType.getDimSize(0), batch = xType.getDimSize(1);
  hidden = intAttr("hidden_size", cast<RankedTensorType>(r.getType()).getDimSize(2));

  // Activations per direction, with their alpha and beta consumed in order.
  SmallVector<std::string> defaults = kind == "LSTM"  ? SmallVector<std::string>{"sigmoid", "tanh", "tanh"}
                                      : kind == "GRU" ? SmallVector<std::string>{"sigmoid", "tanh"}
                                                      : SmallVector<std::string>{"tanh"};
  SmallVector<Activation> acts;
  auto names = op->getAttrOfType<ArrayAttr>("activations");
  auto alphas = op->getAttrOfType<ArrayAttr>("activation_alpha");
  auto betas = op->getAttrOfType<ArrayAttr>("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  for (int64_t d = 0; d < dirs; ++d)
    for (size_t k = 0; k < defaults.size(); ++k) {
      size_t index = d * defaults.size() + k;
      Activation a;
      a.name = names && index < names.size()
                   ? llvm::StringRef(cast<StringAttr>(names[index]).getValue()).lower()
                   : defaults[k];
      if (!llvm::is_contained({"sigmoid", "tanh", "relu", "softsign", "softplus",
                               "hardsigmoid", "leakyrelu", "elu", "thresholdedrelu",
                               "scaledtanh", "affine"},
                              a.name)) {
        op->emitError() << "activation '" << a.name << "' of " << kind
                        << " is not supported";
        return failure();
      }
      a.alpha = defaultAlpha(a.name);
      a.beta = defaultBeta(a.name);
      if (takesAlpha(a.name) && alphas && nextAlpha < alphas.size())
        a.alpha = cast<FloatAttr>(alphas[nextAlpha++]).getValueAsDouble();
      if (takesBeta(a.name) && betas && nextBeta < betas.size())
        a.beta = cast<FloatAttr>(betas[nextBeta++]).getValueAsDouble();
      acts.push_back(a);
    }

  // Time step t is valid for a sequence when t < its length: a [steps, batch, 1]
  // mask, scanned with the projections.
  Value valid;
  if (lens) {
    Type li = elementOf(lens);
    SmallVector<APInt> ts;
    for (int64_t t = 0; t < steps; ++t)
      ts.push_back(APInt(li.getIntOrFloatBitWidth(), t, /*isSigned=*/true));
    Value times = ob.constant(DenseElementsAttr::get(RankedTensorType::get({steps, 1}, li), ts));
    Value less = ob.create("Less", {times, ob.reshape(lens, {1, batch})}, ob.b.getI1Type());
    valid = ob.reshape(less, {steps, batch, 1});
  }

  // Direction d's [rows, cols] matrix of a [D, rows, cols] weight, transposed:
  // computed here when the weight is a constant, so that it is laid out once at
  // compile time (a Transpose of a weight-sized tensor would copy it every run);
  // otherwise a Transpose of the pick.
  auto transposedWeight = [&](Value weight, int64_t d, StringRef which) {
    auto t = cast<RankedTensorType>(weight.getType());
    int64_t rows = t.getDimSize(1), cols = t.getDimSize(2);
    auto type = RankedTensorType::get({cols, rows}, t.getElementType());
    std::string name = kind + "_" + which.str() + "T" + std::to_string(d);
    // A weight blob (as the importer keeps them): its bytes moved, any size.
    ElementsAttr attr = constantValueOf(weight);
    ArrayRef<char> bytes = attr ? resourceBytes(attr) : ArrayRef<char>();
    if (!bytes.empty() && t.getNumElements() > 0) {
      size_t width = bytes.size() / t.getNumElements();
      std::vector<char> out(bytes.size() / t.getDimSize(0));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          std::memcpy(&out[(j * rows + i) * width], &bytes[((d * rows + i) * cols + j) * width],
                      width);
      return ob.blobConstant(type, out, name);
    }
    // A small constant in an attribute.
    if (std::optional<std::vector<double>> values = floatValuesOf(weight)) {
      std::vector<double> out(rows * cols);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          out[j * rows + i] = (*values)[(d * rows + i) * cols + j];
      return ob.floats(type, out, name);
    }
    return ob.transpose(ob.pick(weight, 0, d), {1, 0});
  };

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    ArrayRef<Activation> act = ArrayRef(acts).slice(d * defaults.size(), defaults.size());
    Value wT = transposedWeight(w, d, "W"); // [I, G*H]
    Value rT = transposedWeight(r, d, "R"); // [H, G*H]
    Value xw = ob.create("MatMul", {x, wT}, f);          // [S, B, G*H]
    Value rb, rbh;
    if (bias) {
      Value bd = ob.pick(bias, 0, d);
      xw = add(xw, ob.slice(bd, 0, 0, gates * hidden));
      rb = ob.slice(bd, 0, gates * hidden, 2 * gates * hidden);
      if (kind == "GRU")
        rbh = ob.slice(rb, 0, 2 * hidden, 3 * hidden);
    }
    Value h0d = h0 ? ob.pick(h0, 0, d) : zeros({batch, hidden});
    Value c0d = kind == "LSTM" ? (c0 ? ob.pick(c0, 0, d) : zeros({batch, hidden})) : Value();
    Value pi, po, pf;
    if (peep) {
      Value pd = ob.pick(peep, 0, d);
      pi = ob.slice(pd, 0, 0, hidden);
      po = ob.slice(pd, 0, hidden, 2 * hidden);
      pf = ob.slice(pd, 0, 2 * hidden, 3 * hidden);
    }
    // Slices of rT that the reset-gated GRU candidate multiplies by, outside the loop.
    Value rTh = kind == "GRU" ? ob.slice(rT, 1, 2 * hidden, 3 * hidden) : Value();
    bool linearBeforeReset = intAttr("linear_before_reset", 0) != 0;

    // The time loop: a Scan whose body is one step (the tensor phase makes it an
    // scf.for, one kernel), states h (and c), scanning the projections (and the
    // mask) in the direction's order, stacking y in time order.
    SmallVector<Value> states{h0d};
    if (c0d)
      states.push_back(c0d);
    SmallVector<OnnxBuilder::Scanned> inputs{{xw, 0, reverse}};
    if (valid)
      inputs.push_back({valid, 0, reverse});
    auto yType = RankedTensorType::get({steps, batch, hidden}, f);
    auto step = [&](ValueRange carried, ValueRange slices) -> SmallVector<Value> {
      Value h = carried[0], c = c0d ? carried[1] : Value();
      Value xt = slices[0], validT = valid ? slices[1] : Value();
      Value hr = ob.create("MatMul", {h, rT}, f);
      if (rb && !(kind == "GRU" && !linearBeforeReset))
        hr = add(hr, rb);
      Value hNew, cNew;
      if (kind == "RNN") {
        hNew = apply(act[0], clip(add(xt, hr)));
      } else if (kind == "GRU") {
        Value hrZR = hr;
        if (rb && !linearBeforeReset)
          hrZR = add(hr, rb);
        Value z = apply(act[0], clip(add(gate(xt, 0), gate(hrZR, 0))));
        Value rg = apply(act[0], clip(add(gate(xt, 1), gate(hrZR, 1))));
        Value candidate;
        if (linearBeforeReset) {
          candidate = add(gate(xt, 2), mul(rg, gate(hr, 2)));
        } else {
          Value rh = ob.create("MatMul", {mul(rg, h), rTh}, f);
          candidate = add(gate(xt, 2), rbh ? add(rh, rbh) : rh);
        }
        Value hh = apply(act[1], clip(candidate));
        Value keep = ob.binary("Sub", ob.scalar(f, 1), z);
        hNew = add(mul(keep, hh), mul(z, h));
      } else {
        Value pre = add(xt, hr); // gates i, o, f, c
        Value ig = gate(pre, 0), og = gate(pre, 1), fg = gate(pre, 2), cg = gate(pre, 3);
        if (pi) {
          ig = add(ig, mul(pi, c));
          fg = add(fg, mul(pf, c));
        }
        Value iv = apply(act[0], clip(ig));
        Value fv = coupled ? ob.binary("Sub", ob.scalar(f, 1), iv) : apply(act[0], clip(fg));
        cNew = add(mul(fv, c), mul(iv, apply(act[1], clip(cg))));
        if (po)
          og = add(og, mul(po, cNew));
        hNew = mul(apply(act[0], clip(og)), apply(act[2], cNew));
      }
      Value y = hNew;
      if (validT) {
        y = ob.create("Where", {validT, hNew, zeros({batch, hidden})}, f);
        hNew = ob.create("Where", {validT, hNew, h}, f);
        if (cNew)
          cNew = ob.create("Where", {validT, cNew, c}, f);
      }
      SmallVector<Value> yields{hNew};
      if (cNew)
        yields.push_back(cNew);
      yields.push_back(y);
      return yields;
    };
    SmallVector<Value> scanned = ob.scan(states, inputs, {{yType, {Value(), 0, reverse}}}, step);

    Value hFinal = scanned[0];
    Value cFinal = c0d ? scanned[1] : Value();
    ys.push_back(ob.reshape(scanned.back(), {steps, 1, batch, hidden}));
    hs.push_back(ob.reshape(hFinal, {1, batch, hidden}));
    if (cFinal)
      cs.push_back(ob.reshape(cFinal, {1, batch, hidden}));
  }

  SmallVector<Value> results(op->getNumResults());
  auto used = [&](unsigned i) {
    return i < op->getNumResults() && !isa<NoneType>(op->getResult(i).getType());
  };
  if (used(0)) {
    Value y = ob.concat(ys, 1); // [S, D, B, H]
    results[0] = batchFirst ? ob.transpose(y, {2, 0, 1, 3}) : y;
  }
  if (used(1)) {
    Value yh = ob.concat(hs, 0); // [D, B, H]
    results[1] = batchFirst ? ob.transpose(yh, {1, 0, 2}) : yh;
  }
  if (used(2)) {
    Value yc = ob.concat(cs, 0);
    results[2] = batchFirst ? ob.transpose(yc, {1, 0, 2}) : yc;
  }
  return results;
}

} // namespace

FailureOr<SmallVector<Value>> decomposeRecurrent(Operation *op, OnnxBuilder &ob) {
  return Recurrence(op, ob).run();
}

} // namespace kiln
