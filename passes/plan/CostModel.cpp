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
    // FP16/BF16 tensor cores (dense). Efficiencies: SIMT, Kiln's mma.sync (on
    // sm_90 below the wgmma peak the data sheet gives), the libraries.
    {"h200", "NVIDIA H200 (sm_90)", true, 132, 4.8e12, 67e12, 134e12, 989e12, 0.5, 0.35, 0.75,
     3e-6, 1e-6},
    {"a100", "NVIDIA A100 (sm_80)", true, 108, 2.039e12, 19.5e12, 78e12, 312e12, 0.5, 0.55,
     0.8, 3e-6, 1e-6},
    // One core: what Kiln's loop nests reach (vectorized, not blocked for cache).
    {"host", "this CPU", false, 1, 8e9, 8e9, 8e9, 8e9, 1, 1, 1, 2e-6, 5e-6},
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

StringRef engineName(Engine engine) {
  switch (engine) {
  case Engine::Simt: return kEngineSimt;
  case Engine::TensorCores: return kEngineTensorCores;
  case Engine::Library: return "library";
  }
  llvm_unreachable("unknown engine");
}

Engine engineOf(LaunchOp launch) {
  if (launch.getLibrary())
    return Engine::Library;
  return onTensorCores(launch) ? Engine::TensorCores : Engine::Simt;
}

namespace {

/// What a node costs: its bytes moved, FLOPs and parallelism (blocks, or work),
/// the peak and efficiency it computes at, its launches, and whether it is a
/// library call (on the host: every core).
struct Work {
  int64_t bytes = 0, flops = 0, parallel = 1, launches = 1;
  double peak = 0, efficiency = 1;
  bool library = false;
};

/// True when a library call's operands are what tensor cores take: f16 with the
/// contraction's K and N (a convolution's channels per group and filters) in
/// multiples of 8 (16 bytes).
bool tensorCoreAligned(LibraryCallAttr call) {
  ArrayRef<int64_t> s = call.getShape();
  if (call.getKind().getValue() == "conv") {
    int64_t groups = s[9];
    return (s[1] / groups) % 8 == 0 && (s[4] / groups) % 8 == 0;
  }
  return s[2] % 8 == 0 && s[3] % 8 == 0;
}

Work workOf(LaunchOp l, const DeviceModel &device, Engine engine) {
  Work w;
  bool f16 = false;
  for (Value v : l.getBuffers()) {
    auto type = cast<MemRefType>(v.getType());
    w.bytes += bufferBytes(type);
    f16 |= type.getElementType().isF16() || type.getElementType().isBF16();
  }
  w.flops = static_cast<int64_t>(l.getFlops().value_or(0));
  w.library = engine == Engine::Library;
  LibraryCallAttr call = l.getLibraryAttr();
  if (std::optional<ArrayAttr> stages = l.getGpuStages(); stages && !w.library) {
    for (auto g : stages->getAsRange<GpuStageAttr>()) {
      ArrayRef<int64_t> grid = g.getGrid();
      w.parallel = std::max(w.parallel, grid[0] * grid[1] * grid[2]);
    }
  } else if (device.gpu) {
    w.parallel = device.units; // a library call, or not mapped yet: fills the device
  }
  switch (engine) {
  case Engine::TensorCores:
    // TF32 (f32 operands, --allow-tf32) at half the f16 rate.
    w.peak = f16 ? device.tensorPeak : device.tensorPeak / 2;
    w.efficiency = device.tensorEfficiency;
    break;
  case Engine::Simt:
    w.peak = f16 ? device.fp16Peak : device.fp32Peak;
    w.efficiency = device.simtEfficiency;
    break;
  case Engine::Library:
    w.efficiency = device.libraryEfficiency;
    if (!f16)
      w.peak = device.gpu && device.tf32 && call && tensorCoreAligned(call)
                   ? device.tensorPeak / 2
                   : device.fp32Peak;
    else
      w.peak = !device.gpu || (call && tensorCoreAligned(call)) ? device.tensorPeak
                                                                : device.fp16Peak;
    if (device.gpu && f16 && call && call.getKind().getValue() == "conv") {
      ArrayRef<int64_t> operands = call.getOperands();
      auto bytesOf = [&](int64_t i) {
        return bufferBytes(cast<MemRefType>(l.getBuffers()[operands[i]].getType()));
      };
      w.bytes += 2 * (bytesOf(0) + bytesOf(4));
      w.launches += 2;
    }
    break;
  }
  return w;
}

LaunchCost costOf(const Work &w, const DeviceModel &device) {
  // A GPU kernel fills the SMs its blocks reach. A host kernel runs on the thread
  // pool: a library call on every core, a kernel of Kiln's on a core per 65,536
  // operations of work (kiln-host-parallel's min-work), up to every core.
  double share;
  if (device.gpu) {
    share = std::min(1.0, static_cast<double>(w.parallel) / static_cast<double>(device.units));
  } else {
    int64_t cores = w.library ? device.units
                                  : std::clamp<int64_t>(w.flops / kHostWorkPerCore, 1,
                                                        device.units);
    share = static_cast<double>(cores) / static_cast<double>(device.units);
  }
  double compute = static_cast<double>(w.flops) / (w.peak * w.efficiency * share);
  double memory = static_cast<double>(w.bytes) / (device.bandwidth * share);
  LaunchCost cost;
  cost.seconds =
      device.launchOverhead * static_cast<double>(w.launches) + std::max(compute, memory);
  cost.share = share;
  return cost;
}

} // namespace

LaunchCost estimateCost(LaunchOp launch, const DeviceModel &device, Engine engine) {
  return costOf(workOf(launch, device, engine), device);
}

LaunchCost estimateCost(Operation *node, const DeviceModel &device) {
  if (auto l = dyn_cast<LaunchOp>(node))
    return estimateCost(l, device, engineOf(l));
  Work w;
  w.bytes = 2 * bufferBytes(cast<MemRefType>(cast<CopyOp>(node).getSource().getType()));
  w.parallel = device.units;
  w.peak = device.fp32Peak;
  return costOf(w, device);
}

} // namespace kiln
