//===- ModelLoader.cpp - Read, check and shape-infer an ONNX model --------===//
//
// This file implements the libonnx boundary: parsing (binary or text), external
// data, input-shape pinning, the checker and shape inference. libonnx and protobuf
// report errors by throwing; this file is compiled with exceptions, catches them all
// and turns each into one line that names the node where ONNX tells us which it is.
//
// External data is read here, not by libonnx, so that Kiln controls the safety
// checks: a location must be a relative path that stays inside the model's folder
// (no "..", no absolute paths, no symlink escapes), and the file must hold every
// byte the tensor declares.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/ModelLoader.h"
#include "compiler/import/TrainingOps.h"
#include "dialects/onnx/OnnxSchemas.h"
#include "kiln/runtime/Npy.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace onnx;

namespace kiln {
namespace {

/// Operator versions from opsets 18-21 whose meaning changed and whose schema Kiln
/// does not provide: a model at or above that opset must not silently get the older
/// semantics.
const std::map<std::string, int> kMissingNewerVersions = {
    {"GridSample", 20}, {"DFT", 20}, {"Col2Im", 18}, {"CenterCropPad", 18},
    {"AffineGrid", 20}, {"DeformConv", 19}, {"ImageDecoder", 20},
    {"RegexFullMatch", 20}, {"StringConcat", 20}, {"StringSplit", 20}};

/// "node 'conv1' (Conv)"; an unnamed node is named by its first output.

/// Size in bytes of one element of an ONNX data type, 0 if Kiln cannot tell.
size_t elementSize(int32_t dataType) {
  switch (dataType) {
  case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32:
    return 4;
  case TensorProto::UINT8: case TensorProto::INT8: case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16: case TensorProto::INT16: case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::INT64: case TensorProto::UINT64: case TensorProto::DOUBLE:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

/// Number of elements of `tensor`, or -1 when a dimension is negative or the
/// product overflows.
int64_t numElements(const TensorProto &tensor) {
  int64_t n = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return -1;
    n *= d;
  }
  return n;
}

void nameNodes(GraphProto &graph,
               const std::map<std::string, std::string> &nameByOutput) {
  for (NodeProto &node : *graph.mutable_node()) {
    if (node.output_size() > 0) {
      auto it = nameByOutput.find(node.output(0));
      if (it != nameByOutput.end())
        node.set_name(it->second);
    }
    for (AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        nameNodes(*attr.mutable_g(), nameByOutput);
      for (GraphProto &g : *attr.mutable_graphs())
        nameNodes(g, nameByOutput);
    }
  }
}

/// Exporters write an unknown dimension as dim_value -1 (or any value <= 0 where
/// the dimension is dynamic); ONNX's shape inference would take it for a size and
/// refuse the real one. Such dimensions become plain unknown ones (no value, no
/// name) in every value's declared type, subgraphs included.
void forgetNegativeDims(GraphProto &graph) {
  auto clean = [](ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    for (auto &d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        d.clear_dim_value();
  };
  for (auto &vi : *graph.mutable_input())
    clean(vi);
  for (auto &vi : *graph.mutable_output())
    clean(vi);
  for (auto &vi : *graph.mutable_value_info())
    clean(vi);
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        forgetNegativeDims(*attr.mutable_g());
      for (auto &g : *attr.mutable_graphs())
        forgetNegativeDims(g);
    }
}

class Loader {
public:
  Loader(std::string path, const LoadOptions &options)
      : path(std::move(path)), options(options) {}
  /// A model held in memory, named `path` (its extension tells text from binary);
  /// it has no folder, so external data is refused.
  Loader(std::string path, const std::string *bytes, const LoadOptions &options)
      : path(std::move(path)), options(options), bytes(bytes) {}

  bool run(ModelProto &model);
  std::string error;

private:
  bool fail(const std::string &what) {
    error = path + ": " + what;
    return false;
  }
  bool parse(ModelProto &model);
  bool checkVersions(const ModelProto &model);
  bool checkNodes(const GraphProto &graph, int opset);
  bool checkInference(const GraphProto &graph);
  bool loadExternalData(GraphProto &graph);
  bool loadExternalTensor(TensorProto &tensor, const std::string &owner);
  bool pinInputShapes(GraphProto &graph);
  bool freezeInputValues(GraphProto &graph);
  bool valueTensor(const ValueInfoProto &input, const std::string &text, TensorProto &t);
  bool check(ModelProto &model);
  bool infer(ModelProto &model);
  std::string describeOnnxError(const std::string &what);

  std::string path;
  const LoadOptions &options;
  const std::string *bytes = nullptr;
  int defaultOpset = 0;
};

bool Loader::run(ModelProto &model) {
  registerOnnxSchemaExtensions();
  std::string why;
  if (!parse(model))
    return false;
  if (!expandTrainingOptimizers(model, why))
    return fail(why);
  if (!checkVersions(model) || !checkNodes(model.graph(), defaultOpset))
    return false;
  forgetNegativeDims(*model.mutable_graph());
  if (!loadExternalData(*model.mutable_graph()) ||
      !freezeInputValues(*model.mutable_graph()) ||
      !pinInputShapes(*model.mutable_graph()) || !check(model) ||
      !checkInference(model.graph()))
    return false;
  return !options.inferShapes || infer(model);
}

bool Loader::parse(ModelProto &model) {
  std::error_code ec;
  llvm::StringRef mapped;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file{std::error_code()};
  if (bytes) {
    mapped = *bytes;
  } else {
    if (!fs::exists(path, ec))
      return fail("no such file");
    if (fs::is_directory(path, ec))
      return fail("is a directory, not an ONNX model");
    // Mapped, not read: the protobuf parser copies the weights out of it once.
    file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                       /*RequiresNullTerminator=*/false);
    if (!file)
      return fail("cannot open the file for reading (" + file.getError().message() + ")");
    mapped = (*file)->getBuffer();
  }
  if (mapped.empty())
    return fail("the file is empty");

  fs::path p(path);
  std::string ext = p.extension().string();
  if (ext == ".onnxtxt" || ext == ".onnxtext" || ext == ".txt") {
    std::string bytes = mapped.str();
    // libonnx 1.12's parser predates the `[node_name] outputs = Op(...)` prefix of
    // newer ONNX text syntax; strip it here and name the nodes after parsing, by
    // their first output (outputs are unique).
    std::map<std::string, std::string> nameByOutput;
    static const std::regex namePrefix(
        R"(\[([^\]\s]+)\]\s*([A-Za-z_][A-Za-z0-9_./:-]*))");
    std::string text;
    auto begin = bytes.cbegin();
    for (std::sregex_iterator it(bytes.begin(), bytes.end(), namePrefix), end;
         it != end; ++it) {
      const std::smatch &m = *it;
      // Only at the start of a line: `[` elsewhere is a shape.
      size_t lineStart = bytes.rfind('\n', m.position(0));
      lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
      if (bytes.find_first_not_of(" \t", lineStart) != static_cast<size_t>(m.position(0)))
        continue;
      nameByOutput[m[2].str()] = m[1].str();
      text.append(begin, bytes.cbegin() + m.position(0));
      begin = bytes.cbegin() + m.position(2);
    }
    text.append(begin, bytes.cend());
    Status status = OnnxParser::Parse(model, text.c_str());
    if (!status.IsOK()) {
      std::string msg = status.ErrorMessage();
      for (char &c : msg)
        if (c == '\n')
          c = ' ';
      return fail("ONNX text syntax error: " + msg);
    }
    nameNodes(*model.mutable_graph(), nameByOutput);
    return true;
  }
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(mapped.data()),
      static_cast<int>(std::min<size_t>(mapped.size(), INT32_MAX)));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (mapped.size() > static_cast<size_t>(INT32_MAX))
    return fail("the model protobuf is over 2 GiB; store weights as external "
                "data");
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return fail("not a valid ONNX model (the protobuf is truncated or corrupt)");
  if (!model.has_graph())
    return fail("not a valid ONNX model (no graph; is the file truncated?)");
  return true;
}

bool Loader::checkVersions(const ModelProto &model) {
  if (model.ir_version() <= 0)
    return fail("the model has no ir_version");
  if (model.ir_version() > kMaxOnnxIrVersion)
    return fail("IR version " + std::to_string(model.ir_version()) +
                " is newer than Kiln supports (" +
                std::to_string(kMaxOnnxIrVersion) + ")");
  for (const OperatorSetIdProto &opset : model.opset_import()) {
    const std::string &domain = opset.domain();
    if (domain.empty() || domain == "ai.onnx") {
      defaultOpset = static_cast<int>(opset.version());
      if (opset.version() > kMaxOnnxOpset)
        return fail("opset " + std::to_string(opset.version()) +
                    " of domain ai.onnx is newer than Kiln supports (" +
                    std::to_string(kMaxOnnxOpset) + ")");
      if (opset.version() < 1)
        return fail("invalid opset version " + std::to_string(opset.version()));
    }
  }
  // A model without the default domain can only hold other domains' nodes; the
  // node check names them.
  if (defaultOpset == 0)
    defaultOpset = 1;
  return true;
}

/// What libonnx's inference functions assume without checking (OnnxSchemas.h),
/// checked on the declared ranks before they run: a model that breaks it is an
/// error naming the node, not a crash inside libonnx.
bool Loader::checkInference(const GraphProto &graph) {
  std::map<std::string, int64_t> ranks;
  for (const TensorProto &t : graph.initializer())
    ranks[t.name()] = t.dims_size();
  for (const auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const ValueInfoProto &v : *list)
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
        ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  for (const NodeProto &node : graph.node()) {
    std::vector<int64_t> inputRanks;
    for (const std::string &in : node.input()) {
      auto it = ranks.find(in);
      inputRanks.push_back(it == ranks.end() ? -1 : it->second);
    }
    std::string why = inferencePreconditions(
        node.op_type(),
        [&](const std::string &name) -> const AttributeProto * {
          for (const AttributeProto &a : node.attribute())
            if (a.name() == name)
              return &a;
          return nullptr;
        },
        inputRanks);
    if (!why.empty())
      return fail(nodeLabel(node) + ": " + why);
    for (const AttributeProto &attr : node.attribute()) {
      if (attr.has_g() && !checkInference(attr.g()))
        return false;
      for (const GraphProto &g : attr.graphs())
        if (!checkInference(g))
          return false;
    }
  }
  return true;
}

bool Loader::checkNodes(const GraphProto &graph, int opset) {
  for (const NodeProto &node : graph.node()) {
    const std::string &domain = node.domain();
    if (!domain.empty() && domain != "ai.onnx")
      return fail(nodeLabel(node) + ": operators of domain '" + domain +
                  "' are not supported (Kiln imports the default ONNX domain)");
    auto missing = kMissingNewerVersions.find(node.op_type());
    if (missing != kMissingNewerVersions.end() && opset >= missing->second)
      return fail(nodeLabel(node) + ": " + node.op_type() + " at opset " +
                  std::to_string(opset) + " is not supported (Kiln knows it up to opset " +
                  std::to_string(missing->second - 1) + ")");
    if (!OpSchemaRegistry::Schema(node.op_type(), opset, ONNX_DOMAIN))
      return fail(nodeLabel(node) + ": unknown operator '" + node.op_type() +
                  "' at opset " + std::to_string(opset));
    for (const AttributeProto &attr : node.attribute()) {
      if (attr.has_g() && !checkNodes(attr.g(), opset))
        return false;
      for (const GraphProto &g : attr.graphs())
        if (!checkNodes(g, opset))
          return false;
    }
  }
  return true;
}

bool Loader::loadExternalTensor(TensorProto &tensor, const std::string &owner) {
  if (tensor.data_location() != TensorProto::EXTERNAL)
    return true;
  if (bytes)
    return fail(owner + ": external data needs the model's folder (the model was given "
                        "in memory)");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      char *end = nullptr;
      long long v = std::strtoll(entry.value().c_str(), &end, 10);
      if (entry.value().empty() || *end != '\0' || v < 0)
        return fail(owner + ": external data " + entry.key() + " '" +
                    entry.value() + "' is not a non-negative integer");
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return fail(owner + ": external data has no location");
  fs::path rel(location);
  if (rel.is_absolute())
    return fail(owner + ": external data location '" + location +
                "' is absolute; it must be relative to the model's folder");
  for (const fs::path &part : rel)
    if (part == "..")
      return fail(owner + ": external data location '" + location +
                  "' leaves the model's folder");
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
  fs::path file = dir / rel;
  if (!fs::exists(file, ec))
    return fail(owner + ": external data file '" + location + "' not found");
  // Symlinks may still point outside: compare canonical paths.
  fs::path canonDir = fs::canonical(dir, ec);
  fs::path canonFile = fs::canonical(file, ec);
  if (ec)
    return fail(owner + ": cannot resolve external data file '" + location + "'");
  auto [dirEnd, fileIt] = std::mismatch(canonDir.begin(), canonDir.end(),
                                        canonFile.begin(), canonFile.end());
  if (dirEnd != canonDir.end())
    return fail(owner + ": external data location '" + location +
                "' resolves outside the model's folder");
  if (!fs::is_regular_file(canonFile, ec))
    return fail(owner + ": external data '" + location + "' is not a file");

  int64_t count = numElements(tensor);
  size_t elemSize = elementSize(tensor.data_type());
  if (count < 0)
    return fail(owner + ": invalid or overflowing dimensions");
  if (elemSize == 0)
    return fail(owner + ": external data of this element type is not supported");
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / elemSize)
    return fail(owner + ": tensor size overflows");
  int64_t expected = count * static_cast<int64_t>(elemSize);
  if (length >= 0 && length != expected)
    return fail(owner + ": external data length " + std::to_string(length) +
                " does not match the tensor's " + std::to_string(expected) +
                " bytes");
  uint64_t fileSize = fs::file_size(canonFile, ec);
  if (static_cast<uint64_t>(offset) > fileSize ||
      fileSize - static_cast<uint64_t>(offset) < static_cast<uint64_t>(expected))
    return fail(owner + ": external data '" + location + "' holds " +
                std::to_string(fileSize > static_cast<uint64_t>(offset)
                                   ? fileSize - offset
                                   : 0) +
                " bytes after offset " + std::to_string(offset) + ", " +
                std::to_string(expected) + " needed");
  std::ifstream in(canonFile, std::ios::binary);
  std::string data(static_cast<size_t>(expected), '\0');
  in.seekg(offset);
  in.read(data.data(), expected);
  if (!in)
    return fail(owner + ": cannot read external data '" + location + "'");
  tensor.set_raw_data(std::move(data));
  tensor.clear_external_data();
  tensor.set_data_location(TensorProto::DEFAULT);
  return true;
}

