//===- ThreadPoolTest.cpp - The host kernels' thread pool -----------------===//
//
// ThreadPool::parallelFor splits a range across the caller and the pool's workers.
// Each test checks every index runs exactly once, from one thread or several at
// once (the plan's streams share the global pool); a ThreadSanitizer build checks
// that the writes made by workers are visible to the caller when it returns.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/ThreadPool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using kiln::rt::ThreadPool;

namespace {

/// Adds one to counts[i] for i in [begin, end).
void increment(void *context, int64_t begin, int64_t end) {
  auto &counts = *static_cast<std::vector<int> *>(context);
  for (int64_t i = begin; i < end; ++i)
    ++counts[static_cast<size_t>(i)];
}

bool eachOnce(const std::vector<int> &counts) {
  for (int c : counts)
    if (c != 1)
      return false;
  return true;
}

} // namespace

TEST_CASE("parallelFor runs every index once, for sizes around the chunk count") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {0, 1, 2, 3, 7, 31, 32, 33, 1000, 100003}) {
      std::vector<int> counts(static_cast<size_t>(n));
      pool.parallelFor(n, increment, &counts);
      INFO("threads " << threads << ", n " << n);
      CHECK(eachOnce(counts));
    }
  }
}

TEST_CASE("parallelFor uses the pool's threads") {
  ThreadPool pool(4);
  struct Seen {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    std::atomic<int> arrived{0};
  } seen;
  // Each chunk waits (bounded) until four have started: only four threads at once
  // can get there, so the set holds more than the caller.
  pool.parallelFor(
      4,
      [](void *context, int64_t, int64_t) {
        auto &s = *static_cast<Seen *>(context);
        {
          std::lock_guard<std::mutex> lock(s.mutex);
          s.ids.insert(std::this_thread::get_id());
        }
        s.arrived.fetch_add(1);
        for (int i = 0; i < 2000 && s.arrived.load() < 4; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      &seen);
  CHECK(seen.ids.size() > 1);
  CHECK(seen.ids.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("parallelFor from several threads at once (streams sharing the pool)") {
  ThreadPool pool(3);
  constexpr int kCallers = 4, kRounds = 200;
  std::vector<std::vector<int>> counts(kCallers);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        counts[c].assign(static_cast<size_t>(500 + 37 * c + r), 0);
        pool.parallelFor(static_cast<int64_t>(counts[c].size()), increment, &counts[c]);
        if (!eachOnce(counts[c]))
          failures.fetch_add(1);
      }
    });
  for (std::thread &t : callers)
    t.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("kiln_parallel_for: the entry kernels call, with their argument array") {
  std::vector<int> counts(4096);
  void *args[] = {&counts};
  kiln_parallel_for(
      [](void **a, int64_t begin, int64_t end) { increment(a[0], begin, end); }, args,
      static_cast<int64_t>(counts.size()));
  CHECK(eachOnce(counts));
  CHECK(ThreadPool::global().size() == ThreadPool::defaultSize());
}

TEST_CASE("KILN_NUM_THREADS sets the global pool's size") {
  const char *old = std::getenv("KILN_NUM_THREADS");
  std::string saved = old ? old : "";
  unsetenv("KILN_NUM_THREADS");
  int machine = ThreadPool::defaultSize();
  CHECK(machine >= 1);
  setenv("KILN_NUM_THREADS", "3", 1);
  CHECK(ThreadPool::defaultSize() == 3);
  // Not a thread count: the machine's.
  for (const char *bad : {"0", "-2", "x", "4x", ""}) {
    setenv("KILN_NUM_THREADS", bad, 1);
    INFO("KILN_NUM_THREADS=" << bad);
    CHECK(ThreadPool::defaultSize() == machine);
  }
  if (old)
    setenv("KILN_NUM_THREADS", saved.c_str(), 1);
  else
    unsetenv("KILN_NUM_THREADS");
}
