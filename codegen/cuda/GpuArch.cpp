//===- GpuArch.cpp - The GPU architectures the cuda target supports -------===//
//
// This file implements the architecture table (GpuArch.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuArch.h"

namespace kiln {

namespace {
constexpr GpuArch kArchs[] = {
    {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"}};
} // namespace

llvm::ArrayRef<GpuArch> gpuArchs() { return kArchs; }

const GpuArch *findGpuArch(llvm::StringRef name) {
  for (const GpuArch &a : kArchs)
    if (name == a.name)
      return &a;
  return nullptr;
}

const GpuArch *requireGpuArch(llvm::StringRef name, std::string &error) {
  const GpuArch *arch = findGpuArch(name);
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