bool Loader::loadExternalData(GraphProto &graph) {
  for (TensorProto &t : *graph.mutable_initializer())
    if (!loadExternalTensor(t, "initializer '" + t.name() + "'"))
      return false;
  for (NodeProto &node : *graph.mutable_node()) {
    for (AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_t() && !loadExternalTensor(*attr.mutable_t(), nodeLabel(node)))
        return false;
      if (attr.has_g() && !loadExternalData(*attr.mutable_g()))
        return false;
      for (GraphProto &g : *attr.mutable_graphs())
        if (!loadExternalData(g))
          return false;
    }
  }
  return true;
}

/// The tensor an --input-value gives `input`: numbers in its element type and shape,
/// or a .npy / .pb file of exactly that element type.
bool Loader::valueTensor(const ValueInfoProto &input, const std::string &text,
                         TensorProto &t) {
  const std::string what = "--input-value for '" + input.name() + "'";
  int elem = input.type().tensor_type().elem_type();
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    return text.size() > n && text.compare(text.size() - n, n, suffix) == 0;
  };
  if (endsWith(".pb")) {
    std::ifstream in(text, std::ios::binary);
    if (!in || !t.ParseFromIstream(&in))
      return fail(what + ": " + text + " is not an ONNX TensorProto");
  } else if (endsWith(".npy")) {
    rt::HostTensor host;
    if (rt::Status st = rt::readNpy(text, host); !st)
      return fail(what + ": " + st.message());
    t.set_data_type(static_cast<int>(host.desc.dtype));
    for (int64_t d : host.desc.shape)
      t.add_dims(d);
    t.set_raw_data(host.data.data(), host.data.size());
  } else {
    // Numbers, in the input's element type and declared shape.
    std::vector<double> numbers;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
      char *end = nullptr;
      double v = std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0')
        return fail(what + ": '" + item + "' is not a number (give numbers, or a .npy or "
                    ".pb file)");
      numbers.push_back(v);
    }
    rt::DType dtype = static_cast<rt::DType>(elem);
    size_t size = rt::dtypeSize(dtype);
    if (size == 0 || dtype == rt::DType::F16 || dtype == rt::DType::BF16)
      return fail(what + ": numbers cannot be given for element type " +
                  TensorProto_DataType_Name(elem) + " (give a .npy or .pb file)");
    const auto &shape = input.type().tensor_type().shape();
    std::vector<int64_t> dims;
    for (const auto &d : shape.dim())
      dims.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
    if (dims.size() == 1 && dims[0] < 0)
      dims[0] = static_cast<int64_t>(numbers.size());
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0)
        return fail(what + ": the input's shape is not known (give a .npy or .pb file)");
      count *= d;
    }
    if (count != static_cast<int64_t>(numbers.size()))
      return fail(what + ": " + std::to_string(numbers.size()) + " numbers for " +
                  std::to_string(count) + " elements");
    std::string raw(numbers.size() * size, '\0');
    for (size_t i = 0; i < numbers.size(); ++i) {
      char *at = raw.data() + i * size;
      double v = numbers[i];
      auto put = [&](auto x) { std::memcpy(at, &x, sizeof x); };
      switch (dtype) {
      case rt::DType::F32: put(static_cast<float>(v)); break;
      case rt::DType::F64: put(v); break;
      case rt::DType::Bool: put(static_cast<uint8_t>(v != 0)); break;
      case rt::DType::I8: put(static_cast<int8_t>(v)); break;
      case rt::DType::U8: put(static_cast<uint8_t>(v)); break;
      case rt::DType::I16: put(static_cast<int16_t>(v)); break;
      case rt::DType::U16: put(static_cast<uint16_t>(v)); break;
      case rt::DType::I32: put(static_cast<int32_t>(v)); break;
      case rt::DType::U32: put(static_cast<uint32_t>(v)); break;
      case rt::DType::I64: put(static_cast<int64_t>(v)); break;
      case rt::DType::U64: put(static_cast<uint64_t>(v)); break;
      default: return fail(what + ": unsupported element type");
      }
    }
    t.set_data_type(elem);
    for (int64_t d : dims)
      t.add_dims(d);
    t.set_raw_data(raw);
  }
  if (t.data_type() != elem)
    return fail(what + ": the value is " + TensorProto_DataType_Name(t.data_type()) +
                ", the input " + TensorProto_DataType_Name(elem));
  // The value's shape must fit the declared one (unknown dims take anything).
  if (input.type().tensor_type().has_shape()) {
    const auto &shape = input.type().tensor_type().shape();
    bool fits = shape.dim_size() == t.dims_size();
    for (int i = 0; fits && i < t.dims_size(); ++i)
      fits = !(shape.dim(i).has_dim_value() && shape.dim(i).dim_value() > 0) ||
             shape.dim(i).dim_value() == t.dims(i);
    if (!fits)
      return fail(what + ": the value's shape does not fit the input's");
  }
  t.set_name(input.name());
  return true;
}

