//===- SimRuntime.h - The cuda kernels' SIMT mapping, run on the CPU -*- C++ -*-===//
//
// The `cuda-sim` target compiles the cuda target's kernels — the same gpu.funcs,
// with the same blocks, threads, shared memory, barriers and warp shuffles — for the
// host, and runs them here: every block in turn, its threads as fibers that switch
// only at barriers, shuffles and the warp's tensor-core operations (mma.sync). A mapping bug (an index, a missed barrier, a lane
// that reads the wrong partner) gives a wrong answer or a clear error in a CPU test,
// long before a GPU is at hand. Slow by design: it is a checker, not a backend.
//
// Kernels call the kiln_sim_* functions below (the emulated gpu.thread_id,
// gpu.barrier, gpu.shuffle ...); generated model code calls simLaunch.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_SIMRUNTIME_H
#define KILN_RUNTIME_SIMRUNTIME_H

#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <functional>

namespace kiln::rt {

struct SimDim3 {
  int64_t x = 1, y = 1, z = 1;
};

/// Runs `kernel` once per thread of the launch. `synchronizes`: the kernel has
/// barriers or shuffles (its threads then run as fibers; without, one after the
/// other). A thread that returns while others still wait at a barrier, or a shuffle
/// that its warp's first `width` lanes do not all reach, is an error naming `name`.
Status simLaunch(const char *name, SimDim3 grid, SimDim3 block, bool synchronizes,
                 const std::function<void()> &kernel);

} // namespace kiln::rt

extern "C" {
/// dim: 0 = x, 1 = y, 2 = z.
int64_t kiln_sim_thread_id(int32_t dim);
int64_t kiln_sim_block_id(int32_t dim);
int64_t kiln_sim_block_dim(int32_t dim);
int64_t kiln_sim_grid_dim(int32_t dim);
/// gpu.barrier: waits until every thread of the block arrives.
void kiln_sim_barrier(void);
/// gpu.shuffle on 32 bits (mode: 0 xor, 1 down, 2 up, 3 idx) among the 32 lanes of
/// the caller's warp; kiln_sim_shuffle_valid then says whether the lane was valid.
int32_t kiln_sim_shuffle(int32_t value, int32_t offset, int32_t width, int32_t mode);
int32_t kiln_sim_shuffle_valid(void);
/// mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 (kind 0: T = f16, 1: bf16; A and B
/// registers two T each, the low half first) or, kind 2,
/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (one f32 each, read as TF32:
/// its top 19 bits) among the 32 lanes of the caller's warp: the lane's A registers
/// (a0..a3), B registers (b0, b1) and f32 accumulators c0..c3, laid out as the PTX
/// ISA defines; kiln_sim_mma_result(i) is then the lane's result register i.
void kiln_sim_mma_sync(int32_t kind, int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                           int32_t b0, int32_t b1, float c0, float c1, float c2, float c3);
float kiln_sim_mma_result(int32_t index);
/// cp.async of `bytes` from global `src` to shared `dst` (the first `srcBytes` read,
/// the rest zero-filled), queued in the caller's thread in the group being built;
/// _commit closes the group (cp.async.commit_group); _wait(n) performs every
/// committed group but the last n (cp.async.wait_group n). Copies are performed
/// only there: shared memory read before its wait holds what it held before.
void kiln_sim_cp_async(int64_t dst, int64_t src, int64_t bytes, int64_t srcBytes);
void kiln_sim_cp_async_commit(void);
void kiln_sim_cp_async_wait(int32_t groups);
}

#endif // KILN_RUNTIME_SIMRUNTIME_H
