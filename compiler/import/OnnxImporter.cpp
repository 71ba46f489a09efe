//===- OnnxImporter.cpp - ONNX model -> onnx dialect ----------------------===//
//
// This file implements the import phase, shaped like Toy's MLIRGen: an OpBuilder, a
// scoped name -> Value table (subgraphs see their enclosing graphs' values), a
// loc() helper that turns each node's name into its location, and mlir::verify at
// the end. Ops are created generically by name: the dialect is generated from the
// same schema registry the loader checked the model against, so one code path
// imports every operator. The generated OnnxOpVersions.inc says which dialect op a
// (name, version) pair maps to and how many operands and results it declares.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/OnnxImporter.h"
#include "compiler/import/ModelLoader.h"
#include "dialects/onnx/OnnxSchemas.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/ScopedHashTable.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <limits>
#include <map>

using namespace mlir;

namespace kiln {
namespace {

struct OpSignature {
  unsigned inputs;
  bool lastInputVariadic;
  unsigned outputs;
  bool lastOutputVariadic;
};

const llvm::StringMap<OpSignature> &opSignatures() {
  static const llvm::StringMap<OpSignature> table = [] {
    llvm::StringMap<OpSignature> t;
#define KILN_ONNX_OP_SIGNATURE(op, in, inVar, out, outVar)                     \
  t[op] = OpSignature{in, inVar, out, outVar};
#include "dialects/onnx/OnnxOpVersions.inc"
    return t;
  }();
  return table;
}


class Importer {
public:
  Importer(MLIRContext &context, const ::onnx::ModelProto &model,
           const std::string &fileName, const ImportOptions &options,
           std::string &error)
      : context(context), builder(&context), model(model), fileName(fileName),
        options(options), error(error) {}

  OwningOpRef<ModuleOp> run();

private:
  using SymbolScope = llvm::ScopedHashTableScope<StringRef, Value>;
  using TypeScope = llvm::ScopedHashTableScope<StringRef, const ::onnx::TypeProto *>;

  /// A failure of any result type (LogicalResult, FailureOr<T>).
  struct Failed {
    template <typename T>
    operator FailureOr<T>() const { return failure(); }
    operator LogicalResult() const { return failure(); }
  };

  /// Records the first error (one line, prefixed with the file) and fails.
  Failed fail(const std::string &what) {
    if (error.empty())
      error = oneLine(fileName + ": " + what);
    return {};
  }

  Location loc(const ::onnx::NodeProto &node) {
    std::string name = !node.name().empty() ? node.name()
                       : node.output_size() ? node.output(0)
                                            : node.op_type();
    return NameLoc::get(StringAttr::get(&context, name));
  }

  FailureOr<Type> elementType(int32_t dataType, const std::string &what);
  FailureOr<Type> valueType(const ::onnx::TypeProto &type, const std::string &what,
                            bool requireStatic);
  FailureOr<Type> typeOfValue(StringRef name, const std::string &what,
                              bool requireStatic);
  FailureOr<ElementsAttr> tensorAttr(const ::onnx::TensorProto &tensor,
                                     const std::string &what);
  FailureOr<Attribute> attribute(const ::onnx::AttributeProto &attr,
                                 const ::onnx::NodeProto &node);
  LogicalResult declareValueTypes(const ::onnx::GraphProto &graph);
  LogicalResult importInitializers(const ::onnx::GraphProto &graph);
  LogicalResult importNodes(const ::onnx::GraphProto &graph);
  LogicalResult importNode(const ::onnx::NodeProto &node);
  LogicalResult importSubgraph(const ::onnx::GraphProto &graph, Region &region,
                               const ::onnx::NodeProto &owner);
  Value noValue(Location loc) {
    return builder.create<kiln::onnx::NoValueOp>(loc, builder.getNoneType());
  }

