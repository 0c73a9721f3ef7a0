// An event marks a point in a stream. Each record gets a generation number when
// it is queued; the stream completes that generation when it reaches it. Waiters
// wait for the generation that was latest when they started waiting.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace openacl::rt {

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Event(uint32_t flags) : flags_(flags) {}

  uint32_t flags() const { return flags_; }
  // Host side of record/reset: returns the generation the queued task carries.
  uint64_t begin_record();
  uint64_t latest_generation() const;
  // Stream side: the record `gen` has been reached.
  void complete(uint64_t gen);
  // Stream side of reset: back to "never recorded", unless recorded again since `gen`.
  void reset(uint64_t gen);

  // Latest record reached (false when never recorded or still pending).
  bool is_complete() const;
  bool ever_recorded() const;
  // Waits until generation `gen` is reached (or reset away). timeout_ms < 0: forever.
  // Returns false on timeout.
  bool wait(uint64_t gen, int64_t timeout_ms) const;
  // Timestamp of the latest record, if it is complete.
  bool timestamp(Clock::time_point* out) const;

 private:
  bool reached(uint64_t gen) const { return completed_ >= gen || recorded_ < gen; }

  const uint32_t flags_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  uint64_t recorded_ = 0;   // latest generation queued (0: never recorded)
  uint64_t completed_ = 0;  // latest generation reached
  std::atomic<uint64_t> completed_hint_{0};  // completed_, readable without the lock (only grows)
  uint64_t next_gen_ = 0;   // generations never repeat, even across resets
  Clock::time_point stamp_{};
};

}  // namespace openacl::rt
