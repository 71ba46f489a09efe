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

#include <algorithm>
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
  int64_t bytes; // dense, as the plan's memref holds it
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


/// The C ABI functions every target's model.cpp has in common (after kiln_model).
const char *kCommonAbi = R"(extern "C" {
__attribute__((visibility("default"))) int32_t kiln_model_abi_version(void) { return KILN_ABI_VERSION; }

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

static kiln::rt::Status checkArguments(const kiln_tensor *in, int32_t numIn, kiln_tensor *out,
                                       int32_t numOut) {
  kiln::rt::Status s = kiln::rt::checkTensors("input", in, numIn, kInputs, kNumInputs);
  if (s)
    s = kiln::rt::checkTensors("output", out, numOut, kOutputs, kNumOutputs);
  return s;
}
)";

/// The C++ expression of a plan buffer: `io(kind, index)` for inputs/outputs, the
/// weights (`W + offset`) and the arena (`A + offset`).
template <typename IoExpr>
std::string bufferExpr(Value v, IoExpr io) {
  Operation *def = v.getDefiningOp();
  if (auto in = dyn_cast<InputOp>(def))
    return io("in", in.getIndex());
  if (auto out = dyn_cast<OutputOp>(def))
    return io("out", out.getIndex());
  if (auto w = dyn_cast<WeightOp>(def))
    return "W + " + std::to_string(w.getOffset());
  auto s = cast<SliceOp>(def);
  return "A + " + std::to_string(s.getOffset());
}

int64_t copyBytes(CopyOp c) {
  auto type = cast<MemRefType>(c.getSource().getType());
  return type.getNumElements() * elementBytes(type.getElementType());
}

/// --embed-weights: model.weights as a read-only section of the model itself. Assemble
/// it with model.weights found by .incbin: from the artifact directory, or -Wa,-I,DIR.
const char *kWeightsAsm = R"(/* Generated by kiln: the weights built into the model (--embed-weights).
   Assemble from this directory, or with -Wa,-I,DIR, so that .incbin finds model.weights. */
	.section .rodata.kiln_weights,"a",@progbits
	.balign 64
	.globl kiln_embedded_weights
	.hidden kiln_embedded_weights
kiln_embedded_weights:
	.incbin "model.weights"
	.globl kiln_embedded_weights_end
	.hidden kiln_embedded_weights_end
kiln_embedded_weights_end:
	.section .note.GNU-stack,"",@progbits
)";

/// One gpu stage of a launch, as kiln-map-to-gpu recorded it on the plan (cuda and
/// cuda-sim): its function, geometry, whether it synchronizes (cuda-sim) and whether
/// it takes the scratch argument.
struct GpuStage {
  StringRef name;
  ArrayRef<int64_t> grid, block;
  bool sync = true, scratch = false;
};

/// The stages of `l`; false with `error` when the plan has none for it.
bool gpuStagesOf(PlanOp plan, LaunchOp l, SmallVectorImpl<GpuStage> &out, std::string &error) {
  auto stages = plan->getAttrOfType<DictionaryAttr>("kiln.gpu_stages");
  auto scratch = plan->getAttrOfType<DictionaryAttr>("kiln.gpu_scratch");
  auto list = stages ? stages.getAs<ArrayAttr>(l.getKernel()) : ArrayAttr();
  if (!list || !scratch) {
    error = "kernel " + l.getKernel().str() +
            " has no gpu stages (the cuda codegen phase did not run)";
    return false;
  }
  auto scratchOf = scratch.getAs<IntegerAttr>(l.getKernel());
  out.clear();
  for (Attribute a : list) {
    auto stage = cast<DictionaryAttr>(a);
    auto sync = stage.getAs<BoolAttr>("sync");
    out.push_back({stage.getAs<StringAttr>("name").getValue(),
                   stage.getAs<DenseI64ArrayAttr>("grid").asArrayRef(),
                   stage.getAs<DenseI64ArrayAttr>("block").asArrayRef(),
                   !sync || sync.getValue(), scratchOf && scratchOf.getInt() > 0});
  }
  return true;
}

