//===- CudaSimTarget.cpp - The cuda-sim target ----------------------------===//
//
// This file implements the cuda-sim target: the cuda mapping, kiln-simulate-gpu and
// the host pipeline; the host object writer; and the host run writer with each
// launch issued as its gpu stages through kiln::rt::simLaunch.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda-sim/CudaSimTarget.h"
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/GpuTarget.h"
#include "codegen/host/HostCodegen.h"
#include "codegen/host/HostTarget.h"
#include "codegen/cuda-sim/Passes.h"

using namespace mlir;

namespace kiln {
namespace {

/// The cuda target's plan (its library calls run on the mock cuBLASLt and cuDNN,
/// host memory, where KILN_CUDA_LIBRARY_PATH finds them, else on the simulated
/// kernels), its streams run as threads.
class CudaSimTarget : public GpuTarget {
public:
  using GpuTarget::GpuTarget;

  StringRef getName() const override { return "cuda-sim"; }
  StringRef getLibraryEngine() const override { return "cuda-mock"; }

  void buildCodegenPipeline(OpPassManager &pm) const override {
    pm.addPass(createSimulateGpu());
    buildHostCodegenPipeline(pm, /*parallel=*/false);
    pm.addPass(createSimThreadLocalShared());
  }

  bool writeKernels(ModuleOp module, StringRef dir, KernelCode &code,
                    std::string &error) const override {
    return writeHostKernels(module, dir, options.host.cpu, code, error);
  }

  bool writePrologue(llvm::raw_ostream &os, const EmitContext &ctx,
                     std::string &error) const override {
    os << "#include \"kiln/runtime/HostModel.h\"\n#include \"kiln/runtime/SimRuntime.h\"\n\n";
    // One declaration per gpu stage, in first-launch order, with its argument count.
    llvm::MapVector<StringRef, unsigned> kernels;
    for (LaunchOp l : ctx.plan.getBody().getOps<LaunchOp>()) {
      ArrayAttr stages = gpuStagesOf(l, error);
      if (!stages)
        return false;
      unsigned args = l.getBuffers().size() + (l.getScratch() ? 1 : 0);
      for (auto g : stages.getAsRange<GpuStageAttr>())
        kernels.insert({g.getFunction().getValue(), args});
    }
    writeKernelDeclarations(os, ctx.code->symbolPrefix, kernels);
    return true;
  }

  bool writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                std::string &error) const override {
    StringRef prefix = ctx.code->symbolPrefix;
    auto writeLaunch = [&](llvm::raw_ostream &os, LaunchOp l, IoExpr io,
                           std::string &error) {
      ArrayAttr stages = gpuStagesOf(l, error);
      if (!stages)
        return false;
      for (auto g : stages.getAsRange<GpuStageAttr>()) {
        ArrayRef<int64_t> grid = g.getGrid(), block = g.getBlock();
        os << "  KILN_RUN(kiln::rt::simLaunch(\"" << g.getFunction().getValue() << "\", {"
           << grid[0] << ", " << grid[1] << ", " << grid[2] << "}, {" << block[0] << ", "
           << block[1] << ", " << block[2] << "}, "
           << (g.getSync().getValue() ? "true" : "false") << ", [&] { "
           << prefix << g.getFunction().getValue() << "(" << launchArguments(l, io)
           << "); }));\n";
      }
      return true;
    };
    return writeHostRun(os, ctx, "kSimHooks", writeLaunch, error);
  }
};

} // namespace

std::unique_ptr<Target> createCudaSimTarget(const TargetOptions &options,
                                            std::string &error) {
  const GpuArch *arch = checkGpuTargetOptions("cuda-sim", options, error);
  return arch ? std::make_unique<CudaSimTarget>(options, *arch) : nullptr;
}

} // namespace kiln
