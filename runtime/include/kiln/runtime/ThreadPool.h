//===- ThreadPool.h - The host kernels' threads ----------------*- C++ -*-===//
//
// A host kernel's outermost parallel loop runs on every core: kiln-host-parallel
// outlines its body into a function of an iteration range and the kernel calls
// kiln_parallel_for, which splits the range into chunks that the calling thread and
// the process's pool run at once, and returns when all have run.
//
// One pool per process, made on first use: KILN_NUM_THREADS threads in all (the
// caller counts as one), or one per hardware thread. The plan's streams share it: a
// stream's caller always runs its own chunks too, so a busy pool delays no stream,
// and a run never has more threads working than the pool's size plus its streams.
// Idle workers spin briefly (a model's kernels follow each other within
// microseconds), then sleep.
//
// ThreadSanitizer builds default to one thread, so that a pool worker running two
// streams' chunks one after another cannot order those streams for the sanitizer and
// hide a missing plan event (HostStreams.h); KILN_NUM_THREADS still sets it.
//
//   kiln::rt::ThreadPool pool(4);
//   pool.parallelFor(n, [](void *ctx, int64_t begin, int64_t end) {...}, &ctx);
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

class ThreadPool {
public:
  /// `threads` in all, the caller of parallelFor included (threads - 1 workers).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return static_cast<int>(workers.size()) + 1; }

  using RangeFn = void (*)(void *context, int64_t begin, int64_t end);
  /// Calls fn(context, b, e) for disjoint ranges covering [0, n), on this thread
  /// and the pool's, and returns when every call has returned. Safe to call from
  /// several threads at once; not from inside `fn`.
  void parallelFor(int64_t n, RangeFn fn, void *context);

  /// The process's pool (KILN_NUM_THREADS, else std::thread::hardware_concurrency).
  static ThreadPool &global();
  /// The size global() has or will have.
  static int defaultSize();

private:
  struct Job {
    RangeFn fn;
    void *context;
    int64_t n, chunks;
    std::atomic<int64_t> next{0}, done{0};
    std::atomic<int> users{0}; // workers that may still claim a chunk
  };
  void work();
  static void runChunks(Job &job);

  std::vector<std::thread> workers;
  std::mutex mutex; // guards jobs, stopping
  std::condition_variable wake;
  std::vector<Job *> jobs;
  bool stopping = false;
  std::atomic<int> pending{0}; // jobs.size(), read by spinning workers
};

} // namespace kiln::rt

extern "C" {
/// What host kernels call: fn(args, b, e) over [0, n) on the global pool.
void kiln_parallel_for(void (*fn)(void **args, int64_t begin, int64_t end), void **args,
                       int64_t n);
}

#endif // KILN_RUNTIME_THREADPOOL_H