bool Loader::freezeInputValues(GraphProto &graph) {
  for (const auto &[name, text] : options.inputValues) {
    if (options.inputShapes.count(name))
      return fail("--input-value and --input-shape both name '" + name + "'");
    auto inputs = graph.mutable_input();
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const ValueInfoProto &vi) { return vi.name() == name; });
    if (it == inputs->end())
      return fail("--input-value names '" + name + "', which is not an input of the graph");
    if (!it->type().has_tensor_type())
      return fail("--input-value: input '" + name + "' is not a tensor");
    TensorProto value;
    if (!valueTensor(*it, text, value))
      return false;
    // An input with a default (an initializer of the same name) takes the given value.
    auto inits = graph.mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i)
      if (inits->Get(i).name() == name)
        inits->DeleteSubrange(i, 1);
    *graph.add_initializer() = std::move(value);
    inputs->erase(it);
  }
  return true;
}

bool Loader::pinInputShapes(GraphProto &graph) {
  for (const auto &[name, dims] : options.inputShapes) {
    ValueInfoProto *input = nullptr;
    for (ValueInfoProto &vi : *graph.mutable_input())
      if (vi.name() == name)
        input = &vi;
    if (!input)
      return fail("--input-shape names '" + name +
                  "', which is not an input of the graph");
    if (!input->type().has_tensor_type())
      return fail("--input-shape: input '" + name + "' is not a tensor");
    TensorShapeProto *shape =
        input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(dims.size()))
      return fail("--input-shape gives " + std::to_string(dims.size()) +
                  " dimensions for input '" + name + "' of rank " +
                  std::to_string(shape->dim_size()));
    for (size_t i = 0; i < dims.size(); ++i) {
      if (static_cast<int>(i) < shape->dim_size()) {
        const auto &d = shape->dim(static_cast<int>(i));
        // A dim_value 0 is pinnable like an unknown one (exporters' -1 is gone by
        // now, see forgetNegativeDims), as are named and empty dim_params.
        if (d.has_dim_value() && d.dim_value() > 0 && d.dim_value() != dims[i])
          return fail("--input-shape sets dimension " + std::to_string(i) +
                      " of input '" + name + "' to " + std::to_string(dims[i]) +
                      " but the model fixes it to " +
                      std::to_string(d.dim_value()));
      }
    }
    shape->clear_dim();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  return true;
}

