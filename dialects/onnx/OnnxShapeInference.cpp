//===- OnnxShapeInference.cpp - The onnx ops' shape function --------------===//
//
// This file implements the default InferShapesInterface of every onnx op: the
// operator's ONNX schema inference function, run on Kiln's own operand types and
// constant operand values. The schema functions are the specification's shape rules
// for all ~190 operators; what makes them work where libonnx's whole-model inference
// gives up is what they are fed: kiln-infer-shapes folds constants first, so a
// Reshape sees the shape tensor its Shape -> Gather -> Concat chain computed.
//
// libonnx reports failures by throwing; this file is compiled with exceptions and
// turns each into `why`.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/OnnxSchemas.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

#include <map>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// Constant operands larger than this are not handed to schema functions: the
/// values they read are shapes, axes, pads, scales, repeats (rank-sized), and
/// copying weights for every op would cost compile time.
constexpr int64_t kMaxDataElements = 4096;
/// Tensor attributes (a Constant's value) up to this size are handed over.
constexpr int64_t kMaxAttributeElements = 1 << 16;

int32_t onnxDataType(Type t) {
  using TP = ::onnx::TensorProto;
  if (t.isF32()) return TP::FLOAT;
  if (t.isF64()) return TP::DOUBLE;
  if (t.isF16()) return TP::FLOAT16;
  if (t.isBF16()) return TP::BFLOAT16;
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return TP::UNDEFINED;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 1: return TP::BOOL;
  case 8: return u ? TP::UINT8 : TP::INT8;
  case 16: return u ? TP::UINT16 : TP::INT16;
  case 32: return u ? TP::UINT32 : TP::INT32;
  case 64: return u ? TP::UINT64 : TP::INT64;
  default: return TP::UNDEFINED;
  }
}

Type mlirElementType(int32_t dataType, MLIRContext *ctx) {
  using TP = ::onnx::TensorProto;
  switch (dataType) {
  case TP::FLOAT: return Float32Type::get(ctx);
  case TP::DOUBLE: return Float64Type::get(ctx);
  case TP::FLOAT16: return Float16Type::get(ctx);
  case TP::BFLOAT16: return BFloat16Type::get(ctx);
  case TP::BOOL: return IntegerType::get(ctx, 1);
  case TP::INT8: return IntegerType::get(ctx, 8);
  case TP::INT16: return IntegerType::get(ctx, 16);
  case TP::INT32: return IntegerType::get(ctx, 32);
  case TP::INT64: return IntegerType::get(ctx, 64);
  case TP::UINT8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case TP::UINT16: return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case TP::UINT32: return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case TP::UINT64: return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  default: return {};
  }
}

bool toTypeProto(Type type, ::onnx::TypeProto &proto) {
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return false;
  int32_t dt = onnxDataType(tensor.getElementType());
  if (dt == ::onnx::TensorProto::UNDEFINED)
    return false;
  auto *tt = proto.mutable_tensor_type();
  tt->set_elem_type(dt);
  if (auto ranked = dyn_cast<RankedTensorType>(tensor)) {
    auto *shape = tt->mutable_shape();
    for (int64_t d : ranked.getShape()) {
      auto *dim = shape->add_dim();
      if (!ShapedType::isDynamic(d))
        dim->set_dim_value(d);
    }
  }
  return true;
}

/// The bytes of a small constant in ONNX's raw layout; false when it is too large
/// or of a kind Kiln does not hand over.
bool toTensorProto(ElementsAttr attr, ::onnx::TensorProto &proto, int64_t maxElements) {
  ShapedType type = attr.getShapedType();
  if (!type.hasStaticShape() || type.getNumElements() > maxElements)
    return false;
  int32_t dt = onnxDataType(type.getElementType());
  if (dt == ::onnx::TensorProto::UNDEFINED)
    return false;
  proto.set_data_type(dt);
  for (int64_t d : type.getShape())
    proto.add_dims(d);
  int64_t n = type.getNumElements();
  std::string raw;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (type.getElementType().isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        raw.push_back(static_cast<char>(b));
    } else {
      ArrayRef<char> data = dense.getRawData();
      if (dense.isSplat()) {
        for (int64_t i = 0; i < n; ++i)
          raw.append(data.data(), data.size());
      } else {
        raw.assign(data.data(), data.size());
      }
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return false;
    ArrayRef<char> data = blob->getData();
    raw.assign(data.data(), data.size());
  } else {
    return false;
  }
  proto.set_raw_data(std::move(raw));
  return true;
}