/// The largest scratch any kernel of the plan needs (cuda and cuda-sim).
int64_t maxScratchBytes(PlanOp plan) {
  int64_t bytes = 0;
  if (auto scratch = plan->getAttrOfType<DictionaryAttr>("kiln.gpu_scratch"))
    for (NamedAttribute a : scratch)
      bytes = std::max<int64_t>(bytes, cast<IntegerAttr>(a.getValue()).getInt());
  return bytes;
}

/// Host: the model object owns host buffers; run calls each kernel in order.
/// cuda-sim (`simulate`): each kernel's gpu stages instead, each through the SIMT
/// simulator with the geometry kiln-map-to-gpu chose.
bool writeHostRun(llvm::raw_ostream &os, PlanOp plan, bool simulate, std::string &error) {
  os << "constexpr uint64_t kScratchBytes = " << maxScratchBytes(plan) << "ull;\n"
     << "} // namespace\n\n"
     << "struct kiln_model {\n  kiln::rt::AlignedBuffer arena, weights, scratch;\n"
     << "  std::string error;\n};\n\n"
     << kCommonAbi << R"(
__attribute__((visibility("default"))) kiln_model *kiln_model_create(const char *weightsPath) {
  kiln_model *m = new (std::nothrow) kiln_model();
  if (!m)
    return nullptr;
  kiln::rt::Status s = loadModelWeights(weightsPath, m->weights);
  if (s)
    s = m->arena.allocate(kArenaBytes);
  if (s)
    s = m->scratch.allocate(kScratchBytes);
  if (!s)
    m->error = s.message();
  return m;
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
  kiln::rt::Status s = checkArguments(in, numIn, out, numOut);
  if (!s) {
    m->error = s.message();
    return -1;
  }
  char *A = m->arena.data.get();
  char *W = m->weights.data.get();
  char *S = m->scratch.data.get();
  (void)A;
  (void)W;
  (void)S;
)";
  auto io = [](const char *kind, int64_t i) {
    return std::string(kind) + "[" + std::to_string(i) + "].data";
  };
  for (Operation &op : plan.getBody().front()) {
    auto l = dyn_cast<LaunchOp>(op);
    if (l && !simulate) {
      os << "  " << l.getKernel() << "(";
      for (auto [i, v] : llvm::enumerate(l.getBuffers()))
        os << (i ? ", " : "") << bufferExpr(v, io);
      os << ");\n";
    } else if (l) {
      SmallVector<GpuStage> stages;
      if (!gpuStagesOf(plan, l, stages, error))
        return false;
      for (const GpuStage &g : stages) {
        os << "  s = kiln::rt::simLaunch(\"" << g.name << "\", {" << g.grid[0] << ", "
           << g.grid[1] << ", " << g.grid[2] << "}, {" << g.block[0] << ", " << g.block[1]
           << ", " << g.block[2] << "}, " << (g.sync ? "true" : "false") << ", [&] { "
           << g.name << "(";
        for (auto [i, v] : llvm::enumerate(l.getBuffers()))
          os << (i ? ", " : "") << bufferExpr(v, io);
        if (g.scratch)
          os << ", S";
        os << "); });\n  if (!s) {\n    m->error = s.message();\n    return -1;\n  }\n";
      }
    } else if (auto c = dyn_cast<CopyOp>(op)) {
      os << "  std::memcpy(" << bufferExpr(c.getTarget(), io) << ", "
         << bufferExpr(c.getSource(), io) << ", " << copyBytes(c) << ");\n";
    }
  }
  os << R"(  m->error.clear();
  return 0;
}

__attribute__((visibility("default"))) int32_t kiln_model_run_device(kiln_model *m, const kiln_tensor *in, int32_t numIn,
                                                                      kiln_tensor *out, int32_t numOut, void *) {
  return kiln_model_run(m, in, numIn, out, numOut);
}
)";
  return true;
}

