//===- CostModel.h - How long a launch takes on a device -------*- C++ -*-===//
//
// The scheduler's view of a device (a target descriptor: compute units, memory
// bandwidth, fp32/fp16 peaks, launch overhead) and of a launch (its FLOPs, bytes
// and parallelism). A launch's time alone on the device is its overhead plus the
// longer of its compute and memory times at the share of the device its
// parallelism fills; its "device time" is that share times its time, what it
// takes from kernels running beside it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PLAN_COSTMODEL_H
#define KILN_PASSES_PLAN_COSTMODEL_H

#include "dialects/kiln/KilnDialect.h"

#include <optional>
#include <string>

namespace kiln {

struct DeviceModel {
  const char *name;        // as `--device-model` / the pass option takes it
  const char *description; // for the report
  bool gpu;                // units are SMs (blocks fill them); else CPU cores
  int64_t units;
  double bandwidth;        // bytes/s, the whole device
  double fp32Peak;         // flop/s, the whole device
  double fp16Peak;         // f16 without tensor cores (half2)
  double tensorPeak;       // f16/bf16 tensor cores into f32 (dense)
  // The share of a peak each engine's contractions reach (GPU; 1 on the host,
  // whose peaks are already what Kiln's loop nests reach): Kiln's SIMT kernels,
  // Kiln's mma.sync kernels, the vendor libraries (cuBLASLt, cuDNN). Assumptions
  // until tools/gpu-check's per-kernel times calibrate them.
  double simtEfficiency;
  double tensorEfficiency;
  double libraryEfficiency;
  double launchOverhead;   // s per launch
  double eventOverhead;    // s per cross-stream wait
  /// The compile's, not the device's: f32 contractions may run in TF32 on tensor
  /// cores (--allow-tf32), a library call's as Kiln's kernels'.
  bool tf32 = false;
};

/// The device model `name` ("h200", "a100", "host"); none when unknown. `hostCores`
/// sets the host model's cores (0: this machine's).
std::optional<DeviceModel> findDeviceModel(llvm::StringRef name, int64_t hostCores = 0);
std::string deviceModelList();

struct LaunchCost {
  double seconds = 0;      // alone on the device
  double share = 1;        // of the device it fills, (0, 1]
  double deviceSeconds() const { return seconds * share; }
};

/// What runs a launch: Kiln's kernel (SIMT or tensor cores) or a library call.
enum class Engine { Simt, TensorCores, Library };
llvm::StringRef engineName(Engine engine);

/// The engine a launch runs on as the plan stands: its library call where it has
/// one, else its kernel's (kiln.engine).
Engine engineOf(LaunchOp launch);

/// The cost of a launch or copy.
LaunchCost estimateCost(mlir::Operation *node, const DeviceModel &device);

/// The cost of `launch` were it run on `engine`. A library call on a GPU reaches
/// the tensor-core peak only with f16 operands aligned as cuBLASLt and cuDNN need
/// them (K, N and channels multiples of 8), and cuDNN's tensor-core convolutions
/// take NHWC: an NCHW one costs a transpose of its input and output each way
/// (two more launches and their bytes).
LaunchCost estimateCost(LaunchOp launch, const DeviceModel &device, Engine engine);

} // namespace kiln

#endif // KILN_PASSES_PLAN_COSTMODEL_H
