//===- CudaTarget.cpp - The cuda target -----------------------------------===//
//
// This file implements the cuda target: its codegen pipeline and PTX writer
// (CudaCodegen.h) and its run writer. The generated runtime embeds the PTX, loads
// it once, and issues one launch per kernel stage, in plan order, with the geometry
// kiln-map-to-gpu recorded on the plan.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"

#include <cstdlib>
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/GpuTarget.h"
#include "codegen/emit/GeneratedCode.h"
#include "passes/plan/PlanAnalysis.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

namespace {

class CudaTarget : public GpuTarget {
public:
  using GpuTarget::GpuTarget;

  StringRef getName() const override { return "cuda"; }
  StringRef getLibraryEngine() const override { return "cuda"; }

  void buildCodegenPipeline(OpPassManager &pm) const override {
    buildCudaCodegenPipeline(pm, options.gpu.takeCachedKernels ? kernelCacheDir() : "");
  }

  bool writeKernels(ModuleOp module, StringRef dir, KernelCode &code,
                    std::string &error) const override {
    // ptxas -v costs as much again as the PTX itself: run for a report, or where
    // KILN_PTXAS names one.
    bool assemble = code.wantResources || std::getenv("KILN_PTXAS");
    if (!emitPtx(module, code.embedded, error, assemble ? &code.resources : nullptr,
                 &code.resourcesFrom))
      return false;
    if (!assemble)
      code.resourcesFrom = "not assembled (ask for --report, or set KILN_PTXAS)";
    // Each kernel's block size (its launches' #kiln.gpu_stage), the occupancy its
    // resources allow; a tensor-core kernel that spills is worth a warning.
    llvm::StringMap<int64_t> blockThreads;
    module.walk([&](LaunchOp l) {
      if (std::optional<ArrayAttr> stages = l.getGpuStages())
        for (auto stage : stages->getAsRange<GpuStageAttr>()) {
          ArrayRef<int64_t> block = stage.getBlock();
          blockThreads[stage.getFunction().getValue()] = block[0] * block[1] * block[2];
        }
    });
    for (KernelResources &r : code.resources) {
      r.blockThreads = blockThreads.lookup(r.name);
      r.occupancy = kiln::occupancy(arch, r.blockThreads, r.registers, r.sharedBytes);
      if (r.tensorCores && (r.spillStores || r.spillLoads))
        llvm::errs() << "kiln: warning: tensor-core kernel " << r.name << " spills ("
                     << r.spillStores << " bytes stored, " << r.spillLoads
                     << " loaded: ptxas -v, " << arch.name << ")\n";
    }
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
    os << "#include \"kiln/runtime/CudaModel.h\"\n\n";
    return true;
  }

  bool writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                std::string &error) const override;
};

/// One launch (its stages, or its library call with them as the fallback), copy,
/// record or wait of the run, appending the launches' functions to `functions`.
bool writeCudaOp(llvm::raw_ostream &ls, Operation &op, IoExpr io,
                 const llvm::DenseMap<Operation *, int64_t> &libraryIndex,
                 std::vector<std::string> &functions, std::string &error) {
  if (auto r = dyn_cast<RecordOp>(op)) {
    ls << "  KILN_RUN(c.record(" << r.getEvent() << ", " << r.getStream() << "));\n";
  } else if (auto w = dyn_cast<WaitOp>(op)) {
    ls << "  KILN_RUN(c.wait(" << w.getEvent() << ", " << w.getStream() << "));\n";
  } else if (auto c = dyn_cast<CopyOp>(op)) {
    ls << "  KILN_RUN(c.copy(" << bufferExpr(c.getTarget(), io) << ", "
       << bufferExpr(c.getSource(), io) << ", " << copyBytes(c) << ", " << c.getStream()
       << "));\n";
  } else if (auto l = dyn_cast<LaunchOp>(op)) {
    ArrayAttr stages = gpuStagesOf(l, error);
    if (!stages)
      return false;
    // A library call runs, or says it cannot: then its kernels do.
    auto library = libraryIndex.find(&op);
    if (library != libraryIndex.end()) {
      ArrayRef<int64_t> operands = l.getLibraryAttr().getOperands();
      ls << "  {\n    bool ran = false;\n    KILN_RUN(c.library(" << library->second
         << ", kLibrary" << library->second << ", {";
      for (int i = 0; i < 5; ++i)
        ls << (i ? ", " : "")
           << (operands[i] < 0 ? std::string("0") : bufferExpr(l.getBuffers()[operands[i]], io));
      ls << "}, " << l.getStream() << ", ran));\n    if (!ran) {\n";
    }
    for (auto g : stages.getAsRange<GpuStageAttr>()) {
      ArrayRef<int64_t> grid = g.getGrid(), block = g.getBlock();
      ls << (library != libraryIndex.end() ? "    " : "")
         << "  KILN_RUN(c.launch({" << functions.size() << ", {" << grid[0] << ", "
         << grid[1] << ", " << grid[2] << "}, {" << block[0] << ", " << block[1] << ", "
         << block[2] << "}, " << l.getStream() << "}, {" << launchArguments(l, io)
         << "}));\n";
      functions.push_back(g.getFunction().str());
    }
    if (library != libraryIndex.end())
      ls << "    }\n  }\n";
  }
  return true;
}

