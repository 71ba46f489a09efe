//===- EvaluateOnnx.cpp - Evaluate onnx ops on constants ------------------===//
//
// This file implements the graph phase's constant evaluator (EvaluateOnnx.h).
// Values are held as int64 (integers, bools) or double (floats) and rounded to the
// element type when written back: +, -, *, / and sqrt computed in double and rounded
// once are exactly what f32 arithmetic gives. Anything the evaluator is unsure of
// (division by zero, a float that does not fit the integer it is cast to, an op or
// attribute it does not know) is left unfolded for the kernels to compute.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/EvaluateOnnx.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A constant on the host: integers and bools as int64, floats as double.
struct HostTensor {
  SmallVector<int64_t> shape;
  Type elem;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isa<FloatType>(elem); }
  int64_t size() const { return product(shape); }
  double getF(int64_t k) const { return isFloat() ? f[k] : static_cast<double>(i[k]); }
  int64_t getI(int64_t k) const { return isFloat() ? static_cast<int64_t>(f[k]) : i[k]; }

  static HostTensor make(ArrayRef<int64_t> shape, Type elem) {
    HostTensor t;
    t.shape.assign(shape.begin(), shape.end());
    t.elem = elem;
    if (t.isFloat())
      t.f.assign(t.size(), 0.0);
    else
      t.i.assign(t.size(), 0);
    return t;
  }
  void copyFrom(int64_t to, const HostTensor &src, int64_t from) {
    if (isFloat())
      f[to] = src.getF(from);
    else
      i[to] = src.getI(from);
  }
};

std::optional<HostTensor> read(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(elements.getShapedType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  DenseElementsAttr dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense) {
    auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
    AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
    bool splat = false;
    if (!blob || type.getElementType().isInteger(1) ||
        !DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
      return std::nullopt;
    dense = DenseElementsAttr::getFromRawBuffer(type, blob->getData());
  }
  HostTensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.elem = type.getElementType();
  if (isa<FloatType>(t.elem)) {
    for (APFloat v : dense.getValues<APFloat>())
      t.f.push_back(v.convertToDouble());
  } else if (auto it = dyn_cast<IntegerType>(t.elem)) {
    for (APInt v : dense.getValues<APInt>())
      t.i.push_back(it.isUnsigned() || it.getWidth() == 1
                        ? static_cast<int64_t>(v.getZExtValue())
                        : v.getSExtValue());
  } else {
    return std::nullopt;
  }
  return t;
}

DenseElementsAttr write(const HostTensor &t) {
  auto type = RankedTensorType::get(t.shape, t.elem);
  if (auto ft = dyn_cast<FloatType>(t.elem)) {
    SmallVector<APFloat> values;
    for (double d : t.f) {
      APFloat v(d);
      bool loses = false;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &loses);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = t.elem.getIntOrFloatBitWidth();
  if (width == 1) {
    SmallVector<bool> values;
    for (int64_t v : t.i)
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, values);
  }
  SmallVector<APInt> values;
  for (int64_t v : t.i)
    values.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true));
  return DenseElementsAttr::get(type, values);
}

