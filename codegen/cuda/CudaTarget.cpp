//===- CudaTarget.cpp - The cuda target -----------------------------------===//
//
// This file implements the cuda target: its codegen pipeline and PTX writer
// (CudaCodegen.h) and its run writer. The generated runtime embeds the PTX, loads
// it once, and issues one launch per kernel stage, in plan order, with the geometry
// kiln-map-to-gpu recorded on the plan.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/GpuArch.h"
#include "codegen/emit/GeneratedCode.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

ArrayAttr gpuStagesOf(LaunchOp launch, std::string &error) {
  std::optional<ArrayAttr> stages = launch.getGpuStages();
  if (!stages)
    error = "kernel " + launch.getKernel().str() +
            " has no gpu stages (the cuda codegen phase did not run)";
  return stages ? *stages : ArrayAttr();
}

namespace {

/// The kiln_model object, create and run of the cuda runtime (everything after the
/// launch list); the caller's tensors are device pointers in run_device.
const char *kCudaModel = R"(
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

class CudaTarget : public Target {
public:
  explicit CudaTarget(const TargetOptions &options) : options(options) {}

  StringRef getName() const override { return "cuda"; }

  void buildCodegenPipeline(OpPassManager &pm) const override {
    buildCudaCodegenPipeline(pm, options.gpuArch);
  }

  bool writeKernels(ModuleOp module, StringRef dir, KernelCode &code,
                    std::string &error) const override {
    if (!emitPtx(module, code.embedded, error))
      return false;
    code.bytes = static_cast<int64_t>(code.embedded.size());
    code.kind = "PTX";
    std::error_code ec;
    llvm::raw_fd_ostream os((dir + "/model.ptx").str(), ec);
    if (ec) {
      error = "cannot write " + (dir + "/model.ptx").str() + ": " + ec.message();
      return false;
    }
    os << code.embedded;
    return true;
  }

  bool writePrologue(llvm::raw_ostream &os, const EmitContext &,
                     std::string &) const override {
    os << "#include \"kiln/runtime/CudaRuntime.h\"\n\n";
    return true;
  }

  bool writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                std::string &error) const override;

private:
  TargetOptions options;
};

bool CudaTarget::writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                          std::string &error) const {
  PlanOp plan = ctx.plan;
  std::vector<std::string> functions;
  int64_t scratchBytes = maxScratchBytes(plan), numStreams = 1;
  plan.getBody().walk([&](LaunchOp l) {
    numStreams = std::max<int64_t>(numStreams, l.getStream() + 1);
  });
  // The PTX, embedded: the module is loaded once from memory.
  const std::string &ptx = ctx.code->embedded;
  os << "const char kPtx[] = ";
  for (size_t pos = 0; pos < ptx.size(); pos += 60000)
    os << "R\"KILNPTX(" << ptx.substr(pos, 60000) << ")KILNPTX\"\n    ";
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
    ArrayAttr stages = gpuStagesOf(l, error);
    if (!stages)
      return false;
    bool scratch = takesScratch(l);
    for (auto g : stages.getAsRange<GpuStageAttr>()) {
      ArrayRef<int64_t> grid = g.getGrid(), block = g.getBlock();
      ls << "  KILN_RUN(c.launch({" << functions.size() << ", {" << grid[0] << ", "
         << grid[1] << ", " << grid[2] << "}, {" << block[0] << ", " << block[1] << ", "
         << block[2] << "}, " << stream << "}, {" << launchArguments(l, io)
         << (scratch ? ", S" : "") << "}));\n";
      functions.push_back(g.getFunction().str());
    }
  }
  ls.flush();
  os << "const char *const kFunctions[] = {";
  for (size_t i = 0; i < functions.size(); ++i)
    os << (i ? ", " : "") << cString(functions[i]);
  if (functions.empty())
    os << "\"\"";
  os << "};\n";
  auto bytesList = [&](const char *name, const std::vector<TensorInterface> &list) {
    os << "const uint64_t " << name << "[] = {";
    for (size_t i = 0; i < list.size(); ++i)
      os << (i ? ", " : "") << list[i].bytes;
    os << (list.empty() ? "0};\n" : "};\n");
  };
  bytesList("kInputBytes", ctx.inputs);
  bytesList("kOutputBytes", ctx.outputs);
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
     << commonAbiFunctions() << kCudaModel;
  return true;
}

} // namespace

std::unique_ptr<Target> createCudaTarget(const TargetOptions &options, std::string &error) {
  if (!requireGpuArch(options.gpuArch, error))
    return nullptr;
  return std::make_unique<CudaTarget>(options);
}

} // namespace kiln
