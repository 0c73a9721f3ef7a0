// Host callbacks (aclrtSubscribeReport / aclrtLaunchCallback / aclrtProcessReport).
// A stream is bound to one report thread; when the stream reaches a callback
// task it hands the call to that thread's inbox, and (BLOCK) waits for it to run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "base/status.h"

namespace openacl::rt {

class Stream;

class ReportHub {
 public:
  using Fn = void (*)(void*);

  Status subscribe(uint64_t thread_id, const Stream* stream);
  Status unsubscribe(uint64_t thread_id, const Stream* stream);
  // Thread bound to the stream, or 0.
  uint64_t subscriber(const Stream* stream) const;
  // Forget every binding of a stream being destroyed.
  void drop_stream(const Stream* stream);

  // Called from the stream's worker: delivers fn(data) to thread_id and, when
  // block is set, waits until it has run (or the hub shuts down).
  void deliver(uint64_t thread_id, Fn fn, void* data, bool block);
  // Runs what was delivered to the calling thread; waits up to timeout_ms
  // (< 0: forever) for the first. kRtReportTimeout when nothing ran.
  Status process(int64_t timeout_ms);

  // Teardown: releases every blocked stream and drops undelivered calls.
  void shutdown();
  void restart();

 private:
  struct Call {
    Fn fn;
    void* data;
    std::shared_ptr<struct Done> done;  // null for NO_BLOCK
  };
  struct Inbox {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Call> calls;
    std::atomic<size_t> pending{0};  // calls.size(), readable without the lock
  };
  std::shared_ptr<Inbox> inbox(uint64_t thread_id);

  mutable std::mutex mutex_;
  std::unordered_map<const Stream*, uint64_t> bindings_;
  std::unordered_map<uint64_t, std::shared_ptr<Inbox>> inboxes_;
  bool shut_down_ = false;
};

}  // namespace openacl::rt
