//===- GpuTarget.h - What the GPU targets share ----------------*- C++ -*-===//
//
// The base of the cuda and cuda-sim targets: the same architecture (GpuArch.h),
// the same kernel mapping (library calls for cuBLASLt and cuDNN, then
// kiln-map-to-gpu) and the same scheduling defaults; they differ in how the mapped
// kernels are compiled and run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_GPUTARGET_H
#define KILN_CODEGEN_CUDA_GPUTARGET_H

#include "codegen/Target.h"
#include "codegen/cuda/GpuArch.h"
#include "passes/plan/Passes.h"

namespace kiln {

class GpuTarget : public Target {
public:
  GpuTarget(const TargetOptions &options, const GpuArch &arch)
      : options(options), arch(arch) {}

  /// Library calls (unless `--contractions kiln`), the GPU mapping, then (`auto`)
  /// the cheaper of each call and its kernel (kiln-choose-engines).
  void buildKernelMappingPipeline(mlir::OpPassManager &pm) const override;
  /// The device model named, else the architecture's (h200 where the table has
  /// none, or no `--gpu-arch` was given).
  std::string getDeviceModel() const override;
  int64_t getDefaultMaxStreams() const override { return 4; }
  bool getAllowTf32() const override { return options.gpu.allowTf32; }
  std::string getArchName() const override { return arch.name; }

protected:
  TargetOptions options;
  const GpuArch &arch;
};

/// What cuBLASLt and cuDNN can run (kiln-select-library-calls' options): the cuda
/// targets' library engine.
SelectLibraryCallsOptions cudaLibraryEngine();

/// Checks the options the GPU target `name` takes and resolves its architecture;
/// null with `error` when they are wrong.
const GpuArch *checkGpuTargetOptions(llvm::StringRef name, const TargetOptions &options,
                                     std::string &error);

/// The stages kiln-map-to-gpu recorded on `launch`; null with `error` when it has
/// none (the GPU mapping did not run).
mlir::ArrayAttr gpuStagesOf(LaunchOp launch, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_GPUTARGET_H