bool CudaTarget::writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                          std::string &error) const {
  PlanOp plan = ctx.plan;
  std::vector<std::string> functions;
  int64_t numStreams = 1, numEvents = 0;
  for (Operation &op : plan.getBody().front()) {
    if (auto l = dyn_cast<LaunchOp>(op))
      numStreams = std::max<int64_t>(numStreams, l.getStream() + 1);
    else if (auto r = dyn_cast<RecordOp>(op))
      numEvents = std::max<int64_t>(numEvents, r.getEvent() + 1);
  }
  // The PTX, embedded: the module is loaded once from memory.
  const std::string &ptx = ctx.code->embedded;
  os << "const char kPtx[] = ";
  for (size_t pos = 0; pos < ptx.size(); pos += 60000)
    os << "R\"KILNPTX(" << ptx.substr(pos, 60000) << ")KILNPTX\"\n    ";
  os << ";\n";
  // Library calls: their descriptions, and each stream's workspace.
  llvm::DenseMap<Operation *, int64_t> libraryIndex = writeLibraryCalls(os, plan);
  uint64_t workspace = libraryIndex.empty() ? 0 : arch.libraryWorkspaceBytes;
  os << "constexpr uint64_t kLibraryWorkspaceBytes = " << workspace << ";\n"
     << "constexpr bool kAllowTf32 = " << (options.gpu.allowTf32 ? "true" : "false") << ";\n";
  std::string launches;
  llvm::raw_string_ostream ls(launches);
  auto io = [](const char *kind, int64_t i) {
    return std::string(kind) + "[" + std::to_string(i) + "]";
  };
  // A branch of an If runs where its conditions hold: each is read once per run,
  // on the stream of the first op it guards, which has waited for its producer
  // (a synchronization: no CUDA graph can hold it).
  llvm::DenseMap<Value, int64_t> guardIndex;
  for (Operation &op : plan.getBody().front()) {
    std::string close = openGuards(
        ls, &op, io, guardIndex,
        [&](llvm::raw_ostream &os, int64_t k, const std::string &pointer, bool value) {
          os << "  if (f" << k << " < 0)\n    KILN_RUN(c.flag(" << pointer << ", "
             << streamOf(&op) << ", f" << k << "));\n  if (f" << k
             << (value ? " == 1" : " == 0") << ") {\n";
        });
    if (!close.empty() && options.gpu.cudaGraph) {
      error = "--cuda-graph: the plan branches on the host (an If decided at run time), "
              "which a CUDA graph cannot hold; compile without --cuda-graph";
      return false;
    }
    if (!writeCudaOp(ls, op, io, libraryIndex, functions, error))
      return false;
    ls << close;
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
     << "constexpr int kNumStreams = " << numStreams << ";\n"
     << "constexpr int kNumEvents = " << numEvents << ";\n"
     << "constexpr bool kUseGraph = " << (options.gpu.cudaGraph ? "true" : "false") << ";\n"
     << "using kiln::rt::CUdeviceptr;\n\n"
     << "#define KILN_RUN(x)                                                   \\\n"
     << "  do {                                                            \\\n"
     << "    kiln::rt::Status s_ = (x);                                    \\\n"
     << "    if (!s_)                                                      \\\n"
     << "      return s_;                                                  \\\n"
     << "  } while (0)\n\n"
     << "/// Every launch, copy and event of one run, in plan order.\n"
     << "kiln::rt::Status issue(kiln::rt::CudaContext &c, const CUdeviceptr *in,\n"
     << "                       const CUdeviceptr *out) {\n"
     << "  const CUdeviceptr A = c.arena(), W = c.weights();\n"
     << "  (void)A;\n  (void)W;\n  (void)in;\n  (void)out;\n";
  for (size_t k = 0; k < guardIndex.size(); ++k)
    os << "  int f" << k << " = -1; // a branch condition, once read\n";
  os << launches << "  return kiln::rt::Status::ok();\n}\n\n"
     << "const kiln::rt::CudaProgram kProgram = {\n"
     << "    kPtx, kFunctions, kNumFunctions, kArenaBytes, kNumStreams, kNumEvents, kUseGraph,\n"
     << "    kInputBytes, kOutputBytes, kNumLibraryCalls, kLibraryWorkspaceBytes,\n"
     << "    kLibraryZeroFloats, kAllowTf32, issue};\n"
     << "const kiln::rt::TargetHooks *const kHooks = &kiln::rt::kCudaHooks;\n";
  return true;
}

} // namespace

std::unique_ptr<Target> createCudaTarget(const TargetOptions &options, std::string &error) {
  const GpuArch *arch = checkGpuTargetOptions("cuda", options, error);
  return arch ? std::make_unique<CudaTarget>(options, *arch) : nullptr;
}

} // namespace kiln
