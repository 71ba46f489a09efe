//===- SimRuntime.cpp - The cuda kernels' SIMT mapping, run on the CPU ----===//
//
// This file implements the SIMT simulator of the cuda-sim target (SimRuntime.h).
// One block at a time. A kernel without barriers or shuffles runs thread after thread
// on the caller's stack. Otherwise each thread is a fiber (its own stack, started
// with ucontext, switched with _setjmp/_longjmp) that runs until it returns, reaches
// a barrier, a shuffle or a warp's matrix operation. When no fiber can run, the
// scheduler releases a barrier that every thread reached, a warp whose lanes all
// reached a shuffle (exchanging their values), or a warp whose 32 lanes all reached
// an mma.sync (computing the warp's product from the lanes' fragment registers by
// the PTX ISA's layout, so that a kernel that loads a fragment into the wrong
// lane or register gets a wrong answer here as it would on the GPU); anything else
// is a deadlock the real GPU would hang on or leave undefined, reported as an
// error. cp.async copies wait in their thread's queue until a wait covers their
// group, so that shared memory read too early holds stale data here too.
//
//===----------------------------------------------------------------------===//
// Fibers switch with _setjmp/_longjmp across stacks (no signal-mask system call per
// switch, unlike swapcontext); the fortified longjmp would refuse that.
#undef _FORTIFY_SOURCE
#include "kiln/runtime/SimRuntime.h"

#include "kiln/runtime/Half.h"

#include <csetjmp>
#include <cstring>
#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

// Under ThreadSanitizer (-DKILN_SANITIZE=thread) each fiber is announced as one,
// and every switch synchronizes, so TSan follows the stacks and sees no race
// between the threads of a block (they never run at once).
#if defined(__SANITIZE_THREAD__)
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
}
#define KILN_TSAN_FIBERS 1
#else
#define KILN_TSAN_FIBERS 0
#endif

