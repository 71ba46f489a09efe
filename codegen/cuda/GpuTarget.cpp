//===- GpuTarget.cpp - What the GPU targets share -------------------------===//
//
// This file implements GpuTarget (GpuTarget.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuTarget.h"
#include "codegen/cuda/CudaCodegen.h"

using namespace mlir;

namespace kiln {

void GpuTarget::buildKernelMappingPipeline(OpPassManager &pm) const {
  // Contractions cuBLASLt and cuDNN can run become library calls; their kernels
  // stay, the fallback where a library is missing at run time.
  if (options.contractions != "kiln")
    pm.addPass(createSelectLibraryCalls(cudaLibraryEngine()));
  buildGpuMappingPipeline(pm, arch.name, options.gpu);
  // `auto`: a library call only where the cost model prefers it to the kernel.
  if (options.contractions == "auto") {
    ChooseEnginesOptions choose;
    choose.deviceModel = getDeviceModel();
    choose.tf32 = options.gpu.allowTf32;
    pm.addPass(createChooseEngines(choose));
  }
}

SelectLibraryCallsOptions cudaLibraryEngine() {
  SelectLibraryCallsOptions engine;
  // cuBLASLt and cuDNN read and write f16 and compute in f32, but one call takes
  // one element type: an f32 model input or output of an f16 call stays a kernel.
  engine.uniformElementType = true;
  // cuBLASLt's epilogues (RELU, GELU: the tanh form); cuDNN's
  // convolution-bias-activation (Relu or none), one padding for both sides.
  static const std::string matmul[] = {"none", "relu", "gelu_tanh"}, conv[] = {"none", "relu"};
  engine.matmulActivations = matmul;
  engine.convActivations = conv;
  engine.symmetricPadding = true;
  return engine;
}

std::string GpuTarget::getDeviceModel() const {
  if (!options.deviceModel.empty())
    return options.deviceModel;
  return !options.gpu.arch.empty() && arch.deviceModel ? arch.deviceModel : "h200";
}

const GpuArch *checkGpuTargetOptions(StringRef name, const TargetOptions &options,
                                     std::string &error) {
  if (!options.host.fallbackKernels) {
    error = "--no-fallback-kernels is for the host target's library calls (not --target " +
            name.str() + ")";
    return nullptr;
  }
  return requireGpuArch(options.gpu.arch, error);
}

ArrayAttr gpuStagesOf(LaunchOp launch, std::string &error) {
  std::optional<ArrayAttr> stages = launch.getGpuStages();
  if (!stages)
    error = "kernel " + launch.getKernel().str() +
            " has no gpu stages (the cuda codegen phase did not run)";
  return stages ? *stages : ArrayAttr();
}

} // namespace kiln