/// Wraps `v` to an integer type's range, as a C conversion to it does.
int64_t wrapTo(int64_t v, IntegerType t) {
  unsigned w = t.getWidth();
  if (w == 1)
    return v != 0;
  if (w >= 64)
    return v;
  uint64_t mask = (uint64_t{1} << w) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (!t.isUnsigned() && (u >> (w - 1)))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Calls fn(linear, index) for every index of `shape` in row-major order.
void forEachIndex(ArrayRef<int64_t> shape,
                  llvm::function_ref<void(int64_t, ArrayRef<int64_t>)> fn) {
  int64_t n = product(shape);
  SmallVector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(k, idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<SmallVector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (const auto &s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t &o = out[rank - s.size() + k];
      if (s[k] == o || s[k] == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = s[k];
    }
  return out;
}

/// The linear index into `t` of output index `idx` under broadcasting.
int64_t broadcastIndex(const HostTensor &t, ArrayRef<int64_t> idx) {
  SmallVector<int64_t> strides = stridesOf(t.shape);
  size_t offset = idx.size() - t.shape.size();
  int64_t k = 0;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1)
      k += idx[offset + d] * strides[d];
  return k;
}

bool normalize(int64_t &axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank;
}

struct Evaluator {
  Operation *op;
  std::string name;
  SmallVector<std::optional<HostTensor>> ins;

  int64_t intAttr(StringRef attr, int64_t def) const {
    if (auto a = op->getAttrOfType<IntegerAttr>(attr))
      return a.getInt();
    return def;
  }
  std::optional<SmallVector<int64_t>> intsAttr(StringRef attr) const {
    auto a = op->getAttrOfType<ArrayAttr>(attr);
    if (!a)
      return std::nullopt;
    SmallVector<int64_t> v;
    for (Attribute e : a)
      v.push_back(llvm::cast<IntegerAttr>(e).getInt());
    return v;
  }
  /// A list of integers given by attribute `attr` (older versions) or input `index`.
  std::optional<SmallVector<int64_t>> intsFrom(StringRef attr, unsigned index) const {
    if (auto v = intsAttr(attr))
      return v;
    if (index < ins.size() && ins[index])
      return SmallVector<int64_t>(ins[index]->i.begin(), ins[index]->i.end());
    return std::nullopt;
  }
  bool present(unsigned index) const {
    return index < op->getNumOperands() &&
           !isa<NoneType>(op->getOperand(index).getType());
  }
  Type resultElement() const {
    auto t = dyn_cast<TensorType>(op->getResult(0).getType());
    return t ? t.getElementType() : Type();
  }

  std::optional<HostTensor> run();
  std::optional<HostTensor> shapeOf();
  std::optional<HostTensor> cast(const HostTensor &x, Type to);
  std::optional<HostTensor> reshape(const HostTensor &x, ArrayRef<int64_t> shape);
  std::optional<HostTensor> concat();
  std::optional<HostTensor> gather();
  std::optional<HostTensor> slice();
  std::optional<HostTensor> transpose();
  std::optional<HostTensor> range();
  std::optional<HostTensor> broadcastTo(const HostTensor &x, ArrayRef<int64_t> shape);
  std::optional<HostTensor> tile();
  std::optional<HostTensor> elementwise();
  std::optional<HostTensor> unary();
  std::optional<HostTensor> reduce();
};

std::optional<HostTensor> Evaluator::shapeOf() {
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Type i64 = IntegerType::get(op->getContext(), 64);
  if (name == "Size") {
    HostTensor t = HostTensor::make({}, i64);
    t.i[0] = type.getNumElements();
    return t;
  }
  int64_t rank = type.getRank();
  auto clamp = [rank](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(intAttr("start", 0)), end = clamp(intAttr("end", rank));
  int64_t n = std::max<int64_t>(end - start, 0);
  HostTensor t = HostTensor::make({n}, i64);
  for (int64_t k = 0; k < n; ++k)
    t.i[k] = type.getDimSize(start + k);
  return t;
}

std::optional<HostTensor> Evaluator::cast(const HostTensor &x, Type to) {
  HostTensor t = HostTensor::make(x.shape, to);
  for (int64_t k = 0; k < x.size(); ++k) {
    if (t.isFloat()) {
      t.f[k] = x.getF(k);
      continue;
    }
    auto it = llvm::cast<IntegerType>(to);
    if (!x.isFloat()) {
      t.i[k] = wrapTo(x.i[k], it);
      continue;
    }
    double v = x.f[k];
    if (it.getWidth() == 1) {
      t.i[k] = v != 0;
      continue;
    }
    // Out-of-range float -> int conversions are undefined: leave them to run time.
    if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
      return std::nullopt;
    t.i[k] = wrapTo(static_cast<int64_t>(v), it);
  }
  return t;
}

std::optional<HostTensor> Evaluator::reshape(const HostTensor &x,
                                             ArrayRef<int64_t> shape) {
  bool allowZero = intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> out(shape.begin(), shape.end());
  int64_t known = 1, inferred = -1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 0 && !allowZero) {
      if (d >= x.shape.size())
        return std::nullopt;
      out[d] = x.shape[d];
    }
    if (out[d] == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = static_cast<int64_t>(d);
      continue;
    }
    if (out[d] < 0)
      return std::nullopt;
    known *= out[d];
  }
  if (inferred >= 0) {
    if (known == 0 || x.size() % known)
      return std::nullopt;
    out[inferred] = x.size() / known;
  }
  if (product(out) != x.size())
    return std::nullopt;
  HostTensor t = x;
  t.shape = out;
  return t;
}

std::optional<HostTensor> Evaluator::concat() {
  const HostTensor &first = *ins[0];
  int64_t axis = intAttr("axis", 0), rank = static_cast<int64_t>(first.shape.size());
  if (!normalize(axis, rank))
    return std::nullopt;
  SmallVector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (const auto &in : ins) {
    if (static_cast<int64_t>(in->shape.size()) != rank)
      return std::nullopt;
    shape[axis] += in->shape[axis];
  }
  if (product(shape) > kMaxFoldElements)
    return std::nullopt;
  HostTensor t = HostTensor::make(shape, first.elem);
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t offset = 0;
  for (const auto &in : ins) {
    forEachIndex(in->shape, [&](int64_t k, ArrayRef<int64_t> idx) {
      int64_t o = 0;
      for (int64_t d = 0; d < rank; ++d)
        o += (idx[d] + (d == axis ? offset : 0)) * strides[d];
      t.copyFrom(o, *in, k);
    });
    offset += in->shape[axis];
  }
  return t;
}

std::optional<HostTensor> Evaluator::gather() {
  const HostTensor &data = *ins[0], &indices = *ins[1];
  int64_t rank = static_cast<int64_t>(data.shape.size()), axis = intAttr("axis", 0);
  if (!normalize(axis, rank))
    return std::nullopt;
  SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.append(indices.shape.begin(), indices.shape.end());
  shape.append(data.shape.begin() + axis + 1, data.shape.end());
  if (product(shape) > kMaxFoldElements)
    return std::nullopt;
  HostTensor t = HostTensor::make(shape, data.elem);
  SmallVector<int64_t> dataStrides = stridesOf(data.shape);
  int64_t q = static_cast<int64_t>(indices.shape.size());
  bool ok = true;
  forEachIndex(shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    int64_t flat = 0;
    for (int64_t d = 0; d < q; ++d)
      flat = flat * indices.shape[d] + idx[axis + d];
    int64_t j = indices.i[flat];
    if (j < 0)
      j += data.shape[axis];
    if (j < 0 || j >= data.shape[axis]) {
      ok = false;
      return;
    }
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t v = d < axis ? idx[d] : d == axis ? j : idx[d - 1 + q];
      from += v * dataStrides[d];
    }
    t.copyFrom(k, data, from);
  });
  if (!ok)
    return std::nullopt;
  return t;
}

