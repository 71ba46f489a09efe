//===- GpuOptions.h - The options of the GPU targets ------------*- C++ -*-===//
#ifndef KILN_CODEGEN_CUDA_GPUOPTIONS_H
#define KILN_CODEGEN_CUDA_GPUOPTIONS_H

#include <string>

namespace kiln {

/// What the cuda and cuda-sim targets read.
struct GpuOptions {
  /// The GPU architecture (GpuArch.h); empty: the table's first.
  std::string arch;
  /// cuda: capture a whole run as a CUDA graph and replay it on later runs.
  bool cudaGraph = false;
  /// f32 contractions may compute in TF32 on tensor cores: Kiln's own kernels
  /// (mma.sync m16n8k8 .tf32) and the library calls (cuBLASLt
  /// COMPUTE_32F_FAST_TF32, cuDNN's default math); otherwise f32 stays f32.
  bool allowTf32 = false;
  /// Kiln's f16/bf16 contractions on tensor cores (mma.sync); false: the SIMT
  /// tiled contraction, for comparison.
  bool tensorCores = true;
  /// The fewest rows, columns and K a contraction needs to go on tensor cores
  /// (smaller ones waste most of each 16x8x16 mma.sync); 1: every one, however
  /// small (the conformance run's way to put the node tests on them).
  int64_t tensorCoreMinSize = 16;
  /// cuda: the codegen phase leaves out the kernels the kernel cache holds
  /// (kiln-take-cached-kernels), and emitPtx takes their PTX from it. The driver
  /// sets it when it emits, so that `--compile-to codegen` shows every kernel.
  bool takeCachedKernels = false;
};

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_GPUOPTIONS_H
