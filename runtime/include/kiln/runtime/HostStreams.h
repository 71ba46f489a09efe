//===- HostStreams.h - A plan's streams as threads on the host --*- C++ -*-===//
//
// The host and cuda-sim targets run a plan's streams for real: stream 0 on the
// calling thread, every other stream on a worker thread of its own (started once,
// reused by every run), and the plan's events as real synchronization: a wait
// blocks until another stream has recorded the event in this run, and nothing else
// orders the streams. A missing event in a plan then gives a wrong answer or a
// ThreadSanitizer report in CPU tests instead of passing by luck. A failing stream aborts the run's events, so no
// stream waits forever for one that stopped.
//
//   kiln::rt::HostStreams streams(3, 2);     // 3 streams, 2 events
//   Status s = streams.run([&](int stream) -> Status { ... });
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HOSTSTREAMS_H
#define KILN_RUNTIME_HOSTSTREAMS_H

#include "kiln/runtime/Tensor.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

class HostStreams {
public:
  HostStreams(int numStreams, int numEvents);
  ~HostStreams();
  HostStreams(const HostStreams &) = delete;
  HostStreams &operator=(const HostStreams &) = delete;

  /// Runs `body(s)` for every stream s at once and returns when all have returned:
  /// the first error, if any. Not reentrant: one run at a time per object.
  Status run(const std::function<Status(int)> &body);

  /// The plan's events, for the streams' bodies during a run.
  void record(int event);
  /// False when the run was aborted (another stream failed) instead.
  bool wait(int event);

private:
  // Streams synchronize only where the plan says: a worker's start with the run's
  // start, its end with the run's end, and each event on its own lock. No lock is
  // shared between streams in between, so a missing event is a race that
  // ThreadSanitizer sees, not one a common mutex happens to hide.
  struct Worker {
    std::thread thread;
    // Start (guards go, stopping) and end (guards finished, result) on separate
    // locks: the caller's work after the start must not order before the
    // worker's stream just because the worker woke late.
    std::mutex startMutex, endMutex;
    std::condition_variable startCv, endCv;
    uint64_t go = 0; // the run it was told to start
    bool stopping = false;
    bool finished = true;
    Status result;
  };
  struct Event {
    std::mutex mutex;
    std::condition_variable cv;
    uint64_t recordedIn = 0; // the run that recorded it
  };

  void work(Worker &w, int stream);
  void abort();

  const std::function<Status(int)> *body = nullptr;
  uint64_t generation = 0; // runs started
  std::atomic<bool> aborted{false};
  std::vector<std::unique_ptr<Worker>> workers; // streams 1..n-1
  std::vector<std::unique_ptr<Event>> events;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_HOSTSTREAMS_H