std::optional<HostTensor> Evaluator::slice() {
  const HostTensor &x = *ins[0];
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::optional<SmallVector<int64_t>> starts = intsFrom("starts", 1),
                                      ends = intsFrom("ends", 2);
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (auto a = intsFrom("axes", 3))
    axes = *a;
  else
    for (size_t k = 0; k < starts->size(); ++k)
      axes.push_back(static_cast<int64_t>(k));
  if (present(4)) {
    if (!ins[4] || ins[4]->i.size() != starts->size())
      return std::nullopt;
    steps.assign(ins[4]->i.begin(), ins[4]->i.end());
  }
  if (axes.size() != starts->size())
    return std::nullopt;
  SmallVector<int64_t> begin(rank, 0), step(rank, 1), shape = x.shape;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k];
    if (!normalize(axis, rank) || steps[k] == 0)
      return std::nullopt;
    int64_t dim = x.shape[axis], s = (*starts)[k], e = (*ends)[k], st = steps[k];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[axis] = std::max<int64_t>(0, (e - s + st - 1) / st);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[axis] = std::max<int64_t>(0, (s - e - st - 1) / -st);
    }
    begin[axis] = s;
    step[axis] = st;
  }
  HostTensor t = HostTensor::make(shape, x.elem);
  SmallVector<int64_t> strides = stridesOf(x.shape);
  forEachIndex(shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d)
      from += (begin[d] + idx[d] * step[d]) * strides[d];
    t.copyFrom(k, x, from);
  });
  return t;
}

