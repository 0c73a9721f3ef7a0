// A stream: an in-order task queue drained asynchronously by its own worker
// thread (started on the first task). Tasks are validated before they are queued;
// a task that still fails leaves a sticky error that the next synchronisation
// returns, naming the task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "base/status.h"

namespace openacl::rt {

class Context;

class Stream {
 public:
  using Task = std::function<Status()>;

  Stream(int device, Context* context, bool is_default, uint32_t priority, uint32_t flags);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Queues a task; `what` (a string literal) names it in error messages.
  void enqueue(Task task, const char* what);
  // Waits until every task queued before the call has run. timeout_ms < 0: forever.
  // Returns the first task failure since the last synchronisation (then clears it),
  // or kRtStreamSyncTimeout.
  Status synchronize(int64_t timeout_ms);
  bool idle() const;
  // True on the stream's own worker thread (inside one of its tasks).
  bool on_worker_thread() const;
  // Drops queued tasks that have not started (force destroy).
  void discard_pending();
  // Waits for the queue (unless discarded), stops the worker. Idempotent.
  void shutdown();

  int device() const { return device_; }
  Context* context() const { return context_; }
  bool is_default() const { return is_default_; }
  uint32_t priority() const { return priority_; }
  uint32_t flags() const { return flags_; }

 private:
  struct Item {
    Task task;
    const char* what;
    uint64_t seq;
  };
  void worker_loop();

  const int device_;
  Context* const context_;
  const bool is_default_;
  const uint32_t priority_;
  const uint32_t flags_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;  // worker waits for tasks
  std::condition_variable done_cv_;  // synchronizers wait for progress
  std::deque<Item> queue_;
  uint64_t enqueued_ = 0;   // tasks ever queued
  uint64_t completed_ = 0;  // tasks finished or discarded
  bool worker_sleeping_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> enqueue_hint_{0};    // lets the idle worker poll without the lock
  std::atomic<uint64_t> completed_hint_{0};  // lets synchronizers poll without the lock
  Status sticky_error_;
  std::thread worker_;
};

}  // namespace openacl::rt