/// The op's attributes as the schema declares them.
bool toAttributeProto(Attribute attr, ::onnx::AttributeProto::AttributeType kind,
                      ::onnx::AttributeProto &proto) {
  using AP = ::onnx::AttributeProto;
  proto.set_type(kind);
  auto array = dyn_cast<ArrayAttr>(attr);
  switch (kind) {
  case AP::INT:
    if (auto i = dyn_cast<IntegerAttr>(attr))
      return proto.set_i(i.getInt()), true;
    return false;
  case AP::FLOAT:
    if (auto f = dyn_cast<FloatAttr>(attr))
      return proto.set_f(static_cast<float>(f.getValueAsDouble())), true;
    return false;
  case AP::STRING:
    if (auto s = dyn_cast<StringAttr>(attr))
      return proto.set_s(s.str()), true;
    return false;
  case AP::INTS:
    if (!array)
      return false;
    for (Attribute a : array)
      if (auto i = dyn_cast<IntegerAttr>(a))
        proto.add_ints(i.getInt());
    return true;
  case AP::FLOATS:
    if (!array)
      return false;
    for (Attribute a : array)
      if (auto f = dyn_cast<FloatAttr>(a))
        proto.add_floats(static_cast<float>(f.getValueAsDouble()));
    return true;
  case AP::STRINGS:
    if (!array)
      return false;
    for (Attribute a : array)
      if (auto s = dyn_cast<StringAttr>(a))
        proto.add_strings(s.str());
    return true;
  case AP::TENSOR:
    if (auto e = dyn_cast<ElementsAttr>(attr))
      return toTensorProto(e, *proto.mutable_t(), kMaxAttributeElements);
    return false;
  default:
    return false;
  }
}

class Context : public ::onnx::InferenceContext {
public:
  std::map<std::string, ::onnx::AttributeProto> attributes;
  std::vector<::onnx::TypeProto> inputTypes;
  std::vector<bool> inputPresent;
  std::vector<::onnx::TensorProto> inputData;
  std::vector<bool> inputHasData;
  std::vector<::onnx::TypeProto> outputTypes;

  const ::onnx::AttributeProto *getAttribute(const std::string &name) const override {
    auto it = attributes.find(name);
    return it == attributes.end() ? nullptr : &it->second;
  }
  size_t getNumInputs() const override { return inputTypes.size(); }
  const ::onnx::TypeProto *getInputType(size_t i) const override {
    return i < inputTypes.size() && inputPresent[i] ? &inputTypes[i] : nullptr;
  }
  const ::onnx::TensorProto *getInputData(size_t i) const override {
    return i < inputData.size() && inputHasData[i] ? &inputData[i] : nullptr;
  }
  size_t getNumOutputs() const override { return outputTypes.size(); }
  ::onnx::TypeProto *getOutputType(size_t i) override { return &outputTypes.at(i); }
  ::onnx::GraphInferencer *getGraphAttributeInferencer(const std::string &) override {
    return nullptr;
  }
  const ::onnx::SparseTensorProto *getInputSparseData(size_t) const override {
    return nullptr;
  }
  const ::onnx::TensorShapeProto *getSymbolicInput(size_t) const override {
    return nullptr;
  }
};

/// The type a schema function gave, with `old`'s element type where it gave none.
Type fromTypeProto(const ::onnx::TypeProto &proto, Type old, MLIRContext *ctx) {
  if (!proto.has_tensor_type())
    return old;
  const auto &tt = proto.tensor_type();
  Type elem = tt.elem_type() ? mlirElementType(tt.elem_type(), ctx) : Type();
  if (!elem) {
    auto oldTensor = dyn_cast<TensorType>(old);
    if (!oldTensor)
      return old;
    elem = oldTensor.getElementType();
  }
  if (!tt.has_shape())
    return UnrankedTensorType::get(elem);
  SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim())
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value()
                                                           : ShapedType::kDynamic);
  return RankedTensorType::get(dims, elem);
}

int opsetOf(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto opset = p->getAttrOfType<IntegerAttr>("onnx.opset"))
      return static_cast<int>(opset.getInt());
  return kMaxOnnxOpset;
}

} // namespace

std::string dialectOpName(const std::string &name, int sinceVersion) {
  static const std::map<std::pair<std::string, int>, std::string> versioned = {
#define KILN_ONNX_VERSIONED_OP(n, v, dialectOp) {{n, v}, dialectOp},
#define KILN_ONNX_OP_SIGNATURE(...)
#include "dialects/onnx/OnnxOpVersions.inc"
  };
  auto it = versioned.find({name, sinceVersion});
  return it == versioned.end() ? "onnx." + name : it->second;
}