std::optional<HostTensor> Evaluator::transpose() {
  const HostTensor &x = *ins[0];
  int64_t rank = static_cast<int64_t>(x.shape.size());
  SmallVector<int64_t> perm;
  if (auto p = intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank)
    return std::nullopt;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank)
      return std::nullopt;
    shape.push_back(x.shape[p]);
  }
  HostTensor t = HostTensor::make(shape, x.elem);
  SmallVector<int64_t> strides = stridesOf(x.shape);
  forEachIndex(shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d)
      from += idx[d] * strides[perm[d]];
    t.copyFrom(k, x, from);
  });
  return t;
}

std::optional<HostTensor> Evaluator::range() {
  const HostTensor &start = *ins[0], &limit = *ins[1], &delta = *ins[2];
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
    return std::nullopt;
  double s = start.getF(0), l = limit.getF(0), d = delta.getF(0);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    return std::nullopt;
  double count = std::ceil((l - s) / d);
  if (count > kMaxFoldElements)
    return std::nullopt;
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  HostTensor t = HostTensor::make({n}, start.elem);
  for (int64_t k = 0; k < n; ++k) {
    if (t.isFloat())
      t.f[k] = s + static_cast<double>(k) * d;
    else
      t.i[k] = start.i[0] + k * delta.i[0];
  }
  return t;
}

std::optional<HostTensor> Evaluator::broadcastTo(const HostTensor &x,
                                                 ArrayRef<int64_t> target) {
  SmallVector<int64_t> shape(target.begin(), target.end());
  std::optional<SmallVector<int64_t>> out = broadcastShapes({x.shape, shape});
  if (!out || product(*out) > kMaxFoldElements)
    return std::nullopt;
  HostTensor t = HostTensor::make(*out, x.elem);
  forEachIndex(*out, [&](int64_t k, ArrayRef<int64_t> idx) {
    t.copyFrom(k, x, broadcastIndex(x, idx));
  });
  return t;
}

std::optional<HostTensor> Evaluator::tile() {
  const HostTensor &x = *ins[0], &repeats = *ins[1];
  if (repeats.i.size() != x.shape.size())
    return std::nullopt;
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (repeats.i[d] < 0)
      return std::nullopt;
    shape.push_back(x.shape[d] * repeats.i[d]);
  }
  if (product(shape) > kMaxFoldElements)
    return std::nullopt;
  HostTensor t = HostTensor::make(shape, x.elem);
  SmallVector<int64_t> strides = stridesOf(x.shape);
  forEachIndex(shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    int64_t from = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      from += (idx[d] % x.shape[d]) * strides[d];
    t.copyFrom(k, x, from);
  });
  return t;
}

