//===- ThreadPool.cpp - The host kernels' threads -------------------------===//
//
// This file implements ThreadPool (ThreadPool.h). A job lives on its caller's
// stack, in the pool's list while it may have chunks left. A worker takes a job
// from the list under the lock and counts itself as a user; it claims chunks with
// an atomic counter, without the lock, and stops using the job once a claim fails.
// The caller, its own claims done, takes the job off the list and waits until every
// chunk has run and no worker uses the job, and only then returns.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/ThreadPool.h"

#include <algorithm>
#include <cstdlib>

#ifdef __linux__
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KILN_PAUSE() _mm_pause()
#else
#define KILN_PAUSE() std::this_thread::yield()
#endif

namespace kiln::rt {

namespace {
// How long an idle worker looks for the next job before it sleeps: about 50 us,
// longer than the gap between two kernels of a run, short enough that a worker
// does not take a core from a library call's threads for long.
constexpr int kSpinIterations = 2000;
// Chunks per thread: enough for a late-starting worker or a busy core to even out.
constexpr int64_t kChunksPerThread = 4;
} // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &w : workers)
    w.join();
}

void ThreadPool::runChunks(Job &job) {
  for (;;) {
    int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks)
      return;
    job.fn(job.context, c * job.n / job.chunks, (c + 1) * job.n / job.chunks);
    job.done.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::work() {
  for (;;) {
    Job *job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex);
      for (;;) {
        if (stopping)
          return;
        if (!jobs.empty())
          break;
        lock.unlock();
        for (int i = 0; i < kSpinIterations && !pending.load(std::memory_order_relaxed); ++i)
          KILN_PAUSE();
        lock.lock();
        if (stopping)
          return;
        if (jobs.empty())
          wake.wait(lock, [&] { return stopping || !jobs.empty(); });
      }
      // The oldest job first; it leaves the list once all its chunks are claimed.
      job = jobs.front();
      if (job->next.load(std::memory_order_relaxed) >= job->chunks) {
        jobs.erase(jobs.begin());
        pending.store(static_cast<int>(jobs.size()), std::memory_order_relaxed);
        continue;
      }
      job->users.fetch_add(1, std::memory_order_relaxed);
    }
    runChunks(*job);
    // The last access: after it the caller may return and the job be gone.
    job->users.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::parallelFor(int64_t n, RangeFn fn, void *context) {
  if (n <= 0)
    return;
  if (workers.empty() || n == 1) {
    fn(context, 0, n);
    return;
  }
  Job job;
  job.fn = fn;
  job.context = context;
  job.n = n;
  job.chunks = std::min<int64_t>(n, kChunksPerThread * size());
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobs.push_back(&job);
    pending.store(static_cast<int>(jobs.size()), std::memory_order_relaxed);
  }
  wake.notify_all();
  runChunks(job);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = std::find(jobs.begin(), jobs.end(), &job);
    if (it != jobs.end())
      jobs.erase(it);
    pending.store(static_cast<int>(jobs.size()), std::memory_order_relaxed);
  }
  // Other threads' chunks are short (the caller ran its share meanwhile): spin,
  // then yield, for a worker that lost its core (more threads than cores) to run.
  for (int i = 0; job.done.load(std::memory_order_acquire) < job.chunks ||
                  job.users.load(std::memory_order_acquire) > 0;
       ++i) {
    if (i < kSpinIterations)
      KILN_PAUSE();
    else
      std::this_thread::yield();
  }
}

int ThreadPool::defaultSize() {
  if (const char *env = std::getenv("KILN_NUM_THREADS")) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1)
      return static_cast<int>(std::min<long>(v, 1024));
  }
#ifdef KILN_SANITIZE_THREAD
  return 1;
#else
#ifdef __linux__
  // The CPUs this process may run on (a container's cpuset), not the machine's.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  return std::max(1u, std::thread::hardware_concurrency());
#endif
}

ThreadPool &ThreadPool::global() {
  static ThreadPool pool(defaultSize());
  return pool;
}

} // namespace kiln::rt

namespace {
struct KernelRange {
  void (*fn)(void **, int64_t, int64_t);
  void **args;
};
} // namespace

extern "C" void kiln_parallel_for(void (*fn)(void **, int64_t, int64_t), void **args,
                                  int64_t n) {
  KernelRange range{fn, args};
  kiln::rt::ThreadPool::global().parallelFor(
      n,
      [](void *context, int64_t begin, int64_t end) {
        auto *r = static_cast<KernelRange *>(context);
        r->fn(r->args, begin, end);
      },
      &range);
}
