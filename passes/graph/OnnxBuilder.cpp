//===- OnnxBuilder.cpp - Build onnx ops typed by their shape functions ----===//
#include "passes/graph/OnnxBuilder.h"
#include "kiln/runtime/Half.h"
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/EvaluateOnnx.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace kiln {
namespace {

/// The ONNX TensorProto data type of `t` (Cast's `to`; the inverse of the
/// mapping CastOp::verify checks); 0 for a type ONNX cannot name.
int64_t onnxTypeCode(Type t) {
  if (t.isF32()) return 1;
  if (t.isF64()) return 11;
  if (t.isF16()) return 10;
  if (t.isBF16()) return 16;
  if (t.isInteger(1)) return 9;
  bool u = t.isUnsignedInteger();
  if (t.isInteger(8)) return u ? 2 : 3;
  if (t.isInteger(16)) return u ? 4 : 5;
  if (t.isInteger(32)) return u ? 12 : 6;
  if (t.isInteger(64)) return u ? 13 : 7;
  return 0;
}

} // namespace

Type elementOf(Value v) { return cast<TensorType>(v.getType()).getElementType(); }
int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }
bool absent(Value v) { return !v || isa<NoneType>(v.getType()); }

OnnxBuilder::OnnxBuilder(Operation *at) : b(at), loc(at->getLoc()) {}

Value OnnxBuilder::create(StringRef name, ValueRange operands, Type elem,
                          ArrayRef<NamedAttribute> attrs) {
  return createResults(name, operands, {elem}, attrs)[0];
}

SmallVector<Value> OnnxBuilder::createResults(StringRef name, ValueRange operands,
                                              ArrayRef<Type> elems,
                                              ArrayRef<NamedAttribute> attrs) {
  OperationState state(loc, ("onnx." + name).str());
  state.addOperands(operands);
  for (Type elem : elems)
    state.addTypes(UnrankedTensorType::get(elem));
  state.addAttributes(attrs);
  Operation *op = b.create(state);
  SmallVector<Attribute> values;
  for (Value v : operands)
    values.push_back(kiln::constantValueOf(v));
  SmallVector<Type> types;
  std::string why;
  if (succeeded(cast<kiln::onnx::InferShapesInterface>(op).inferResultTypes(
          values, types, why)))
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
  // An op of constants (a bias's pick, a constant mask) is folded where the graph
  // phase evaluates it: nothing left to run.
  if (foldConstants && op->getNumResults() == 1 && !operands.empty() &&
      llvm::all_of(values, [](Attribute a) { return a != nullptr; }))
    if (DenseElementsAttr folded = kiln::evaluateOnnxOp(op, values);
        folded && folded.getType() == op->getResult(0).getType()) {
      Value c = constant(folded);
      op->getResult(0).replaceAllUsesWith(c);
      op->erase();
      return {c};
    }
  return SmallVector<Value>(op->getResults());
}