  MLIRContext &context;
  OpBuilder builder;
  const ::onnx::ModelProto &model;
  std::string fileName;
  const ImportOptions &options;
  std::string &error;
  int opset = 1;
  llvm::ScopedHashTable<StringRef, Value> symbols;
  llvm::ScopedHashTable<StringRef, const ::onnx::TypeProto *> types;
  unsigned resourceCounter = 0;
};

FailureOr<Type> Importer::elementType(int32_t dataType, const std::string &what) {
  MLIRContext *ctx = &context;
  switch (dataType) {
  case ::onnx::TensorProto::FLOAT: return Type(Float32Type::get(ctx));
  case ::onnx::TensorProto::DOUBLE: return Type(Float64Type::get(ctx));
  case ::onnx::TensorProto::FLOAT16: return Type(Float16Type::get(ctx));
  case ::onnx::TensorProto::BFLOAT16: return Type(BFloat16Type::get(ctx));
  case ::onnx::TensorProto::INT8: return Type(IntegerType::get(ctx, 8));
  case ::onnx::TensorProto::INT16: return Type(IntegerType::get(ctx, 16));
  case ::onnx::TensorProto::INT32: return Type(IntegerType::get(ctx, 32));
  case ::onnx::TensorProto::INT64: return Type(IntegerType::get(ctx, 64));
  case ::onnx::TensorProto::UINT8:
    return Type(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  case ::onnx::TensorProto::UINT16:
    return Type(IntegerType::get(ctx, 16, IntegerType::Unsigned));
  case ::onnx::TensorProto::UINT32:
    return Type(IntegerType::get(ctx, 32, IntegerType::Unsigned));
  case ::onnx::TensorProto::UINT64:
    return Type(IntegerType::get(ctx, 64, IntegerType::Unsigned));
  case ::onnx::TensorProto::BOOL: return Type(IntegerType::get(ctx, 1));
  case ::onnx::TensorProto::STRING:
    return fail(what + ": string tensors are not supported");
  case ::onnx::TensorProto::COMPLEX64:
  case ::onnx::TensorProto::COMPLEX128:
    return fail(what + ": complex tensors are not supported");
  default:
    return fail(what + ": element type " + std::to_string(dataType) +
                " is not supported");
  }
}

FailureOr<Type> Importer::valueType(const ::onnx::TypeProto &type,
                                    const std::string &what, bool requireStatic) {
  if (!type.has_tensor_type()) {
    const char *kind = type.has_sequence_type()   ? "sequence"
                       : type.has_optional_type() ? "optional"
                       : type.has_map_type()      ? "map"
                                                  : "non-tensor";
    return fail(what + ": " + kind + " values are not supported");
  }
  const ::onnx::TypeProto::Tensor &tensor = type.tensor_type();
  FailureOr<Type> elem = elementType(tensor.elem_type(), what);
  if (failed(elem))
    return failure();
  if (!tensor.has_shape()) {
    if (requireStatic)
      return fail(what + ": the shape could not be inferred");
    return Type(UnrankedTensorType::get(*elem));
  }
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (const auto &d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      int64_t v = d.dim_value();
      if (v < 0)
        return fail(what + ": negative dimension " + std::to_string(v));
      if (v != 0 && count > std::numeric_limits<int64_t>::max() / v)
        return fail(what + ": the element count overflows 64 bits");
      count *= v;
      dims.push_back(v);
      continue;
    }
    if (requireStatic) {
      std::string sym = d.has_dim_param() && !d.dim_param().empty()
                            ? "symbolic dimension '" + d.dim_param() + "'"
                            : "an unknown dimension";
      return fail(what + " has " + sym +
                  "; pin the graph inputs with --input-shape NAME=DxDx...");
    }
    dims.push_back(ShapedType::kDynamic);
  }
  return Type(RankedTensorType::get(dims, *elem));
}

FailureOr<Type> Importer::typeOfValue(StringRef name, const std::string &what,
                                      bool requireStatic) {
  const ::onnx::TypeProto *type = types.lookup(name);
  if (!type) {
    if (requireStatic)
      return fail(what + ": the type of '" + name.str() +
                  "' could not be inferred");
    return Type(); // The caller substitutes a placeholder.
  }
  return valueType(*type, what, requireStatic);
}

FailureOr<ElementsAttr> Importer::tensorAttr(const ::onnx::TensorProto &tensor,
                                             const std::string &what) {
  if (tensor.data_location() == ::onnx::TensorProto::EXTERNAL)
    return fail(what + ": external data was not loaded");
  FailureOr<Type> elem = elementType(tensor.data_type(), what);
  if (failed(elem))
    return failure();
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return fail(what + ": negative dimension " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return fail(what + ": the element count overflows 64 bits");
    count *= d;
    dims.push_back(d);
  }
  auto type = RankedTensorType::get(dims, *elem);
  unsigned bits = elem->getIntOrFloatBitWidth();
  size_t elemBytes = bits == 1 ? 1 : bits / 8;
  if (static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / elemBytes / 2)
    return fail(what + ": the tensor is too large");
  size_t expected = static_cast<size_t>(count) * elemBytes;

  // Gather the bytes in MLIR's layout (little-endian, one byte per bool).
  std::vector<char> bytes;
  auto wrongCount = [&](size_t got) {
    return fail(what + ": holds " + std::to_string(got) + " values, " +
                std::to_string(count) + " expected");
  };
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != expected)
      return fail(what + ": raw data has " +
                  std::to_string(tensor.raw_data().size()) + " bytes, " +
                  std::to_string(expected) + " expected");
  } else {
    // The values present are counted before anything is allocated: declared
    // dimensions alone never size an allocation.
    auto copyFrom = [&](const auto &field, auto convert) -> LogicalResult {
      if (static_cast<int64_t>(field.size()) != count)
        return wrongCount(field.size());
      bytes.resize(expected);
      for (int64_t i = 0; i < count; ++i)
        convert(field.Get(static_cast<int>(i)), bytes.data() + i * elemBytes);
      return success();
    };
    auto store = [elemBytes](auto v, char *dst) {
      std::memcpy(dst, &v, elemBytes);
    };
    LogicalResult ok = success();
    switch (tensor.data_type()) {
    case ::onnx::TensorProto::FLOAT:
      ok = copyFrom(tensor.float_data(), [&](float v, char *d) { store(v, d); });
      break;
    case ::onnx::TensorProto::DOUBLE:
      ok = copyFrom(tensor.double_data(), [&](double v, char *d) { store(v, d); });
      break;
    case ::onnx::TensorProto::INT64:
      ok = copyFrom(tensor.int64_data(), [&](int64_t v, char *d) { store(v, d); });
      break;
    case ::onnx::TensorProto::UINT32:
    case ::onnx::TensorProto::UINT64:
      ok = copyFrom(tensor.uint64_data(), [&](uint64_t v, char *d) { store(v, d); });
      break;
    case ::onnx::TensorProto::BOOL:
      ok = copyFrom(tensor.int32_data(),
                    [&](int32_t v, char *d) { *d = static_cast<char>(v != 0); });
      break;
    default: // int8/16/32, uint8/16, float16 and bfloat16 bits live in int32_data.
      ok = copyFrom(tensor.int32_data(), [&](int32_t v, char *d) { store(v, d); });
      break;
    }
    if (failed(ok))
      return failure();
  }

