//===- Emitter.cpp - Write the artifact directory -------------------------===//
//
// This file implements the emitter. The generated C++ holds no loops and
// interprets nothing: one checked call per launch, in plan order, with the
// buffers' arena/weight offsets baked in. Argument checks and weight loading live
// in kiln_runtime (ModelSupport), so the generated file stays short.
//
//===----------------------------------------------------------------------===//
#include "codegen/emit/Emitter.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

/// ONNX data type code of an element type (`kiln.element_type` keeps signedness).
int dtypeCode(Type t) {
  if (t.isF32()) return 1;
  if (t.isF16()) return 10;
  if (t.isBF16()) return 16;
  if (t.isF64()) return 11;
  if (t.isInteger(1)) return 9;
  auto i = dyn_cast<IntegerType>(t);
  if (!i) return 0;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 8: return u ? 2 : 3;
  case 16: return u ? 4 : 5;
  case 32: return u ? 12 : 6;
  case 64: return u ? 13 : 7;
  default: return 0;
  }
}

int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// Appends `value`'s bytes (expanded if splat, one byte per bool) to `out`.
bool appendElements(ElementsAttr value, std::vector<char> &out, std::string &error) {
  auto type = cast<ShapedType>(value.getType());
  Type elem = type.getElementType();
  int64_t n = type.getNumElements(), size = elementBytes(elem);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || static_cast<int64_t>(blob->getData().size()) != n * size) {
      error = "weight resource has no data of the expected size";
      return false;
    }
    out.insert(out.end(), blob->getData().begin(), blob->getData().end());
    return true;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense) {
    error = "unsupported weight attribute";
    return false;
  }
  if (elem.isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      out.push_back(v ? 1 : 0);
    return true;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i)
      out.insert(out.end(), raw.begin(), raw.begin() + size);
    return true;
  }
  out.insert(out.end(), raw.begin(), raw.end());
  return true;
}

uint64_t fnv1a64(const std::vector<char> &data) {
  uint64_t h = 1469598103934665603ull;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

struct Interface {
  std::string name;
  int dtype;
  std::vector<int64_t> shape;
};

bool writeFile(const std::string &path, const std::string &text, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << text;
  return true;
}

} // namespace

bool emitArtifacts(ModuleOp module, const EmitOptions &options, std::string &error) {
  PlanOp plan;
  module.walk([&](PlanOp p) { plan = p; });
  if (!plan) {
    error = "no kiln.plan to emit";
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputDir)) {
    error = "cannot create " + options.outputDir + ": " + ec.message();
    return false;
  }

  // The interface, from the plan's inputs/outputs and the recorded ONNX types.
  auto argAttrs = plan->getAttrOfType<ArrayAttr>("kiln.arg_attrs");
  auto resAttrs = plan->getAttrOfType<ArrayAttr>("kiln.res_attrs");
  int64_t numOutputs = plan->getAttrOfType<IntegerAttr>("kiln.num_outputs").getInt();
  std::vector<Interface> inputs(argAttrs ? argAttrs.size() : 0), outputs(numOutputs);
  auto fill = [&](std::vector<Interface> &list, int64_t index, StringRef name,
                  MemRefType type, ArrayAttr attrs) {
    Interface &i = list[index];
    i.name = name.str();
    Type elem = type.getElementType();
    if (attrs && index < static_cast<int64_t>(attrs.size()))
      if (auto d = dyn_cast<DictionaryAttr>(attrs[index]))
        if (auto t = d.getAs<TypeAttr>("kiln.element_type"))
          elem = t.getValue();
    i.dtype = dtypeCode(elem);
    i.shape.assign(type.getShape().begin(), type.getShape().end());
  };
  plan.getBody().walk([&](InputOp in) {
    fill(inputs, in.getIndex(), in.getName(), cast<MemRefType>(in.getType()), argAttrs);
  });
  plan.getBody().walk([&](OutputOp out) {
    fill(outputs, out.getIndex(), out.getName(), cast<MemRefType>(out.getType()), resAttrs);
  });

  // Weights blob.
  int64_t weightBytes = static_cast<int64_t>(plan.getWeightBytes());
  std::vector<char> weights(static_cast<size_t>(weightBytes), 0);
  bool weightsOk = true;
  plan.getBody().walk([&](WeightOp w) {
    std::vector<char> bytes;
    if (!weightsOk || !appendElements(w.getValue(), bytes, error)) {
      weightsOk = false;
      return;
    }
    std::memcpy(weights.data() + w.getOffset(), bytes.data(), bytes.size());
  });
  if (!weightsOk)
    return false;
  uint64_t checksum = fnv1a64(weights);
  {
    std::string text(64, '\0');
    std::memcpy(text.data(), "KILNWTS1", 8);
    uint64_t size = static_cast<uint64_t>(weightBytes);
    std::memcpy(text.data() + 8, &size, 8);
    std::memcpy(text.data() + 16, &checksum, 8);
    text.append(weights.begin(), weights.end());
    if (!writeFile(options.outputDir + "/model.weights", text, error))
      return false;
  }

  // model.h
  std::string header = R"(// Generated by kiln. Do not edit.
