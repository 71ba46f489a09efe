//===- HostStreams.cpp - A plan's streams as threads on the host ----------===//
//
// This file implements HostStreams (HostStreams.h). Each worker has a lock for
// "start run N" and one for "finished"; each event its own lock and the run
// number that recorded it, so nothing is reset between runs.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/HostStreams.h"

namespace kiln::rt {

HostStreams::HostStreams(int numStreams, int numEvents) {
  for (int e = 0; e < numEvents; ++e)
    events.push_back(std::make_unique<Event>());
  for (int s = 1; s < numStreams; ++s) {
    workers.push_back(std::make_unique<Worker>());
    Worker &w = *workers.back();
    w.thread = std::thread([this, &w, s] { work(w, s); });
  }
}

HostStreams::~HostStreams() {
  for (auto &w : workers) {
    {
      std::lock_guard<std::mutex> lock(w->startMutex);
      w->stopping = true;
    }
    w->startCv.notify_all();
    w->thread.join();
  }
}

void HostStreams::work(Worker &w, int stream) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(w.startMutex);
      w.startCv.wait(lock, [&] { return w.stopping || w.go != seen; });
      if (w.stopping)
        return;
      seen = w.go;
    }
    // `body` and `generation` were set before `go`, under the start lock.
    Status s = (*body)(stream);
    if (!s)
      abort();
    {
      std::lock_guard<std::mutex> lock(w.endMutex);
      w.result = std::move(s);
      w.finished = true;
    }
    w.endCv.notify_all();
  }
}

Status HostStreams::run(const std::function<Status(int)> &task) {
  body = &task;
  ++generation;
  aborted.store(false, std::memory_order_relaxed);
  for (auto &w : workers) {
    {
      std::lock_guard<std::mutex> lock(w->endMutex);
      w->finished = false;
    }
    {
      std::lock_guard<std::mutex> lock(w->startMutex);
      w->go = generation;
    }
    w->startCv.notify_all();
  }
  Status first = task(0);
  if (!first)
    abort();
  for (auto &w : workers) {
    std::unique_lock<std::mutex> lock(w->endMutex);
    w->endCv.wait(lock, [&] { return w->finished; });
    if (first && !w->result)
      first = w->result;
  }
  body = nullptr;
  return first;
}

void HostStreams::record(int event) {
  Event &e = *events[static_cast<size_t>(event)];
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    e.recordedIn = generation;
  }
  e.cv.notify_all();
}

bool HostStreams::wait(int event) {
  Event &e = *events[static_cast<size_t>(event)];
  std::unique_lock<std::mutex> lock(e.mutex);
  e.cv.wait(lock, [&] {
    return e.recordedIn == generation || aborted.load(std::memory_order_relaxed);
  });
  return e.recordedIn == generation;
}

void HostStreams::abort() {
  aborted.store(true, std::memory_order_relaxed);
  // Through each event's lock, so that a waiter that has just found the flag
  // clear is already waiting when the notification comes.
  for (auto &e : events) {
    { std::lock_guard<std::mutex> lock(e->mutex); }
    e->cv.notify_all();
  }
}

} // namespace kiln::rt