  // Raw data is used in place: no intermediate copy of large weights.
  ArrayRef<char> data = tensor.has_raw_data()
                            ? ArrayRef<char>(tensor.raw_data().data(),
                                             tensor.raw_data().size())
                            : ArrayRef<char>(bytes);
  if (elem->isInteger(1)) {
    SmallVector<bool> values(data.size());
    for (size_t i = 0; i < data.size(); ++i)
      values[i] = data[i] != 0;
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }
  if (static_cast<int64_t>(expected) > options.resourceThresholdBytes) {
    std::string blobName = onnx::resourceKey(
        tensor.name().empty() ? "onnx_constant_" + std::to_string(resourceCounter++)
                              : tensor.name());
    constexpr size_t align = alignof(std::max_align_t);
    AsmResourceBlob blob =
        options.borrowRawData && tensor.has_raw_data() &&
                reinterpret_cast<uintptr_t>(data.data()) % align == 0
            ? UnmanagedAsmResourceBlob::allocateWithAlign(data, align)
            : HeapAsmResourceBlob::allocateAndCopyWithAlign(data, align);
    return ElementsAttr(DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, data, splat))
    return fail(what + ": malformed tensor data");
  return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, data));
}

FailureOr<Attribute> Importer::attribute(const ::onnx::AttributeProto &attr,
                                         const ::onnx::NodeProto &node) {
  std::string what = nodeLabel(node) + ": attribute '" + attr.name() + "'";
  if (!attr.ref_attr_name().empty())
    return fail(what + " refers to a function attribute; functions are not "
                       "supported");
  switch (attr.type()) {
  case ::onnx::AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case ::onnx::AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case ::onnx::AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case ::onnx::AttributeProto::INTS: {
    SmallVector<int64_t> v(attr.ints().begin(), attr.ints().end());
    return Attribute(builder.getI64ArrayAttr(v));
  }
  case ::onnx::AttributeProto::FLOATS: {
    SmallVector<float> v(attr.floats().begin(), attr.floats().end());
    return Attribute(builder.getF32ArrayAttr(v));
  }
  case ::onnx::AttributeProto::STRINGS: {
    SmallVector<StringRef> v(attr.strings().begin(), attr.strings().end());
    return Attribute(builder.getStrArrayAttr(v));
  }
  case ::onnx::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> t = tensorAttr(attr.t(), what);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  case ::onnx::AttributeProto::TYPE_PROTO: {
    FailureOr<Type> t = valueType(attr.tp(), what, /*requireStatic=*/false);
    if (failed(t))
      return failure();
    return Attribute(TypeAttr::get(*t));
  }
  default:
    return fail(what + ": attributes of this kind (" +
                ::onnx::AttributeProto_AttributeType_Name(attr.type()) +
                ") are not supported");
  }
}