//
// The model's C ABI (kiln/runtime/model_abi.h) and a small C++ owner for it.
#pragma once
#include "kiln/runtime/model_abi.h"

#ifdef __cplusplus
#include <string>

namespace kiln {
/// Owns a loaded model: Model m("model.weights"); if (!m.ok()) m.error();
class Model {
public:
  explicit Model(const std::string &weightsPath)
      : model(kiln_model_create(weightsPath.c_str())) {}
  ~Model() { kiln_model_destroy(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  bool ok() const { return model && !kiln_model_error(model); }
  std::string error() const {
    const char *e = model ? kiln_model_error(model) : "out of memory";
    return e ? e : "";
  }
  /// Runs on the caller's tensors; false with error() on a mismatch.
  bool run(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
           int32_t numOutputs) {
    return model && kiln_model_run(model, inputs, numInputs, outputs, numOutputs) == 0;
  }
  kiln_model *get() const { return model; }

private:
  kiln_model *model;
};
} // namespace kiln
#endif
)";
  if (!writeFile(options.outputDir + "/model.h", header, error))
    return false;

  // model.cpp
  std::string cpp;
  llvm::raw_string_ostream os(cpp);
  os << "// Generated by kiln. Do not edit.\n"
     << "#include \"model.h\"\n#include \"kiln/runtime/ModelSupport.h\"\n\n"
     << "#include <cstring>\n#include <new>\n#include <string>\n\n";
  // One declaration per kernel, in first-launch order, with its buffer count.
  llvm::MapVector<StringRef, unsigned> kernels;
  plan.getBody().walk([&](LaunchOp l) {
    kernels.insert({l.getKernel(), l.getBuffers().size()});
  });
  os << "extern \"C\" {\n";
  for (const auto &[k, args] : kernels) {
    os << "void " << k << "(";
    for (unsigned i = 0; i < args; ++i)
      os << (i ? ", " : "") << "void *";
    os << ");\n";
  }
  os << "}\n\nnamespace {\n";
  auto emitInfos = [&](const char *name, const std::vector<Interface> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      os << "const int64_t " << name << "Shape" << i << "[] = {";
      for (size_t d = 0; d < list[i].shape.size(); ++d)
        os << (d ? ", " : "") << list[i].shape[d];
      if (list[i].shape.empty())
        os << "0";
      os << "};\n";
    }
    os << "const kiln_tensor_info " << name << "[] = {\n";
    for (size_t i = 0; i < list.size(); ++i)
      os << "    {" << cString(list[i].name) << ", " << list[i].dtype << ", "
         << list[i].shape.size() << ", " << name << "Shape" << i << "},\n";
    if (list.empty())
      os << "    {\"\", 0, 0, nullptr},\n";
    os << "};\n";
  };
  emitInfos("kInputs", inputs);
  emitInfos("kOutputs", outputs);
  os << "constexpr int32_t kNumInputs = " << inputs.size() << ";\n"
     << "constexpr int32_t kNumOutputs = " << outputs.size() << ";\n"
     << "constexpr uint64_t kArenaBytes = " << plan.getArenaBytes() << "ull;\n"
     << "constexpr uint64_t kWeightBytes = " << weightBytes << "ull;\n"
     << "constexpr uint64_t kWeightsChecksum = " << checksum << "ull;\n"
     << "} // namespace\n\n";
  os << R"(struct kiln_model {
  kiln::rt::AlignedBuffer arena, weights;
  std::string error;
};