/// Cuda: the model object owns a CudaModel; run issues one launch per kernel
/// stage on the plan's streams, with the geometry kiln-map-to-gpu chose.
bool writeCudaRun(llvm::raw_ostream &os, PlanOp plan, const std::vector<Interface> &inputs,
                  const std::vector<Interface> &outputs, const EmitOptions &options,
                  std::string &error) {
  std::vector<std::string> functions;
  int64_t scratchBytes = maxScratchBytes(plan), numStreams = 1;
  plan.getBody().walk([&](LaunchOp l) {
    numStreams = std::max<int64_t>(numStreams, l.getStream() + 1);
  });
  // The PTX, embedded: the module is loaded once from memory.
  os << "const char kPtx[] = ";
  for (size_t pos = 0; pos < options.ptx.size(); pos += 60000)
    os << "R\"KILNPTX(" << options.ptx.substr(pos, 60000) << ")KILNPTX\"\n    ";
  os << ";\n";
  std::string launches;
  llvm::raw_string_ostream ls(launches);
  auto io = [](const char *kind, int64_t i) {
    return std::string(kind) + "[" + std::to_string(i) + "]";
  };
  int lastStream = 0;
  for (Operation &op : plan.getBody().front()) {
    auto l = dyn_cast<LaunchOp>(op);
    auto c = dyn_cast<CopyOp>(op);
    if (!l && !c)
      continue;
    int stream = l ? static_cast<int>(l.getStream()) : lastStream;
    if (stream != lastStream)
      ls << "  KILN_RUN(c.crossStream(" << lastStream << ", " << stream << "));\n";
    lastStream = stream;
    if (c) {
      ls << "  KILN_RUN(c.copy(" << bufferExpr(c.getTarget(), io) << ", "
         << bufferExpr(c.getSource(), io) << ", " << copyBytes(c) << ", " << stream
         << "));\n";
      continue;
    }
    SmallVector<GpuStage> stages;
    if (!gpuStagesOf(plan, l, stages, error))
      return false;
    for (const GpuStage &g : stages) {
      ls << "  KILN_RUN(c.launch({" << functions.size() << ", {" << g.grid[0] << ", "
         << g.grid[1] << ", " << g.grid[2] << "}, {" << g.block[0] << ", " << g.block[1]
         << ", " << g.block[2] << "}, " << stream << "}, {";
      for (auto [i, v] : llvm::enumerate(l.getBuffers()))
        ls << (i ? ", " : "") << bufferExpr(v, io);
      if (g.scratch)
        ls << ", S";
      ls << "}));\n";
      functions.push_back(g.name.str());
    }
  }
  ls.flush();
  os << "const char *const kFunctions[] = {";
  for (size_t i = 0; i < functions.size(); ++i)
    os << (i ? ", " : "") << cString(functions[i]);
  if (functions.empty())
    os << "\"\"";
  os << "};\n";
  auto bytesList = [&](const char *name, const std::vector<Interface> &list) {
    os << "const uint64_t " << name << "[] = {";
    for (size_t i = 0; i < list.size(); ++i)
      os << (i ? ", " : "") << list[i].bytes;
    os << (list.empty() ? "0};\n" : "};\n");
  };
  bytesList("kInputBytes", inputs);
  bytesList("kOutputBytes", outputs);
  os << "constexpr int kNumFunctions = " << functions.size() << ";\n"
     << "constexpr uint64_t kScratchBytes = " << scratchBytes << "ull;\n"
     << "constexpr int kNumStreams = " << numStreams << ";\n"
     << "constexpr bool kUseGraph = " << (options.cudaGraph ? "true" : "false") << ";\n"
     << "using kiln::rt::CUdeviceptr;\n\n"
     << "#define KILN_RUN(x)                                                   \\\n"
     << "  do {                                                            \\\n"
     << "    kiln::rt::Status s_ = (x);                                    \\\n"
     << "    if (!s_)                                                      \\\n"
     << "      return s_;                                                  \\\n"
     << "  } while (0)\n\n"
     << "/// Every launch of one run, in plan order.\n"
     << "kiln::rt::Status issue(kiln::rt::CudaModel &c, const CUdeviceptr *in,\n"
     << "                       const CUdeviceptr *out) {\n"
     << "  const CUdeviceptr A = c.arena(), W = c.weights(), S = c.scratch();\n"
     << "  (void)A;\n  (void)W;\n  (void)S;\n  (void)in;\n  (void)out;\n"
     << launches << "  return kiln::rt::Status::ok();\n}\n"
     << "} // namespace\n\n"
     << "struct kiln_model {\n  kiln::rt::CudaModel cuda;\n  bool loaded = false;\n"
     << "  std::string error;\n};\n\n"
     << kCommonAbi << R"(
__attribute__((visibility("default"))) kiln_model *kiln_model_create(const char *weightsPath) {
  kiln_model *m = new (std::nothrow) kiln_model();
  if (!m)
    return nullptr;
  kiln::rt::AlignedBuffer weights;
  kiln::rt::Status s = loadModelWeights(weightsPath, weights);
  if (s) {
    kiln::rt::CudaModel::Config config;
    config.ptx = kPtx;
    config.functions = kFunctions;
    config.numFunctions = kNumFunctions;
    config.arenaBytes = kArenaBytes;
    config.scratchBytes = kScratchBytes;
    config.numStreams = kNumStreams;
    config.useGraph = kUseGraph;
    config.inputBytes.assign(kInputBytes, kInputBytes + kNumInputs);
    config.outputBytes.assign(kOutputBytes, kOutputBytes + kNumOutputs);
    s = m->cuda.init(config, weights.data.get(), kWeightBytes);
  }
  if (!s)
    m->error = s.message();
  m->loaded = static_cast<bool>(s);
  return m;
}

static int32_t runOn(kiln_model *m, const kiln_tensor *in, int32_t numIn, kiln_tensor *out,
                     int32_t numOut, bool staged, void *stream) {
  if (!m)
    return -1;
  if (!m->loaded) {
    if (m->error.empty())
      m->error = "the model failed to load";
    return -1;
  }
  kiln::rt::Status s = checkArguments(in, numIn, out, numOut);
  // Kernels take every buffer as 16-byte aligned (vector loads and stores).
  for (int32_t i = 0; s && !staged && i < kNumInputs + kNumOutputs; ++i) {
    const kiln_tensor &t = i < kNumInputs ? in[i] : out[i - kNumInputs];
    if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
      s = kiln::rt::Status::error(std::string(i < kNumInputs ? "input '" : "output '") +
                                  (i < kNumInputs ? kInputs[i] : kOutputs[i - kNumInputs]).name +
                                  "': device pointer is not 16-byte aligned");
  }
  CUdeviceptr inPtrs[kNumInputs + 1], outPtrs[kNumOutputs + 1];
  std::vector<CUdeviceptr> bindings;
  for (int32_t i = 0; s && i < kNumInputs; ++i) {
    inPtrs[i] = staged ? m->cuda.stagedInput(i) : reinterpret_cast<CUdeviceptr>(in[i].data);
    if (staged)
      s = m->cuda.upload(i, in[i].data);
    bindings.push_back(inPtrs[i]);
  }
  for (int32_t i = 0; s && i < kNumOutputs; ++i) {
    outPtrs[i] = staged ? m->cuda.stagedOutput(i) : reinterpret_cast<CUdeviceptr>(out[i].data);
    bindings.push_back(outPtrs[i]);
  }
  auto caller = staged ? nullptr : static_cast<kiln::rt::CUstream>(stream);
  if (s)
    s = m->cuda.run(caller, bindings, [&] { return issue(m->cuda, inPtrs, outPtrs); });
  for (int32_t i = 0; s && staged && i < kNumOutputs; ++i)
    s = m->cuda.download(i, out[i].data);
  if (s && staged)
    s = m->cuda.synchronize();
  if (!s) {
    m->error = s.message();
    return -1;
  }
  m->error.clear();
  return 0;
}

__attribute__((visibility("default"))) int32_t kiln_model_run(kiln_model *m, const kiln_tensor *in, int32_t numIn,
                                                               kiln_tensor *out, int32_t numOut) {
  return runOn(m, in, numIn, out, numOut, /*staged=*/true, nullptr);
}

__attribute__((visibility("default"))) int32_t kiln_model_run_device(kiln_model *m, const kiln_tensor *in, int32_t numIn,
                                                                      kiln_tensor *out, int32_t numOut, void *stream) {
  return runOn(m, in, numIn, out, numOut, /*staged=*/false, stream);
}
)";
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
    i.bytes = type.getNumElements() * elementBytes(type.getElementType());
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
  /// A model compiled with --embed-weights: its weights are built in.
  Model() : model(kiln_model_create(nullptr)) {}
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
  /// Runs on tensors in the target's memory (cuda: device pointers, enqueued on
  /// `stream`, a CUstream or nullptr).
  bool runDevice(const kiln_tensor *inputs, int32_t numInputs, kiln_tensor *outputs,
                 int32_t numOutputs, void *stream = nullptr) {
    return model && kiln_model_run_device(model, inputs, numInputs, outputs, numOutputs,
                                          stream) == 0;
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

  // model.cpp: the interface tables, then the target's half.
  std::string cpp;
  llvm::raw_string_ostream os(cpp);
  os << "// Generated by kiln. Do not edit.\n#include \"model.h\"\n"
     << (options.cuda ? "#include \"kiln/runtime/CudaRuntime.h\"\n" : "")
     << (options.simulate ? "#include \"kiln/runtime/SimRuntime.h\"\n" : "")
     << "#include \"kiln/runtime/ModelSupport.h\"\n\n"
     << "#include <cstring>\n#include <new>\n#include <string>\n#include <vector>\n\n";
  if (!options.cuda) {
    // One declaration per kernel (cuda-sim: per gpu stage), in first-launch order,
    // with its argument count.
    llvm::MapVector<StringRef, unsigned> kernels;
    SmallVector<GpuStage> stages;
    bool stagesOk = true;
    plan.getBody().walk([&](LaunchOp l) {
      unsigned args = l.getBuffers().size();
      if (!options.simulate) {
        kernels.insert({l.getKernel(), args});
        return;
      }
      stagesOk = stagesOk && gpuStagesOf(plan, l, stages, error);
      for (const GpuStage &g : stages)
        kernels.insert({g.name, args + (g.scratch ? 1 : 0)});
    });
    if (!stagesOk)
      return false;
    os << "extern \"C\" {\n";
    for (const auto &[k, args] : kernels) {
      os << "void " << k << "(";
      for (unsigned i = 0; i < args; ++i)
        os << (i ? ", " : "") << "void *";
      os << ");\n";
    }
    os << "}\n\n";
  }
  os << "namespace {\n";
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
     << "constexpr uint64_t kWeightsChecksum = " << checksum << "ull;\n";
  // The weights: from the file the caller names, or (--embed-weights) from the image
  // model_weights.S builds in when the caller names none.
  if (options.embedWeights)
    os << "} // namespace\nextern \"C\" const char kiln_embedded_weights[], "
          "kiln_embedded_weights_end[];\nnamespace {\n";
  os << "kiln::rt::Status loadModelWeights(const char *path, kiln::rt::AlignedBuffer &out) {\n";
  if (options.embedWeights)
    os << "  if (!path || !*path)\n"
          "    return kiln::rt::loadWeightsImage(\n"
          "        kiln_embedded_weights,\n"
          "        static_cast<uint64_t>(kiln_embedded_weights_end - kiln_embedded_weights),\n"
          "        \"the embedded weights\", kWeightBytes, kWeightsChecksum, out);\n";
  os << "  return kiln::rt::loadWeights(path ? path : \"\", kWeightBytes, kWeightsChecksum, "
        "out);\n}\n";
  bool ok = options.cuda ? writeCudaRun(os, plan, inputs, outputs, options, error)
                         : writeHostRun(os, plan, options.simulate, error);
  if (!ok)
    return false;
  os << "} // extern \"C\"\n";
  os.flush();
  if (!writeFile(options.outputDir + "/model.cpp", cpp, error))
    return false;
  if (options.cuda && !writeFile(options.outputDir + "/model.ptx", options.ptx, error))
    return false;
  if (options.embedWeights && !writeFile(options.outputDir + "/model_weights.S", kWeightsAsm,
                                         error))
    return false;

  if (!options.buildLibrary)
    return true;
  // libmodel.so: model.cpp (+ the host kernels' object) + kiln_runtime; only the C ABI is
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
      options.outputDir + "/model.cpp"};
  if (!options.cuda)
    args.push_back(options.objectFile);
  if (options.embedWeights) {
    args.push_back("-Wa,-I," + options.outputDir); // where .incbin finds model.weights
    args.push_back(options.outputDir + "/model_weights.S");
  }
  for (std::string a : {options.runtimeLibrary, "-Wl,--version-script=" + mapFile,
                        std::string("-lm"), std::string("-ldl"), std::string("-o"),
                        options.outputDir + "/libmodel.so"})
    args.push_back(a);
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
