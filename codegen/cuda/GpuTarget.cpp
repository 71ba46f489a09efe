//===- GpuTarget.cpp - What the GPU targets share -------------------------===//
//
// This file implements GpuTarget (GpuTarget.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuTarget.h"
#include "codegen/cuda/CudaCodegen.h"
#include "passes/Passes.h"

using namespace mlir;

namespace kiln {

void GpuTarget::buildKernelMappingPipeline(OpPassManager &pm) const {
  // Contractions cuBLASLt and cuDNN can run become library calls; their kernels
  // stay, the fallback where a library is missing at run time.
  if (options.contractions != "kiln") {
    SelectLibraryCallsOptions select;
    select.engine = "cuda";
    pm.addPass(createSelectLibraryCalls(select));
  }
  buildGpuMappingPipeline(pm, arch.name);
}

std::string GpuTarget::getDeviceModel() const {
  if (!options.deviceModel.empty())
    return options.deviceModel;
  return !options.gpuArch.empty() && arch.deviceModel ? arch.deviceModel : "h200";
}

const GpuArch *checkGpuTargetOptions(StringRef name, const TargetOptions &options,
                                     std::string &error) {
  if (!options.fallbackKernels) {
    error = "--no-fallback-kernels is for the host target's library calls (not --target " +
            name.str() + ")";
    return nullptr;
  }
  return requireGpuArch(options.gpuArch, error);
}

ArrayAttr gpuStagesOf(LaunchOp launch, std::string &error) {
  std::optional<ArrayAttr> stages = launch.getGpuStages();
  if (!stages)
    error = "kernel " + launch.getKernel().str() +
            " has no gpu stages (the cuda codegen phase did not run)";
  return stages ? *stages : ArrayAttr();
}

} // namespace kiln