SmallVector<Value>
OnnxBuilder::scan(ValueRange states, ArrayRef<Scanned> inputs,
                  ArrayRef<std::pair<RankedTensorType, Scanned>> outputs,
                  function_ref<SmallVector<Value>(ValueRange, ValueRange)> step) {
  auto ints = [&](auto range, auto get) {
    SmallVector<int64_t> v;
    for (const auto &e : range)
      v.push_back(get(e));
    return b.getI64ArrayAttr(v);
  };
  OperationState state(loc, "onnx.Scan");
  state.addOperands(states);
  SmallVector<Type> resultTypes(states.getTypes());
  for (const Scanned &in : inputs)
    state.addOperands(in.value);
  for (const auto &[type, out] : outputs)
    resultTypes.push_back(type);
  state.addTypes(resultTypes);
  state.addAttribute("num_scan_inputs", b.getI64IntegerAttr(inputs.size()));
  state.addAttribute("scan_input_axes", ints(inputs, [](const Scanned &s) { return s.axis; }));
  state.addAttribute("scan_input_directions",
                     ints(inputs, [](const Scanned &s) { return int64_t(s.reverse); }));
  state.addAttribute("scan_output_axes",
                     ints(outputs, [](const auto &o) { return o.second.axis; }));
  state.addAttribute("scan_output_directions",
                     ints(outputs, [](const auto &o) { return int64_t(o.second.reverse); }));
  state.addRegion();
  Operation *op = b.create(state);
  Block *body = new Block();
  op->getRegion(0).push_back(body);
  SmallVector<Value> stateArgs, slices;
  for (Value s : states)
    stateArgs.push_back(body->addArgument(s.getType(), loc));
  for (const Scanned &in : inputs) {
    auto t = cast<RankedTensorType>(in.value.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape.erase(shape.begin() + in.axis);
    slices.push_back(body->addArgument(RankedTensorType::get(shape, t.getElementType()), loc));
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  SmallVector<Value> yields = step(stateArgs, slices);
  b.create<onnx::YieldOp>(loc, yields);
  return SmallVector<Value>(op->getResults());
}

Value OnnxBuilder::none() { return b.create<kiln::onnx::NoValueOp>(loc, b.getNoneType()); }
Value OnnxBuilder::constant(DenseElementsAttr value) {
  auto c = b.create<kiln::onnx::ConstantOp>(loc, TypeRange{value.getType()},
                                            ValueRange{});
  c.setValueAttr(value);
  return c.getResult();
}

Value OnnxBuilder::floats(RankedTensorType type, ArrayRef<double> values, StringRef name) {
  auto elem = cast<FloatType>(type.getElementType());
  auto convert = [&](double d) {
    APFloat v(d);
    bool loses = false;
    v.convert(elem.getFloatSemantics(), APFloat::rmNearestTiesToEven, &loses);
    return v;
  };
  // One value throughout (a folded zero bias, say): a splat, which later phases read
  // as the scalar it is.
  bool splat = llvm::all_of(values, [&](double d) {
    return std::memcmp(&d, &values.front(), sizeof d) == 0;
  });
  if (splat && !values.empty())
    return constant(DenseElementsAttr::get(type, convert(values.front())));
  if (values.size() <= 64) {
    SmallVector<APFloat> converted = llvm::map_to_vector(values, convert);
    return constant(DenseElementsAttr::get(type, converted));
  }
  // Weights-sized: bytes in a blob, as the importer keeps them (no attribute uniquing
  // of megabytes; the weights file writer reads blobs). Little-endian host.
  unsigned bytes = elem.getWidth() / 8;
  std::vector<char> data(values.size() * bytes);
  for (size_t i = 0; i < values.size(); ++i) {
    char *at = data.data() + i * bytes;
    if (elem.isF32()) {
      float f = static_cast<float>(values[i]);
      std::memcpy(at, &f, sizeof f);
    } else if (elem.isF64()) {
      std::memcpy(at, &values[i], sizeof(double));
    } else if (float f = static_cast<float>(values[i]); elem.isF16() && f == values[i]) {
      uint16_t bits;
      kiln::rt::narrowToHalves(&f, &bits, 1);
      std::memcpy(at, &bits, sizeof bits);
    } else {
      uint64_t bits = convert(values[i]).bitcastToAPInt().getZExtValue();
      std::memcpy(at, &bits, bytes);
    }
  }
  return blobConstant(type, data, name);
}

Value OnnxBuilder::halvesOf(RankedTensorType type, ArrayRef<char> f32Data, StringRef name) {
  size_t n = f32Data.size() / sizeof(float);
  std::vector<float> floats(n);
  std::memcpy(floats.data(), f32Data.data(), n * sizeof(float));
  if (llvm::any_of(floats, [](float f) { return std::isfinite(f) && std::fabs(f) > kHalfMax; }))
    return nullptr;
  std::vector<char> data(n * sizeof(uint16_t));
  kiln::rt::narrowToHalves(floats.data(), reinterpret_cast<uint16_t *>(data.data()), n);
  if (n > 0 && llvm::all_of(llvm::seq<size_t>(1, n), [&](size_t i) {
        return std::memcmp(data.data() + i * 2, data.data(), 2) == 0;
      })) {
    uint16_t bits;
    std::memcpy(&bits, data.data(), 2);
    return constant(DenseElementsAttr::get(
        type, APFloat(APFloat::IEEEhalf(), APInt(16, bits))));
  }
  return blobConstant(type, data, name);
}

Value OnnxBuilder::blobConstant(RankedTensorType type, ArrayRef<char> data, StringRef name) {
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignof(std::max_align_t));
  auto attr = DenseResourceElementsAttr::get(type, onnx::resourceKey(name), std::move(blob));
  auto c = b.create<kiln::onnx::ConstantOp>(loc, TypeRange{type}, ValueRange{});
  c.setValueAttr(attr);
  return c.getResult();
}

Value OnnxBuilder::scalar(Type elem, double v) {
  auto type = RankedTensorType::get({}, elem);
  if (isa<FloatType>(elem))
    return constant(DenseElementsAttr::get(type, FloatAttr::get(elem, v).getValue()));
  return constant(DenseElementsAttr::get(
      type, APInt(elem.getIntOrFloatBitWidth(), static_cast<int64_t>(v), true)));
}

Value OnnxBuilder::castTo(Value v, Type to) {
  if (elementOf(v) == to)
    return v;
  return create("Cast", v, to, {b.getNamedAttr("to", b.getI64IntegerAttr(onnxTypeCode(to)))});
}

Value OnnxBuilder::binary(StringRef name, Value x, Value y) {
  return create(name, {x, y}, elementOf(x));
}

Value OnnxBuilder::alongAxis(Value p, int64_t axis, int64_t rank) {
  auto type = cast<RankedTensorType>(p.getType());
  if (type.getRank() != 1 || type.getDimSize(0) == 1 || axis == rank - 1)
    return p;
  SmallVector<int64_t> shape(rank - axis, 1);
  shape[0] = type.getDimSize(0);
  return reshape(p, shape);
}

Value OnnxBuilder::minusZeroPoint(Value v, Value zeroPoint, int64_t axis, int64_t rank) {
  Value x = castTo(v, b.getI32Type());
  if (absent(zeroPoint))
    return x;
  return binary("Sub", x, castTo(alongAxis(zeroPoint, axis, rank), b.getI32Type()));
}

Value OnnxBuilder::quantize(Value x, Value scale, Value zeroPoint, int64_t axis, Type out) {
  int64_t rank = rankOf(x);
  Type f = elementOf(scale);
  Value q = create("Round", binary("Div", x, alongAxis(scale, axis, rank)), f);
  if (!absent(zeroPoint))
    q = binary("Add", q, castTo(alongAxis(zeroPoint, axis, rank), f));
  double lo = out.isUnsignedInteger() ? 0 : -std::ldexp(1.0, out.getIntOrFloatBitWidth() - 1);
  double hi = out.isUnsignedInteger() ? std::ldexp(1.0, out.getIntOrFloatBitWidth()) - 1
                                      : std::ldexp(1.0, out.getIntOrFloatBitWidth() - 1) - 1;
  q = create("Min", {create("Max", {q, scalar(f, lo)}, f), scalar(f, hi)}, f);
  return castTo(q, out);
}

Value OnnxBuilder::integerConv(Operation *conv, Value x, Value xZero, Value w,
                               Value wZero, Value bias) {
  int64_t rank = rankOf(x);
  Type f64 = b.getF64Type();
  Value xf = castTo(minusZeroPoint(x, xZero, 1, rank), f64);
  Value wf = castTo(minusZeroPoint(w, wZero, 0, rank), f64);
  Value bf = absent(bias) ? none() : castTo(bias, f64);
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if (Attribute a = conv->getAttr(name))
      attrs.push_back(b.getNamedAttr(name, a));
  return create("Conv", {xf, wf, bf}, f64, attrs);
}

Value OnnxBuilder::ints(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

Value OnnxBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  return create("Reshape", {v, ints(shape)}, elementOf(v),
                {b.getNamedAttr("allowzero", b.getI64IntegerAttr(0))});
}

Value OnnxBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  return create("Transpose", v, elementOf(v),
                {b.getNamedAttr("perm", b.getI64ArrayAttr(perm))});
}

Value OnnxBuilder::slice(Value v, int64_t axis, int64_t start, int64_t end) {
  return create("Slice", {v, ints({start}), ints({end}), ints({axis}), none()},
                elementOf(v));
}

Value OnnxBuilder::pick(Value v, int64_t axis, int64_t index) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  return create("Gather", {v, constant(DenseElementsAttr::get(type, index))}, elementOf(v),
                {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

Value OnnxBuilder::concat(ValueRange values, int64_t axis) {
  if (values.size() == 1)
    return values.front();
  return create("Concat", values, elementOf(values.front()),
                {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

} // namespace kiln
