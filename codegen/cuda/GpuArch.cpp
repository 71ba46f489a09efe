//===- GpuArch.cpp - The GPU architectures the cuda target supports -------===//
//
// This file implements the architecture table (GpuArch.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuArch.h"

#include <algorithm>

namespace kiln {

namespace {
// Tiles: 4x4 outputs a thread (16 f32 accumulators and 8 operands in registers: 4
// FMAs per shared-memory load instead of 1/2), 64x64 a block. A 32-deep K step
// (16 KB of f32 operands a block) where an SM has the shared memory for several
// such blocks (A100: 164 KB, H100/H200: 228 KB), 16 (8 KB) on the consumer parts
// (sm_86, sm_89: 100 KB).
constexpr uint64_t kMiB = 1 << 20;
constexpr int64_t kKiB = 1024;
constexpr GpuArch kArchs[] = {
    {"sm_80", "+ptx70", {4, 4, 32}, "a100", 4 * kMiB, {2048, 32, 164 * kKiB}},
    {"sm_86", "+ptx71", {4, 4, 16}, nullptr, 4 * kMiB, {1536, 16, 100 * kKiB}},
    {"sm_89", "+ptx78", {4, 4, 16}, nullptr, 4 * kMiB, {1536, 24, 100 * kKiB}},
    {"sm_90", "+ptx78", {4, 4, 32}, "h200", 32 * kMiB, {2048, 32, 228 * kKiB}}};
constexpr int64_t kRegistersPerSm = 64 * 1024, kRegisterUnit = 256, kReservedShared = 1024;
} // namespace

double occupancy(const GpuArch &arch, int64_t blockThreads, int64_t registers,
                 int64_t sharedBytes) {
  if (blockThreads <= 0)
    return 0;
  int64_t warps = (blockThreads + 31) / 32;
  int64_t perWarp = (std::max<int64_t>(registers, 1) * 32 + kRegisterUnit - 1) /
                    kRegisterUnit * kRegisterUnit;
  int64_t blocks = std::min({arch.sm.blocks, arch.sm.threads / (warps * 32),
                             kRegistersPerSm / (perWarp * warps),
                             arch.sm.sharedBytes / (sharedBytes + kReservedShared)});
  return static_cast<double>(std::max<int64_t>(blocks, 0) * warps) /
         static_cast<double>(arch.sm.threads / 32);
}

llvm::ArrayRef<GpuArch> gpuArchs() { return kArchs; }

const GpuArch *findGpuArch(llvm::StringRef name) {
  for (const GpuArch &a : kArchs)
    if (name == a.name)
      return &a;
  return nullptr;
}

const GpuArch *requireGpuArch(llvm::StringRef name, std::string &error) {
  const GpuArch *arch = name.empty() ? &kArchs[0] : findGpuArch(name);
  if (!arch)
    error = "--gpu-arch '" + name.str() + "' is not supported (" + gpuArchList() + ")";
  return arch;
}

std::string gpuArchList() {
  std::string list;
  for (const GpuArch &a : kArchs)
    list += (list.empty() ? "" : ", ") + std::string(a.name);
  return list;
}

} // namespace kiln