extern "C" {
__attribute__((visibility("default"))) int32_t kiln_model_abi_version(void) { return KILN_ABI_VERSION; }

__attribute__((visibility("default"))) kiln_model *kiln_model_create(const char *weightsPath) {
  kiln_model *m = new (std::nothrow) kiln_model();
  if (!m)
    return nullptr;
  kiln::rt::Status s = kiln::rt::loadWeights(weightsPath ? weightsPath : "", kWeightBytes,
                                             kWeightsChecksum, m->weights);
  if (s)
    s = m->arena.allocate(kArenaBytes);
  if (!s)
    m->error = s.message();
  return m;
}

__attribute__((visibility("default"))) void kiln_model_destroy(kiln_model *m) { delete m; }

__attribute__((visibility("default"))) const char *kiln_model_error(const kiln_model *m) {
  if (!m)
    return "no model";
  return m->error.empty() ? nullptr : m->error.c_str();
}

__attribute__((visibility("default"))) int32_t kiln_model_num_inputs(const kiln_model *) { return kNumInputs; }
__attribute__((visibility("default"))) int32_t kiln_model_num_outputs(const kiln_model *) { return kNumOutputs; }

__attribute__((visibility("default"))) int32_t kiln_model_input_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumInputs || !info)
    return -1;
  *info = kInputs[i];
  return 0;
}

__attribute__((visibility("default"))) int32_t kiln_model_output_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumOutputs || !info)
    return -1;
  *info = kOutputs[i];
  return 0;
}

__attribute__((visibility("default"))) int32_t kiln_model_run(kiln_model *m, const kiln_tensor *in, int32_t numIn,
                                                               kiln_tensor *out, int32_t numOut) {
  if (!m)
    return -1;
  if (!m->arena.data) {
    if (m->error.empty())
      m->error = "the model failed to load";
    return -1;
  }
  kiln::rt::Status s = kiln::rt::checkTensors("input", in, numIn, kInputs, kNumInputs);
  if (s)
    s = kiln::rt::checkTensors("output", out, numOut, kOutputs, kNumOutputs);
  if (!s) {
    m->error = s.message();
    return -1;
  }
  char *A = m->arena.data.get();
  char *W = m->weights.data.get();
  (void)A;
  (void)W;
)";
  // Launches and copies in plan order.
  auto bufferExpr = [&](Value v) -> std::string {
    Operation *def = v.getDefiningOp();
    if (auto in = dyn_cast<InputOp>(def))
      return "in[" + std::to_string(in.getIndex()) + "].data";
    if (auto out = dyn_cast<OutputOp>(def))
      return "out[" + std::to_string(out.getIndex()) + "].data";
    if (auto w = dyn_cast<WeightOp>(def))
      return "W + " + std::to_string(w.getOffset());
    auto s = cast<SliceOp>(def);
    return "A + " + std::to_string(s.getOffset());
  };
  for (Operation &op : plan.getBody().front()) {
    if (auto l = dyn_cast<LaunchOp>(op)) {
      os << "  " << l.getKernel() << "(";
      for (auto [i, v] : llvm::enumerate(l.getBuffers()))
        os << (i ? ", " : "") << bufferExpr(v);
      os << ");\n";
    } else if (auto c = dyn_cast<CopyOp>(op)) {
      auto type = cast<MemRefType>(c.getSource().getType());
      os << "  std::memcpy(" << bufferExpr(c.getTarget()) << ", "
         << bufferExpr(c.getSource()) << ", "
         << type.getNumElements() * elementBytes(type.getElementType()) << ");\n";
    }
  }
  os << "  m->error.clear();\n  return 0;\n}\n} // extern \"C\"\n";
  os.flush();
  if (!writeFile(options.outputDir + "/model.cpp", cpp, error))
    return false;

  if (!options.buildLibrary)
    return true;
  // libmodel.so: model.cpp + the kernels' object + kiln_runtime; only the C ABI is
  // exported.
  std::string mapFile = options.outputDir + "/model.exports";
  if (!writeFile(mapFile, "{ global: kiln_model_*; local: *; };\n", error))
    return false;
  auto compiler = llvm::sys::findProgramByName(options.compiler);
  if (!compiler) {
    error = "cannot find the C++ compiler '" + options.compiler + "' to build libmodel.so";
    return false;
  }
  std::vector<std::string> args = {
      *compiler, "-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
      "-I" + options.runtimeIncludeDir, "-I" + options.outputDir,
      options.outputDir + "/model.cpp", options.objectFile, options.runtimeLibrary,
      "-Wl,--version-script=" + mapFile, "-lm", "-o",
      options.outputDir + "/libmodel.so"};
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string log = options.outputDir + "/build.log";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    error = "building libmodel.so failed (see " + log + ")" +
            (execError.empty() ? "" : ": " + execError);
    return false;
  }
  return true;
}

} // namespace kiln