std::optional<HostTensor> Evaluator::elementwise() {
  using F = std::function<std::optional<double>(double, double)>;
  using I = std::function<std::optional<int64_t>(int64_t, int64_t)>;
  bool compare = false, logical = false;
  F f;
  I i;
  bool fmod = intAttr("fmod", 0) != 0;
  if (name == "Mean" && !ins[0]->isFloat())
    return std::nullopt;
  if (name == "Add" || name == "Sum" || name == "Mean") {
    f = [](double a, double b) { return a + b; };
    i = [](int64_t a, int64_t b) { return a + b; };
  } else if (name == "Sub") {
    f = [](double a, double b) { return a - b; };
    i = [](int64_t a, int64_t b) { return a - b; };
  } else if (name == "Mul") {
    f = [](double a, double b) { return a * b; };
    i = [](int64_t a, int64_t b) { return a * b; };
  } else if (name == "Div") {
    f = [](double a, double b) { return a / b; };
    i = [](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (b == 0)
        return std::nullopt;
      return a / b;
    };
  } else if (name == "Mod") {
    f = [](double a, double b) { return std::fmod(a, b); };
    i = [fmod](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (b == 0)
        return std::nullopt;
      int64_t r = a % b;
      if (!fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      return r;
    };
  } else if (name == "Pow") {
    f = [](double a, double b) { return std::pow(a, b); };
  } else if (name == "Max") {
    f = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); };
    i = [](int64_t a, int64_t b) { return std::max(a, b); };
  } else if (name == "Min") {
    f = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); };
    i = [](int64_t a, int64_t b) { return std::min(a, b); };
  } else if (name == "Equal" || name == "Less" || name == "Greater" ||
             name == "LessOrEqual" || name == "GreaterOrEqual") {
    compare = true;
    std::string n = name;
    f = [n](double a, double b) -> std::optional<double> {
      if (n == "Equal") return a == b;
      if (n == "Less") return a < b;
      if (n == "Greater") return a > b;
      if (n == "LessOrEqual") return a <= b;
      return a >= b;
    };
    i = [n](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (n == "Equal") return a == b;
      if (n == "Less") return a < b;
      if (n == "Greater") return a > b;
      if (n == "LessOrEqual") return a <= b;
      return a >= b;
    };
  } else if (name == "And" || name == "Or" || name == "Xor") {
    logical = true;
    std::string n = name;
    i = [n](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (n == "And") return a && b;
      if (n == "Or") return a || b;
      return (a != 0) != (b != 0);
    };
  } else {
    return std::nullopt;
  }
  SmallVector<SmallVector<int64_t>> shapes;
  for (const auto &in : ins)
    shapes.push_back(in->shape);
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape || product(*shape) > kMaxFoldElements)
    return std::nullopt;
  Type elem = ins[0]->elem;
  bool floating = ins[0]->isFloat();
  Type resultElem = compare || logical ? IntegerType::get(op->getContext(), 1) : elem;
  if ((floating && !f) || (!floating && !i))
    return std::nullopt;
  HostTensor t = HostTensor::make(*shape, resultElem);
  bool ok = true;
  auto intType = dyn_cast<IntegerType>(elem);
  forEachIndex(*shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    if (!ok)
      return;
    if (floating) {
      double acc = ins[0]->f[broadcastIndex(*ins[0], idx)];
      for (size_t n = 1; n < ins.size(); ++n) {
        std::optional<double> r = f(acc, ins[n]->f[broadcastIndex(*ins[n], idx)]);
        if (!r) {
          ok = false;
          return;
        }
        acc = *r;
      }
      if (name == "Mean")
        acc /= static_cast<double>(ins.size());
      if (compare)
        t.i[k] = acc != 0;
      else
        t.f[k] = acc;
      return;
    }
    int64_t acc = ins[0]->i[broadcastIndex(*ins[0], idx)];
    for (size_t n = 1; n < ins.size(); ++n) {
      std::optional<int64_t> r = i(acc, ins[n]->i[broadcastIndex(*ins[n], idx)]);
      if (!r) {
        ok = false;
        return;
      }
      acc = *r;
    }
    t.i[k] = compare || logical ? acc : wrapTo(acc, intType);
  });
  if (!ok)
    return std::nullopt;
  return t;
}

