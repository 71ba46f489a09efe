//===- HostStreamsTest.cpp - A plan's streams as threads ------------------===//
//
// HostStreams runs one function per stream at once; events order them. The data
// the streams hand each other is plain memory: only the events make it safe, so a
// ThreadSanitizer build (-DKILN_SANITIZE=thread) checks the synchronization too.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/HostStreams.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

using kiln::rt::HostStreams;
using kiln::rt::Status;

namespace {

/// A fork/join plan over 4 streams: stream 0 writes `in`, streams 1-3 each wait
/// for it and compute a part, stream 0 waits for all three and sums.
struct ForkJoin {
  HostStreams streams{4, 4};
  std::vector<int64_t> in = std::vector<int64_t>(1000), part = std::vector<int64_t>(3);
  int64_t total = 0;

  Status run(int64_t seed) {
    return streams.run([&](int s) -> Status {
      if (s == 0) {
        for (size_t i = 0; i < in.size(); ++i)
          in[i] = seed + static_cast<int64_t>(i);
        streams.record(0);
        for (int e = 1; e <= 3; ++e)
          if (!streams.wait(e))
            return Status::ok();
        total = part[0] + part[1] + part[2];
        return Status::ok();
      }
      if (!streams.wait(0))
        return Status::ok();
      int64_t sum = 0;
      for (size_t i = static_cast<size_t>(s - 1); i < in.size(); i += 3)
        sum += in[i];
      part[static_cast<size_t>(s - 1)] = sum;
      streams.record(s);
      return Status::ok();
    });
  }
};

int64_t expected(int64_t seed) { return 1000 * seed + 999 * 1000 / 2; }

} // namespace

TEST_CASE("HostStreams orders streams with events, run after run", "[streams]") {
  ForkJoin plan;
  for (int64_t seed = 0; seed < 200; ++seed) {
    REQUIRE(plan.run(seed));
    REQUIRE(plan.total == expected(seed));
  }
}

TEST_CASE("A failing stream aborts the run's waits and reports its error", "[streams]") {
  HostStreams streams(3, 2);
  Status s = streams.run([&](int stream) -> Status {
    if (stream == 1)
      return Status::error("stream 1 failed", KILN_ERROR_RUN);
    // Streams 0 and 2 wait for an event stream 1 never records.
    return streams.wait(stream == 0 ? 0 : 1) ? Status::error("waited past an abort")
                                             : Status::ok();
  });
  REQUIRE_FALSE(s);
  CHECK(s.message() == "stream 1 failed");
  CHECK(s.code() == KILN_ERROR_RUN);
  // The next run starts clean.
  ForkJoin plan;
  REQUIRE(plan.run(7));
  CHECK(plan.total == expected(7));
}

TEST_CASE("8 threads run 8 plans of their own at once", "[streams]") {
  std::vector<ForkJoin> plans(8);
  std::vector<int> failures(8, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < plans.size(); ++t)
    threads.emplace_back([&, t] {
      for (int64_t seed = 0; seed < 50; ++seed)
        if (!plans[t].run(seed) || plans[t].total != expected(seed))
          ++failures[t];
    });
  for (std::thread &t : threads)
    t.join();
  for (int f : failures)
    CHECK(f == 0);
}

TEST_CASE("One stream runs on the caller, without threads", "[streams]") {
  HostStreams streams(1, 0);
  std::thread::id caller = std::this_thread::get_id(), ran;
  REQUIRE(streams.run([&](int) {
    ran = std::this_thread::get_id();
    return Status::ok();
  }));
  CHECK(ran == caller);
}