/// libonnx errors span several lines and bury the node in a context trailer; make
/// them one line that starts with the node.
std::string Loader::describeOnnxError(const std::string &what) {
  std::string text = what;
  std::smatch m;
  std::string node;
  static const std::regex checkerCtx(R"(Name: ([^\s]*) OpType: ([^\s]+))");
  static const std::regex inferCtx(R"(\(op_type:([^,)]+)(, node name: ([^)]*))?\))");
  if (std::regex_search(text, m, checkerCtx))
    node = "node '" + m[1].str() + "' (" + m[2].str() + "): ";
  else if (std::regex_search(text, m, inferCtx))
    node = (m[3].matched && m[3].length() ? "node '" + m[3].str() + "'"
                                          : std::string("unnamed node")) +
           " (" + m[1].str() + "): ";
  // One line: drop the context trailer, fold the rest.
  std::string first = text.substr(0, text.find("==> Context:"));
  first = std::regex_replace(first, std::regex(R"(\s+)"), " ");
  while (!first.empty() && first.back() == ' ')
    first.pop_back();
  first = std::regex_replace(first, inferCtx, "");
  first = std::regex_replace(first, std::regex(R"(\[ShapeInferenceError\]\s*)"), "");
  first = std::regex_replace(first, std::regex(R"(\[TypeInferenceError\]\s*)"), "");
  first = std::regex_replace(first, std::regex(R"(Shape inference error\(s\):[\s:]*)"), "");
  size_t begin = first.find_first_not_of(" :");
  first = begin == std::string::npos ? first : first.substr(begin);
  return node + first;
}