LogicalResult Importer::declareValueTypes(const ::onnx::GraphProto &graph) {
  for (const auto *list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const ::onnx::ValueInfoProto &vi : *list)
      if (vi.has_type())
        types.insert(vi.name(), &vi.type());
  return success();
}

LogicalResult Importer::importInitializers(const ::onnx::GraphProto &graph) {
  for (const ::onnx::TensorProto &init : graph.initializer()) {
    FailureOr<ElementsAttr> value =
        tensorAttr(init, "initializer '" + init.name() + "'");
    if (failed(value))
      return failure();
    Location l = NameLoc::get(builder.getStringAttr(init.name()));
    OperationState state(l, "onnx.Constant");
    state.addTypes(value->getType());
    state.addAttribute("value", *value);
    Operation *op = builder.create(state);
    symbols.insert(init.name(), op->getResult(0));
  }
  return success();
}

LogicalResult Importer::importSubgraph(const ::onnx::GraphProto &graph,
                                       Region &region,
                                       const ::onnx::NodeProto &owner) {
  SymbolScope symbolScope(symbols);
  TypeScope typeScope(types);
  if (failed(declareValueTypes(graph)))
    return failure();
  Block *block = new Block();
  region.push_back(block);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  std::string what = nodeLabel(owner) + ": subgraph '" + graph.name() + "'";
  for (const ::onnx::ValueInfoProto &in : graph.input()) {
    FailureOr<Type> t = valueType(in.type(), what + " input '" + in.name() + "'",
                                  /*requireStatic=*/false);
    if (failed(t))
      return failure();
    symbols.insert(in.name(), block->addArgument(*t, loc(owner)));
  }
  if (failed(importInitializers(graph)) || failed(importNodes(graph)))
    return failure();
  SmallVector<Value> results;
  for (const ::onnx::ValueInfoProto &out : graph.output()) {
    Value v = symbols.lookup(out.name());
    if (!v)
      return fail(what + ": output '" + out.name() + "' is never defined");
    results.push_back(v);
  }
  builder.create<kiln::onnx::YieldOp>(loc(owner), results);
  return success();
}