std::string resourceKey(StringRef name) {
  std::string key = name.str();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '.' && c != '$')
      c = '_';
  if (key.empty() || (!llvm::isAlpha(key[0]) && key[0] != '_'))
    key.insert(0, "_");
  return key;
}

std::string onnxOperatorName(Operation *op) {
  static const llvm::StringMap<std::string> versioned = [] {
    llvm::StringMap<std::string> m;
#define KILN_ONNX_VERSIONED_OP(n, v, dialectOp) m[dialectOp] = n;
#define KILN_ONNX_OP_SIGNATURE(...)
#include "dialects/onnx/OnnxOpVersions.inc"
    return m;
  }();
  StringRef name = op->getName().getStringRef();
  auto it = versioned.find(name);
  if (it != versioned.end())
    return it->second;
  return name.drop_front(name.find('.') + 1).str();
}

LogicalResult inferResultTypes(Operation *op, ArrayRef<Attribute> operandValues,
                               SmallVectorImpl<Type> &resultTypes, std::string &why) {
  resultTypes.assign(op->result_type_begin(), op->result_type_end());
  // Subgraph bodies are typed by the importer; their ops keep those types.
  if (op->getNumRegions() > 0 || op->getNumResults() == 0)
    return success();
  registerOnnxSchemaExtensions();
  std::string onnxName = onnxOperatorName(op);
  const ::onnx::OpSchema *schema =
      ::onnx::OpSchemaRegistry::Schema(onnxName, opsetOf(op), "");
  // An op the model's opset does not map to this dialect op was created by Kiln
  // (kiln-decompose builds newest versions): the newest schema describes it.
  if (!schema || dialectOpName(onnxName, schema->since_version()) !=
                     op->getName().getStringRef())
    schema = ::onnx::OpSchemaRegistry::Schema(onnxName, kMaxOnnxOpset, "");
  if (!schema || !schema->has_type_and_shape_inference_function())
    return success();

  Context ctx;
  for (const auto &[name, decl] : schema->attributes()) {
    Attribute attr = op->getAttr(name);
    if (!attr)
      continue;
    ::onnx::AttributeProto proto;
    proto.set_name(name);
    if (toAttributeProto(attr, decl.type, proto))
      ctx.attributes[name] = std::move(proto);
  }
  unsigned n = op->getNumOperands();
  ctx.inputTypes.resize(n);
  ctx.inputPresent.assign(n, false);
  ctx.inputData.resize(n);
  ctx.inputHasData.assign(n, false);
  for (unsigned i = 0; i < n; ++i) {
    ctx.inputPresent[i] = toTypeProto(op->getOperand(i).getType(), ctx.inputTypes[i]);
    if (i < operandValues.size())
      if (auto e = dyn_cast_or_null<ElementsAttr>(operandValues[i]))
        ctx.inputHasData[i] = toTensorProto(e, ctx.inputData[i], kMaxDataElements);
  }
  // Trailing absent inputs are not inputs at all for ONNX.
  while (!ctx.inputTypes.empty() && !ctx.inputPresent.back()) {
    ctx.inputTypes.pop_back();
    ctx.inputPresent.pop_back();
    ctx.inputData.pop_back();
    ctx.inputHasData.pop_back();
  }
  // Likewise trailing absent outputs (the dialect gives them none results).
  unsigned outputs = op->getNumResults();
  while (outputs > 0 && isa<NoneType>(op->getResult(outputs - 1).getType()))
    --outputs;
  ctx.outputTypes.resize(outputs);
  std::vector<int64_t> ranks;
  for (const ::onnx::TypeProto &t : ctx.inputTypes)
    ranks.push_back(t.has_tensor_type() && t.tensor_type().has_shape()
                        ? t.tensor_type().shape().dim_size()
                        : -1);
  why = inferencePreconditions(
      onnxName, [&](const std::string &name) { return ctx.getAttribute(name); }, ranks);
  if (!why.empty())
    return failure();
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception &e) {
    why = e.what();
    // "[ShapeInferenceError] ..." keeps the message, drops the tag.
    if (!why.empty() && why.front() == '[') {
      size_t close = why.find("] ");
      if (close != std::string::npos)
        why = why.substr(close + 2);
    }
    return failure();
  }
  for (unsigned i = 0; i < outputs; ++i) {
    Type old = op->getResult(i).getType();
    if (isa<NoneType>(old))
      continue;
    resultTypes[i] = fromTypeProto(ctx.outputTypes[i], old, op->getContext());
  }
  return success();
}

} // namespace kiln::onnx
