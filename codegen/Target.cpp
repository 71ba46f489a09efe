//===- Target.cpp - The table of targets ----------------------------------===//
//
// This file implements target creation by name and the per-target codegen pipelines
// of kiln-opt. It is the one place that lists the targets.
//
//===----------------------------------------------------------------------===//
#include "codegen/Target.h"
#include "codegen/Passes.h"
#include "codegen/cuda-sim/Passes.h"
#include "codegen/cuda/Passes.h"
#include "codegen/host/Passes.h"
#include "codegen/cuda-sim/CudaSimTarget.h"
#include "codegen/cuda/CudaTarget.h"
#include "codegen/host/HostTarget.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace kiln {

Target::~Target() = default;

namespace {

struct TargetEntry {
  const char *name;
  const char *description;
  std::unique_ptr<Target> (*create)(const TargetOptions &, std::string &);
};

const TargetEntry kTargets[] = {
    {"host", "native object code for this CPU", createHostTarget},
    {"cuda", "PTX and the CUDA runtime", createCudaTarget},
    {"cuda-sim", "the cuda kernels, run on the CPU by a SIMT simulator (a checker)",
     createCudaSimTarget},
};

/// The target options as kiln-opt pipeline options.
struct CodegenPipelineOptions : PassPipelineOptions<CodegenPipelineOptions> {
  Option<std::string> cpu{*this, "cpu", llvm::cl::desc("Host CPU to tune for"),
                          llvm::cl::init("native")};
  Option<std::string> gpuArch{*this, "gpu-arch", llvm::cl::desc("GPU architecture"),
                              llvm::cl::init("")};
  Option<std::string> contractions{
      *this, "contractions", llvm::cl::desc("auto, kiln or library (host: oneDNN)"),
      llvm::cl::init("auto")};
};

} // namespace

std::unique_ptr<Target> createTarget(llvm::StringRef name, const TargetOptions &options,
                                     std::string &error) {
  if (options.contractions != "auto" && options.contractions != "kiln" &&
      options.contractions != "library") {
    error = "--contractions must be auto, kiln or library, not '" + options.contractions + "'";
    return nullptr;
  }
  for (const TargetEntry &t : kTargets)
    if (name == t.name)
      return t.create(options, error);
  error = "--target '" + name.str() + "' is not a target (" + targetList() + ")";
  return nullptr;
}

const char *referenceTargetName() { return kTargets[0].name; }

std::string targetList() {
  std::string list;
  for (const TargetEntry &t : kTargets)
    list += (list.empty() ? "" : ", ") + std::string(t.name);
  return list;
}

void registerCodegenPasses() {
  registerKilnCodegenPasses();
  registerKilnHostPasses();
  registerKilnCudaPasses();
  registerKilnCudaSimPasses();
}

void registerCodegenPipelines() {
  for (const TargetEntry &t : kTargets) {
    std::string name = t.name;
    registerPassPipeline(
        "kiln-" + name + "-codegen-pipeline",
        "Kiln's codegen phase for the " + name + " target: " + t.description,
        [name](OpPassManager &pm, StringRef text,
               function_ref<LogicalResult(const Twine &)> errorHandler) -> LogicalResult {
          CodegenPipelineOptions parsed;
          if (failed(parsed.parseFromString(text)))
            return failure();
          TargetOptions options;
          options.host.cpu = parsed.cpu;
          options.gpu.arch = parsed.gpuArch;
          options.contractions = parsed.contractions;
          std::string error;
          std::unique_ptr<Target> target = createTarget(name, options, error);
          if (!target)
            return errorHandler(error);
          target->buildKernelMappingPipeline(pm);
          target->buildCodegenPipeline(pm);
          return success();
        },
        [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
          printOptions(CodegenPipelineOptions());
        });
  }
}

} // namespace kiln