namespace kiln::rt {
namespace {

/// Tells ThreadSanitizer that execution moves to `fiber` (nothing without it).
inline void announceSwitch(void *fiber) {
#if KILN_TSAN_FIBERS
  __tsan_switch_to_fiber(fiber, 0);
#else
  (void)fiber;
#endif
}

constexpr size_t kStackBytes = 128 * 1024;
constexpr int64_t kWarp = 32;

struct Fiber {
  enum State { Ready, AtBarrier, AtShuffle, AtMma, Done };
  ucontext_t context; // to start it
  jmp_buf resume;     // to resume it
  bool started = false;
  std::unique_ptr<char[]> stack;
  State state = Ready;
  int64_t tid[3] = {0, 0, 0};
  int32_t value = 0, offset = 0, width = 0, mode = 0, result = 0, valid = 0;
  // mma.sync m16n8k16: the multiplicand kind (0 f16, 1 bf16), the lane's A (4) and
  // B (2) registers, its accumulators in and its results.
  int32_t mmaKind = 0;
  uint32_t mmaA[4] = {}, mmaB[2] = {};
  float mmaC[4] = {}, mmaD[4] = {};
  // cp.async: the copies issued and not yet performed, each with its group (the
  // number of groups committed before it), and the groups committed.
  struct Copy {
    void *dst;
    const void *src;
    int64_t bytes, srcBytes, group;
  };
  std::vector<Copy> copies;
  int64_t committed = 0;
  void *tsanFiber = nullptr; // ThreadSanitizer's fiber for it, when built with TSan
};

struct Launch {
  const std::function<void()> *kernel = nullptr;
  int64_t grid[3], block[3], bid[3] = {0, 0, 0};
  std::vector<Fiber> fibers;
  Fiber *current = nullptr;
  jmp_buf scheduler;
  bool synchronizes = true;
  std::string error; // a barrier or shuffle in a kernel declared without
  void *tsanScheduler = nullptr; // the scheduler's own ThreadSanitizer fiber
};

/// The launch this host thread is simulating (models may run on several threads).
thread_local Launch *tLaunch = nullptr;

void fiberMain() {
  Launch &l = *tLaunch;
  (*l.kernel)();
  l.current->state = Fiber::Done;
  announceSwitch(l.tsanScheduler);
  _longjmp(l.scheduler, 1);
}

/// Back to the scheduler; returns when the scheduler resumes this fiber.
void yieldAs(Fiber::State state) {
  Launch &l = *tLaunch;
  if (!l.synchronizes) {
    l.error = "a barrier or shuffle in a kernel that was compiled without any";
    return;
  }
  Fiber &f = *l.current;
  f.state = state;
  if (_setjmp(f.resume) == 0) {
    announceSwitch(l.tsanScheduler);
    _longjmp(l.scheduler, 1);
  }
}

/// Runs `f` until it returns or yields.
void resume(Launch &l, Fiber &f) {
  l.current = &f;
  if (_setjmp(l.scheduler) != 0)
    return;
  announceSwitch(f.tsanFiber);
  if (!f.started) {
    f.started = true;
    setcontext(&f.context);
  }
  _longjmp(f.resume, 1);
}

/// Exchanges the values of a warp whose lanes all wait at a shuffle.
void exchange(Fiber *lanes, int64_t count) {
  for (int64_t lane = 0; lane < count; ++lane) {
    Fiber &f = lanes[lane];
    int64_t src = lane;
    switch (f.mode) {
    case 0: src = lane ^ f.offset; break;
    case 1: src = lane + f.offset; break;
    case 2: src = lane - f.offset; break;
    default: src = f.offset; break;
    }
    bool inRange = src >= 0 && src < f.width && src < count;
    f.result = inRange ? lanes[src].value : f.value;
    f.valid = lane < f.width && inRange;
  }
  for (int64_t lane = 0; lane < count; ++lane)
    lanes[lane].state = Fiber::Ready;
}

/// A 16-bit multiplicand (f16 or bf16 bits) as a float.
float widen(uint32_t bits, int32_t kind) {
  uint16_t h = static_cast<uint16_t>(bits);
  float f;
  if (kind == 1) {
    uint32_t w = static_cast<uint32_t>(h) << 16;
    std::memcpy(&f, &w, sizeof f);
  } else {
    widenHalves(&h, &f, 1);
  }
  return f;
}

/// An f32 read as TF32: its top 19 bits (sign, exponent, 10 bits of mantissa).
float tf32(uint32_t bits) {
  bits &= 0xffffe000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 for the warp's
/// 32 lanes, by the PTX ISA's fragment layout (lane = 4 g + t): A register r holds
/// A[g + 8 (r & 1)][2t + 8 (r >> 1) + e] in its half e (the low half first); B
/// register r holds B[2t + 8r + e][g]; accumulator 2r + e is C[g + 8r][2t + e].
/// Kind 2, m16n8k8 .tf32: A register r holds A[g + 8 (r & 1)][t + 4 (r >> 1)], B
/// register r holds B[t + 4r][g]; the accumulators as above.
/// Products are exact in f32; the sums run over k in order.
std::string multiply(Fiber *lanes) {
  float a[16][16], b[16][8], c[16][8];
  const bool isTf32 = lanes[0].mmaKind == 2;
  const int64_t kSize = isTf32 ? 8 : 16;
  for (int64_t lane = 0; lane < kWarp; ++lane) {
    const Fiber &f = lanes[lane];
    if (f.mmaKind != lanes[0].mmaKind)
      return "the lanes of a warp run mma.sync on different types";
    int64_t g = lane / 4, t = lane % 4;
    if (isTf32) {
      for (int64_t r = 0; r < 4; ++r)
        a[g + 8 * (r & 1)][t + 4 * (r >> 1)] = tf32(f.mmaA[r]);
      for (int64_t r = 0; r < 2; ++r)
        b[t + 4 * r][g] = tf32(f.mmaB[r]);
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          c[g + 8 * r][2 * t + e] = f.mmaC[2 * r + e];
      continue;
    }
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t e = 0; e < 2; ++e)
        a[g + 8 * (r & 1)][2 * t + 8 * (r >> 1) + e] = widen(f.mmaA[r] >> (16 * e), f.mmaKind);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e)
        b[2 * t + 8 * r + e][g] = widen(f.mmaB[r] >> (16 * e), f.mmaKind);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e)
        c[g + 8 * r][2 * t + e] = f.mmaC[2 * r + e];
  }
  for (int64_t lane = 0; lane < kWarp; ++lane) {
    Fiber &f = lanes[lane];
    int64_t g = lane / 4, t = lane % 4;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t m = g + 8 * r, n = 2 * t + e;
        float sum = c[m][n];
        for (int64_t k = 0; k < kSize; ++k)
          sum += a[m][k] * b[k][n];
        f.mmaD[2 * r + e] = sum;
      }
    f.state = Fiber::Ready;
  }
  return "";
}

