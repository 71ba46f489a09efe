//===- GpuArch.cpp - The GPU architectures the cuda target supports -------===//
//
// This file implements the architecture table (GpuArch.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuArch.h"

namespace kiln {

namespace {
// Tiles: 4x4 outputs a thread (16 f32 accumulators and 8 operands in registers: 4
// FMAs per shared-memory load instead of 1/2), 64x64 a block. A 32-deep K step
// (16 KB of f32 operands a block) where an SM has the shared memory for several
// such blocks (A100: 164 KB, H100/H200: 228 KB), 16 (8 KB) on the consumer parts
// (sm_86, sm_89: 100 KB).
constexpr uint64_t kMiB = 1 << 20;
constexpr GpuArch kArchs[] = {{"sm_80", "+ptx70", {4, 4, 32}, "a100", 4 * kMiB},
                              {"sm_86", "+ptx71", {4, 4, 16}, nullptr, 4 * kMiB},
                              {"sm_89", "+ptx78", {4, 4, 16}, nullptr, 4 * kMiB},
                              {"sm_90", "+ptx78", {4, 4, 32}, "h200", 32 * kMiB}};
} // namespace

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