LogicalResult Importer::importNode(const ::onnx::NodeProto &node) {
  int since = onnxSinceVersion(node.op_type(), opset);
  if (since == 0)
    return fail(nodeLabel(node) + ": unknown operator at opset " +
                std::to_string(opset));
  std::string opName = kiln::onnx::dialectOpName(node.op_type(), since);
  auto sigIt = opSignatures().find(opName);
  std::optional<RegisteredOperationName> registered =
      RegisteredOperationName::lookup(opName, &context);
  if (sigIt == opSignatures().end() || !registered)
    return fail(nodeLabel(node) + ": version " + std::to_string(since) +
                " of " + node.op_type() +
                " (opset " + std::to_string(opset) + ") is not supported");
  const OpSignature &sig = sigIt->second;
  Location l = loc(node);

  OperationState state(l, opName);
  for (const std::string &input : node.input()) {
    if (input.empty()) {
      state.addOperands(noValue(l));
      continue;
    }
    Value v = symbols.lookup(input);
    if (!v)
      return fail(nodeLabel(node) + ": input '" + input + "' is not defined");
    state.addOperands(v);
  }
  if (!sig.lastInputVariadic) {
    if (state.operands.size() > sig.inputs)
      return fail(nodeLabel(node) + ": " + std::to_string(state.operands.size()) +
                  " inputs, at most " + std::to_string(sig.inputs) + " allowed");
    while (state.operands.size() < sig.inputs)
      state.addOperands(noValue(l));
  }

  SmallVector<int> untyped;
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (out.empty()) {
      state.addTypes(builder.getNoneType());
      continue;
    }
    std::string what = nodeLabel(node) + ": output '" + out + "'";
    FailureOr<Type> t = typeOfValue(out, what, /*requireStatic=*/false);
    if (failed(t))
      return failure();
    if (!*t) {
      // A value libonnx's inference did not type: an unranked placeholder with
      // the element type of the first tensor input, until the op's shape function
      // says better below (kiln-infer-shapes completes the shape).
      Type elem = builder.getF32Type();
      for (Value v : state.operands)
        if (auto st = dyn_cast<TensorType>(v.getType())) {
          elem = st.getElementType();
          break;
        }
      *t = UnrankedTensorType::get(elem);
      untyped.push_back(i);
    }
    state.addTypes(*t);
  }
  if (!sig.lastOutputVariadic)
    while (state.types.size() < sig.outputs)
      state.addTypes(builder.getNoneType());

  // Attributes: the node's own, then the defaults of the exact version it uses, so
  // that the IR does not depend on which version's defaults the dialect declares.
  std::map<std::string, const ::onnx::GraphProto *> graphs;
  for (const ::onnx::AttributeProto &attr : node.attribute()) {
    if (attr.type() == ::onnx::AttributeProto::GRAPH) {
      graphs[attr.name()] = &attr.g();
      continue;
    }
    FailureOr<Attribute> a = attribute(attr, node);
    if (failed(a))
      return failure();
    state.addAttribute(attr.name(), *a);
  }
  for (const ::onnx::AttributeProto &def :
       onnxDefaultAttributes(node.op_type(), opset)) {
    if (state.attributes.get(def.name()))
      continue;
    FailureOr<Attribute> a = attribute(def, node);
    if (failed(a))
      return failure();
    state.addAttribute(def.name(), *a);
  }
  // Regions in the dialect's order (attribute names sorted, as the generator does).
  for (const auto &[name, graph] : graphs) {
    Region *region = state.addRegion();
    if (failed(importSubgraph(*graph, *region, node)))
      return failure();
  }

  Operation *op = builder.create(state);
  if (!untyped.empty()) {
    SmallVector<Type> inferred;
    std::string why;
    if (succeeded(cast<kiln::onnx::InferShapesInterface>(op).inferResultTypes(
            {}, inferred, why)))
      for (int i : untyped)
        op->getResult(i).setType(inferred[i]);
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      symbols.insert(node.output(i), op->getResult(i));
  return success();
}