/// Runs one block to completion; "" or what went wrong.
std::string runBlock(Launch &l) {
  int64_t n = static_cast<int64_t>(l.fibers.size());
  for (int64_t i = 0; i < n; ++i) {
    Fiber &f = l.fibers[i];
    f.state = Fiber::Ready;
    f.copies.clear();
    f.committed = 0;
    f.tid[0] = i % l.block[0];
    f.tid[1] = i / l.block[0] % l.block[1];
    f.tid[2] = i / (l.block[0] * l.block[1]);
  }
  if (!l.synchronizes) {
    for (Fiber &f : l.fibers) {
      l.current = &f;
      (*l.kernel)();
      if (!l.error.empty())
        return l.error;
    }
    return "";
  }
  for (Fiber &f : l.fibers) {
    f.started = false;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiberMain, 0);
  }
  while (true) {
    for (Fiber &f : l.fibers)
      if (f.state == Fiber::Ready)
        resume(l, f);
    int64_t done = 0, atBarrier = 0;
    for (const Fiber &f : l.fibers) {
      done += f.state == Fiber::Done;
      atBarrier += f.state == Fiber::AtBarrier;
    }
    if (done == n)
      return "";
    if (atBarrier == n) {
      for (Fiber &f : l.fibers)
        f.state = Fiber::Ready;
      continue;
    }
    // A shuffle of width W needs the warp's first W lanes (gpu.shuffle's rule; the
    // others may be elsewhere, e.g. at the barrier after a partial reduction).
    bool released = false;
    for (int64_t w = 0; w < n; w += kWarp) {
      int64_t count = std::min(kWarp, n - w);
      Fiber *lanes = &l.fibers[w];
      // mma.sync is .aligned: every lane of a full warp executes it together.
      int64_t atMma = 0;
      for (int64_t lane = 0; lane < count; ++lane)
        atMma += lanes[lane].state == Fiber::AtMma;
      if (atMma == kWarp) {
        std::string error = multiply(lanes);
        if (!error.empty())
          return error;
        released = true;
        continue;
      }
      if (atMma)
        continue;
      int64_t waiting = 0;
      for (int64_t lane = 0; lane < count; ++lane)
        waiting += lanes[lane].state == Fiber::AtShuffle;
      if (!waiting)
        continue;
      int64_t width = lanes[0].state == Fiber::AtShuffle ? lanes[0].width : 0;
      bool ready = width == std::min<int64_t>(waiting, kWarp) ||
                   (waiting == count && width >= count);
      for (int64_t lane = 0; ready && lane < waiting; ++lane)
        ready = lanes[lane].state == Fiber::AtShuffle && lanes[lane].width == width;
      if (ready) {
        exchange(lanes, waiting);
        released = true;
      }
    }
    if (released)
      continue;
    return atBarrier && done ? "threads returned while others wait at a barrier"
                             : "deadlock: threads wait at a barrier, shuffle or mma.sync that "
                               "not all of their block or warp reach";
  }
}

} // namespace

