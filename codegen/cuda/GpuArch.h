//===- GpuArch.h - The GPU architectures the cuda target supports -*- C++ -*-===//
//
// The one table of GPU architectures: `--gpu-arch` is checked against it, the cuda
// codegen pipeline passes the chosen one to kiln-map-to-gpu as a pass option, which
// records it on the gpu.module (#nvvm.target), and PTX emission reads it from there.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_GPUARCH_H
#define KILN_CODEGEN_CUDA_GPUARCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln {

/// The tiled contraction's shape (TiledContraction.cpp): 16x16 threads per block,
/// each computing `rows` x `cols` outputs, so that a block covers 16*rows x 16*cols
/// outputs, staging `k` steps of both operands through shared memory at a time.
struct ContractionTile {
  int64_t rows, cols, k;
};

/// What one SM holds at once (NVIDIA's occupancy tables): threads, blocks, shared
/// memory for blocks (each block also takes 1 KB the system reserves); 64K 32-bit
/// registers, allocated 256 a warp, on every architecture here.
struct SmLimits {
  int64_t threads, blocks, sharedBytes;
};

struct GpuArch {
  /// "sm_80": the PTX target and the #nvvm.target chip.
  const char *name;
  /// The lowest PTX ISA that knows the architecture (an NVPTX feature).
  const char *ptxFeature;
  /// The largest tiled-contraction shape (smaller problems take smaller tiles).
  ContractionTile tile;
  /// The scheduler's device model for this architecture (passes/plan/CostModel.h);
  /// null: none is modelled, the GPU targets' default (h200) stands in.
  const char *deviceModel;
  /// Each stream's cuBLASLt/cuDNN workspace (NVIDIA's advice for cuBLASLt: 32 MiB
  /// on Hopper and newer, 4 MiB before).
  uint64_t libraryWorkspaceBytes;
  SmLimits sm;
};

/// Resident warps per SM over the SM's most, for a kernel of `blockThreads`
/// threads using `registers` per thread and `sharedBytes` of shared memory per
/// block on `arch`.
double occupancy(const GpuArch &arch, int64_t blockThreads, int64_t registers,
                 int64_t sharedBytes);

/// Every supported architecture, oldest first; the first is the default (the driver
/// JITs its PTX for newer GPUs).
llvm::ArrayRef<GpuArch> gpuArchs();

/// The architecture called `name`, or nullptr.
const GpuArch *findGpuArch(llvm::StringRef name);

/// The architecture called `name` (empty: the default, the first); null with an
/// error naming `--gpu-arch` and the supported ones.
const GpuArch *requireGpuArch(llvm::StringRef name, std::string &error);

/// "sm_80, sm_86, sm_89, sm_90", for messages and help.
std::string gpuArchList();

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_GPUARCH_H
