//===- CostModel.cpp - How long a launch takes on a device ----------------===//
//
// This file implements the cost model (CostModel.h). The GPU figures are the
// vendors' datasheet numbers (SXM parts, dense fp16 tensor-core peaks); the
// launch overhead is the usual few microseconds of a driver launch.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/CostModel.h"

#include <algorithm>
#include <thread>

using namespace mlir;

namespace kiln {

namespace {
/// The work per core of a parallelized host kernel (kiln-host-parallel's min-work).
constexpr int64_t kHostWorkPerCore = 65536;

const DeviceModel kDevices[] = {
    // Peaks from NVIDIA's data sheets: FP32, FP16 (half2, without tensor cores),
    // FP16/BF16 tensor cores (dense).
    {"h200", "NVIDIA H200 (sm_90)", true, 132, 4.8e12, 67e12, 134e12, 989e12, 3e-6, 1e-6},
    {"a100", "NVIDIA A100 (sm_80)", true, 108, 2.039e12, 19.5e12, 78e12, 312e12, 3e-6, 1e-6},
    // One core: what Kiln's loop nests reach (vectorized, not blocked for cache).
    {"host", "this CPU", false, 1, 8e9, 8e9, 8e9, 8e9, 2e-6, 5e-6},
};
} // namespace

std::optional<DeviceModel> findDeviceModel(StringRef name, int64_t hostCores) {
  for (const DeviceModel &d : kDevices) {
    if (name != d.name)
      continue;
    if (d.gpu)
      return d;
    DeviceModel host = d;
    int64_t cores = hostCores > 0 ? hostCores
                                  : std::max<int64_t>(1, std::thread::hardware_concurrency());
    host.units = cores;
    host.bandwidth *= static_cast<double>(cores);
    host.fp32Peak *= static_cast<double>(cores);
    host.fp16Peak *= static_cast<double>(cores);
    host.tensorPeak *= static_cast<double>(cores);
    return host;
  }
  return std::nullopt;
}

std::string deviceModelList() {
  std::string list;
  for (const DeviceModel &d : kDevices)
    list += (list.empty() ? "" : ", ") + std::string(d.name);
  return list;
}

LaunchCost estimateCost(Operation *node, const DeviceModel &device) {
  int64_t bytes = 0, flops = 0, parallel = 1;
  bool f16 = false, tensorCores = false;
  if (auto c = dyn_cast<CopyOp>(node)) {
    bytes = 2 * bufferBytes(cast<MemRefType>(c.getSource().getType()));
    parallel = device.units;
  } else {
    auto l = cast<LaunchOp>(node);
    for (Value v : l.getBuffers()) {
      auto type = cast<MemRefType>(v.getType());
      bytes += bufferBytes(type);
      f16 |= type.getElementType().isF16();
    }
    flops = static_cast<int64_t>(l.getFlops().value_or(0));
    // Kiln's mma.sync kernels, and f16 library calls (cuBLASLt, cuDNN).
    tensorCores = KilnDialect::TensorCoresAttrHelper(l.getContext()).isAttrPresent(l) ||
                  (f16 && l.getLibrary());
    if (std::optional<ArrayAttr> stages = l.getGpuStages()) {
      for (auto g : stages->getAsRange<GpuStageAttr>()) {
        ArrayRef<int64_t> grid = g.getGrid();
        parallel = std::max(parallel, grid[0] * grid[1] * grid[2]);
      }
    } else if (device.gpu) {
      parallel = device.units; // not mapped yet: assume it fills the device
    }
  }
  // A GPU kernel fills the SMs its blocks reach. A host kernel runs on the thread
  // pool: a library call on every core, a kernel of Kiln's on a core per 65,536
  // operations of work (kiln-host-parallel's min-work), up to every core.
  double share;
  if (device.gpu) {
    share = std::min(1.0, static_cast<double>(parallel) / static_cast<double>(device.units));
  } else {
    auto l = dyn_cast<LaunchOp>(node);
    int64_t cores = l && l.getLibrary() ? device.units
                                        : std::clamp<int64_t>(flops / kHostWorkPerCore, 1,
                                                              device.units);
    share = static_cast<double>(cores) / static_cast<double>(device.units);
  }
  double peak = tensorCores ? device.tensorPeak : f16 ? device.fp16Peak : device.fp32Peak;
  double compute = static_cast<double>(flops) / (peak * share);
  double memory = static_cast<double>(bytes) / (device.bandwidth * share);
  LaunchCost cost;
  cost.seconds = device.launchOverhead + std::max(compute, memory);
  cost.share = share;
  return cost;
}

} // namespace kiln