bool Loader::check(ModelProto &model) {
  // libonnx 1.12 knows IR version 8; 9 and 10 only add types Kiln rejects later by
  // name, so the checker sees the model as version 8.
  int64_t ir = model.ir_version();
  model.set_ir_version(std::min<int64_t>(ir, 8));
  try {
    checker::check_model(model);
  } catch (const std::exception &e) {
    model.set_ir_version(ir);
    return fail("invalid model: " + describeOnnxError(e.what()));
  }
  model.set_ir_version(ir);
  return true;
}

bool Loader::infer(ModelProto &model) {
  int64_t ir = model.ir_version();
  model.set_ir_version(std::min<int64_t>(ir, 8));
  try {
    // A first guess: nodes libonnx cannot type are left for kiln-infer-shapes,
    // which reports real errors with the node.
    ShapeInferenceOptions inferOptions(/*check_type=*/true, /*error_mode=*/0,
                                       /*data_prop=*/true);
    shape_inference::InferShapes(model, OpSchemaRegistry::Instance(),
                                 inferOptions);
  } catch (const std::exception &) {
    // A first guess only: what libonnx could not type (even a node that breaks
    // a type constraint, as old PyTorch exports' int64 Constant-1 do) is typed by
    // Kiln's shape functions, which report real errors naming the node.
  }
  model.set_ir_version(ir);
  return true;
}

} // namespace