Status simLaunch(const char *name, SimDim3 grid, SimDim3 block, bool synchronizes,
                 const std::function<void()> &kernel) {
  Launch l;
  l.kernel = &kernel;
  l.synchronizes = synchronizes;
  l.grid[0] = grid.x, l.grid[1] = grid.y, l.grid[2] = grid.z;
  l.block[0] = block.x, l.block[1] = block.y, l.block[2] = block.z;
  int64_t threads = block.x * block.y * block.z;
  if (threads <= 0 || threads > 1024 || grid.x <= 0 || grid.y <= 0 || grid.z <= 0)
    return Status::error(std::string(name) + ": invalid launch geometry");
  l.fibers.resize(static_cast<size_t>(threads));
  if (synchronizes)
    for (Fiber &f : l.fibers) {
      f.stack.reset(new char[kStackBytes]);
#if KILN_TSAN_FIBERS
      f.tsanFiber = __tsan_create_fiber(0);
#endif
    }
#if KILN_TSAN_FIBERS
  l.tsanScheduler = __tsan_get_current_fiber();
#endif
  Launch *outer = tLaunch;
  tLaunch = &l;
  std::string error;
  for (int64_t z = 0; z < grid.z && error.empty(); ++z)
    for (int64_t y = 0; y < grid.y && error.empty(); ++y)
      for (int64_t x = 0; x < grid.x && error.empty(); ++x) {
        l.bid[0] = x, l.bid[1] = y, l.bid[2] = z;
        error = runBlock(l);
        if (!error.empty())
          error = std::string(name) + ": block (" + std::to_string(x) + ", " +
                  std::to_string(y) + ", " + std::to_string(z) + "): " + error;
      }
  tLaunch = outer;
#if KILN_TSAN_FIBERS
  for (Fiber &f : l.fibers)
    if (f.tsanFiber)
      __tsan_destroy_fiber(f.tsanFiber);
#endif
  return error.empty() ? Status::ok() : Status::error(error);
}

} // namespace kiln::rt

using kiln::rt::Fiber;
using kiln::rt::tLaunch;

extern "C" {
int64_t kiln_sim_thread_id(int32_t dim) { return tLaunch->current->tid[dim]; }
int64_t kiln_sim_block_id(int32_t dim) { return tLaunch->bid[dim]; }
int64_t kiln_sim_block_dim(int32_t dim) { return tLaunch->block[dim]; }
int64_t kiln_sim_grid_dim(int32_t dim) { return tLaunch->grid[dim]; }
void kiln_sim_barrier(void) { kiln::rt::yieldAs(Fiber::AtBarrier); }
int32_t kiln_sim_shuffle(int32_t value, int32_t offset, int32_t width, int32_t mode) {
  Fiber &f = *tLaunch->current;
  f.value = value, f.offset = offset, f.width = width, f.mode = mode;
  kiln::rt::yieldAs(Fiber::AtShuffle);
  return f.result;
}
int32_t kiln_sim_shuffle_valid(void) { return tLaunch->current->valid; }
void kiln_sim_mma_sync(int32_t kind, int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                           int32_t b0, int32_t b1, float c0, float c1, float c2, float c3) {
  Fiber &f = *tLaunch->current;
  f.mmaKind = kind;
  const int32_t a[4] = {a0, a1, a2, a3}, b[2] = {b0, b1};
  const float c[4] = {c0, c1, c2, c3};
  for (int i = 0; i < 4; ++i) {
    f.mmaA[i] = static_cast<uint32_t>(a[i]);
    f.mmaC[i] = c[i];
  }
  for (int i = 0; i < 2; ++i)
    f.mmaB[i] = static_cast<uint32_t>(b[i]);
  kiln::rt::yieldAs(Fiber::AtMma);
}
float kiln_sim_mma_result(int32_t index) { return tLaunch->current->mmaD[index]; }
void kiln_sim_cp_async(int64_t dst, int64_t src, int64_t bytes, int64_t srcBytes) {
  Fiber &f = *tLaunch->current;
  f.copies.push_back({reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src),
                      bytes, srcBytes, f.committed});
}
void kiln_sim_cp_async_commit(void) { ++tLaunch->current->committed; }
void kiln_sim_cp_async_wait(int32_t groups) {
  Fiber &f = *tLaunch->current;
  size_t kept = 0;
  for (Fiber::Copy &c : f.copies) {
    if (c.group < f.committed - groups) {
      int64_t n = std::min(c.srcBytes, c.bytes);
      std::memcpy(c.dst, c.src, static_cast<size_t>(n));
      std::memset(static_cast<char *>(c.dst) + n, 0, static_cast<size_t>(c.bytes - n));
    } else {
      f.copies[kept++] = c;
    }
  }
  f.copies.resize(kept);
}
}