std::optional<HostTensor> Evaluator::unary() {
  const HostTensor &x = *ins[0];
  HostTensor t = x;
  if (!x.isFloat()) {
    auto it = llvm::cast<IntegerType>(x.elem);
    for (int64_t &v : t.i) {
      if (name == "Neg") v = wrapTo(-v, it);
      else if (name == "Abs") v = v < 0 ? wrapTo(-v, it) : v;
      else if (name == "Sign") v = (v > 0) - (v < 0);
      else if (name == "Relu") v = std::max<int64_t>(v, 0);
      else if (name == "Not") v = !v;
      else return std::nullopt;
    }
    return t;
  }
  std::function<double(double)> fn;
  if (name == "Neg") fn = [](double v) { return -v; };
  else if (name == "Abs") fn = [](double v) { return std::fabs(v); };
  else if (name == "Sign") fn = [](double v) { return std::isnan(v) ? v : double((v > 0) - (v < 0)); };
  else if (name == "Relu") fn = [](double v) { return v > 0 ? v : 0.0; };
  else if (name == "Sqrt") fn = [](double v) { return std::sqrt(v); };
  else if (name == "Reciprocal") fn = [](double v) { return 1.0 / v; };
  else if (name == "Floor") fn = [](double v) { return std::floor(v); };
  else if (name == "Ceil") fn = [](double v) { return std::ceil(v); };
  else if (name == "Round") fn = [](double v) { return std::nearbyint(v); };
  else return std::nullopt;
  for (double &v : t.f)
    v = fn(v);
  return t;
}

std::optional<HostTensor> Evaluator::reduce() {
  const HostTensor &x = *ins[0];
  int64_t rank = static_cast<int64_t>(x.shape.size());
  SmallVector<int64_t> axes;
  if (auto a = intsFrom("axes", 1))
    axes = *a;
  else if (present(1))
    return std::nullopt;
  if (axes.empty()) {
    if (intAttr("noop_with_empty_axes", 0))
      return x;
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    if (!normalize(a, rank))
      return std::nullopt;
    reduced[a] = true;
  }
  bool keep = intAttr("keepdims", 1) != 0;
  SmallVector<int64_t> kept, shape;
  for (int64_t d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || keep)
      shape.push_back(kept.back());
  }
  std::string kind = name.substr(6); // Reduce<kind>
  bool floating = x.isFloat();
  int64_t outSize = product(kept);
  std::vector<double> acc(outSize, kind == "Prod" ? 1.0 : 0.0);
  std::vector<bool> seen(outSize, false);
  SmallVector<int64_t> outStrides = stridesOf(kept);
  int64_t count = outSize ? x.size() / outSize : 0;
  forEachIndex(x.shape, [&](int64_t k, ArrayRef<int64_t> idx) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      o += (reduced[d] ? 0 : idx[d]) * outStrides[d];
    double v = x.getF(k);
    if (kind == "Sum" || kind == "Mean") acc[o] += v;
    else if (kind == "Prod") acc[o] *= v;
    else if (kind == "Max") acc[o] = seen[o] ? std::max(acc[o], v) : v;
    else if (kind == "Min") acc[o] = seen[o] ? std::min(acc[o], v) : v;
    seen[o] = true;
  });
  if (kind == "Mean")
    for (double &v : acc)
      v /= static_cast<double>(count);
  if ((kind == "Max" || kind == "Min") && count == 0)
    return std::nullopt;
  HostTensor t = HostTensor::make(shape, x.elem);
  for (int64_t k = 0; k < outSize; ++k) {
    if (floating)
      t.f[k] = acc[k];
    else
      t.i[k] = static_cast<int64_t>(acc[k]);
  }
  return t;
}