LogicalResult Importer::importNodes(const ::onnx::GraphProto &graph) {
  for (const ::onnx::NodeProto &node : graph.node())
    if (failed(importNode(node)))
      return failure();
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  for (const ::onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = static_cast<int>(o.version());

  Location fileLoc = FileLineColLoc::get(&context, fileName, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  const ::onnx::GraphProto &graph = model.graph();
  module->getOperation()->setAttr("onnx.opset", builder.getI64IntegerAttr(opset));
  module->getOperation()->setAttr("onnx.ir_version",
                                  builder.getI64IntegerAttr(model.ir_version()));
  if (!model.producer_name().empty())
    module->getOperation()->setAttr(
        "onnx.producer",
        builder.getStringAttr(model.producer_version().empty()
                                  ? model.producer_name()
                                  : model.producer_name() + " " + model.producer_version()));

  SymbolScope symbolScope(symbols);
  TypeScope typeScope(types);
  if (failed(declareValueTypes(graph)))
    return nullptr;

  std::set<std::string> initializers;
  for (const ::onnx::TensorProto &t : graph.initializer())
    initializers.insert(t.name());

  SmallVector<Type> argTypes;
  SmallVector<const ::onnx::ValueInfoProto *> args;
  for (const ::onnx::ValueInfoProto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue; // IR < 4 lists initializers as inputs too; they are constants.
    FailureOr<Type> t = valueType(in.type(), "input '" + in.name() + "'", true);
    if (failed(t))
      return nullptr;
    argTypes.push_back(*t);
    args.push_back(&in);
  }
  if (graph.output_size() == 0) {
    fail("the graph has no outputs");
    return nullptr;
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, "main_graph", builder.getFunctionType(argTypes, {}));
  for (size_t i = 0; i < args.size(); ++i)
    func.setArgAttr(i, "onnx.name", builder.getStringAttr(args[i]->name()));
  Block *entry = func.addEntryBlock();
  for (size_t i = 0; i < args.size(); ++i)
    symbols.insert(args[i]->name(), entry->getArgument(i));
  builder.setInsertionPointToStart(entry);

  if (failed(importInitializers(graph)) || failed(importNodes(graph)))
    return nullptr;
  SmallVector<Value> results;
  for (const ::onnx::ValueInfoProto &out : graph.output()) {
    Value v = symbols.lookup(out.name());
    if (!v) {
      fail("output '" + out.name() + "' is never defined");
      return nullptr;
    }
    results.push_back(v);
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  // Result types are the values' (possibly not yet static: kiln-infer-shapes
  // completes them).
  func.setType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (int i = 0; i < graph.output_size(); ++i)
    func.setResultAttr(i, "onnx.name", builder.getStringAttr(graph.output(i).name()));

  // The dialect's verifiers run here; report the first failure with its node.
  std::string firstDiag;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error || !firstDiag.empty())
      return success();
    std::string where;
    if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
      where = "node '" + name.getName().str() + "': ";
    firstDiag = where + diag.str();
    return success();
  });
  if (failed(verify(*module))) {
    fail(firstDiag.empty() ? "the imported IR does not verify" : firstDiag);
    return nullptr;
  }
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context,
                                      const ::onnx::ModelProto &model,
                                      const std::string &fileName,
                                      const ImportOptions &options,
                                      std::string &error) {
  context.loadDialect<func::FuncDialect, kiln::onnx::OnnxDialect>();
  Importer importer(context, model, fileName, options, error);
  return importer.run();
}

void registerImportDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, kiln::onnx::OnnxDialect>();
}

} // namespace kiln