namespace {
bool load(Loader &loader, const std::string &path, ModelProto &model, std::string &error) {
  try {
    if (loader.run(model))
      return true;
    error = loader.error;
  } catch (const std::exception &e) {
    // Anything libonnx or protobuf throws outside the guarded calls.
    error = path + ": " + e.what();
  }
  error = oneLine(error);
  return false;
}
} // namespace

std::string oneLine(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool loadOnnxModel(const std::string &path, const LoadOptions &options,
                   ModelProto &model, std::string &error) {
  Loader loader(path, options);
  return load(loader, path, model, error);
}

bool loadOnnxModelFromMemory(const std::string &bytes, const std::string &name,
                             const LoadOptions &options, ModelProto &model,
                             std::string &error) {
  Loader loader(name, &bytes, options);
  return load(loader, name, model, error);
}

std::string nodeLabel(const NodeProto &node) {
  std::string label;
  if (!node.name().empty())
    label = "node '" + node.name() + "'";
  else if (node.output_size() > 0)
    label = "node with output '" + node.output(0) + "'";
  else
    label = "unnamed node";
  return label + " (" + node.op_type() + ")";
}

bool parseInputValue(const std::string &text, std::string &name, std::string &value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

bool parseInputShape(const std::string &text, std::string &name,
                     std::vector<int64_t> &dims) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  name = text.substr(0, eq);
  dims.clear();
  std::string rest = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t x = rest.find('x', pos);
    std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 18)
      return false;
    dims.push_back(std::stoll(part));
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  return true;
}

} // namespace kiln