std::optional<HostTensor> Evaluator::run() {
  if (name == "Shape" || name == "Size")
    return shapeOf();
  // Everything else needs the values of all present operands.
  for (unsigned k = 0; k < op->getNumOperands(); ++k)
    if (present(k) && !ins[k])
      return std::nullopt;
  if (ins.empty() || !ins[0])
    return std::nullopt;
  const HostTensor &x = *ins[0];
  if (name == "Identity")
    return x;
  if (name == "Cast")
    return resultElement() ? cast(x, resultElement()) : std::nullopt;
  if (name == "CastLike")
    return cast(x, ins[1]->elem);
  if (name == "Reshape")
    return reshape(x, ins[1]->i);
  if (name == "Flatten") {
    int64_t rank = static_cast<int64_t>(x.shape.size()), axis = intAttr("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return std::nullopt;
    ArrayRef<int64_t> s = x.shape;
    return reshape(x, {product(s.take_front(axis)), product(s.drop_front(axis))});
  }
  if (name == "Unsqueeze") {
    std::optional<SmallVector<int64_t>> axes = intsFrom("axes", 1);
    if (!axes)
      return std::nullopt;
    int64_t rank = static_cast<int64_t>(x.shape.size() + axes->size());
    SmallVector<bool> ones(rank, false);
    for (int64_t a : *axes) {
      if (!normalize(a, rank) || ones[a])
        return std::nullopt;
      ones[a] = true;
    }
    SmallVector<int64_t> shape;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d)
      shape.push_back(ones[d] ? 1 : x.shape[next++]);
    return reshape(x, shape);
  }
  if (name == "Squeeze") {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    SmallVector<bool> drop(rank, false);
    if (auto axes = intsFrom("axes", 1)) {
      for (int64_t a : *axes) {
        if (!normalize(a, rank) || x.shape[a] != 1)
          return std::nullopt;
        drop[a] = true;
      }
    } else {
      for (int64_t d = 0; d < rank; ++d)
        drop[d] = x.shape[d] == 1;
    }
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      if (!drop[d])
        shape.push_back(x.shape[d]);
    return reshape(x, shape);
  }
  if (name == "Concat")
    return concat();
  if (name == "Gather")
    return gather();
  if (name == "Slice")
    return slice();
  if (name == "Transpose")
    return transpose();
  if (name == "Range")
    return range();
  if (name == "ConstantOfShape") {
    HostTensor fill = HostTensor::make({}, Float32Type::get(op->getContext()));
    if (auto value = op->getAttrOfType<ElementsAttr>("value")) {
      std::optional<HostTensor> v = read(value);
      if (!v || v->size() != 1)
        return std::nullopt;
      fill = *v;
      fill.shape.clear();
    }
    for (int64_t d : x.i)
      if (d < 0)
        return std::nullopt;
    return broadcastTo(fill, x.i);
  }
  if (name == "Expand")
    return broadcastTo(x, ins[1]->i);
  if (name == "Tile")
    return tile();
  if (name == "Where") {
    SmallVector<SmallVector<int64_t>> shapes = {ins[0]->shape, ins[1]->shape,
                                                ins[2]->shape};
    std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
    if (!shape || product(*shape) > kMaxFoldElements)
      return std::nullopt;
    HostTensor t = HostTensor::make(*shape, ins[1]->elem);
    forEachIndex(*shape, [&](int64_t k, ArrayRef<int64_t> idx) {
      const HostTensor &src = ins[0]->i[broadcastIndex(*ins[0], idx)] ? *ins[1] : *ins[2];
      t.copyFrom(k, src, broadcastIndex(src, idx));
    });
    return t;
  }
  if (StringRef(name).starts_with("Reduce"))
    return reduce();
  if (llvm::is_contained({"Neg", "Abs", "Sign", "Relu", "Not", "Sqrt", "Reciprocal",
                          "Floor", "Ceil", "Round"},
                         name))
    return unary();
  return elementwise();
}

} // namespace

DenseElementsAttr evaluateOnnxOp(Operation *op, ArrayRef<Attribute> operandValues) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return {};
  Evaluator e{op, kiln::onnx::onnxOperatorName(op), {}};
  // Beyond Shape and Size every present operand must be a constant: read them
  // only then (this runs for every op of the model).
  if (e.name != "Shape" && e.name != "Size")
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      if (!isa<NoneType>(op->getOperand(k).getType()) &&
          (k >= operandValues.size() || !operandValues[k]))
        return {};
  for (unsigned k = 0; k < op->getNumOperands(); ++k)
    e.ins.push_back(k < operandValues.size() ? read(operandValues[k]) : std::nullopt);
  std::optional<HostTensor> result = e.run();
  if (!result || result->size() > kMaxFoldElements)
    return {};
  return write(*result);
}

} // namespace kiln
