// An event marks a point in a stream. Each record gets a generation number when
// it is queued; the stream completes that generation when it reaches it. A wait
// waits for the generation that was latest when the wait was issued — a newer
// record completing elsewhere does not release it. Records on different streams
// may complete out of order, so pending generations are tracked one by one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace openacl::rt {

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Event(uint32_t flags) : flags_(flags) {}

  uint32_t flags() const { return flags_; }
  // Host side of record: returns the generation the queued task carries.
  uint64_t begin_record();
  uint64_t latest_generation() const;
  // Stream side: the record `gen` has been reached.
  void complete(uint64_t gen);
  // Stream side of reset: back to "never recorded", unless recorded again since `gen`.
  void reset(uint64_t gen);

  // Latest record reached (false when never recorded or still pending).
  bool is_complete() const;
  // Waits until generation `gen` is reached (or reset away). timeout_ms < 0: forever.
  // Returns false on timeout.
  bool wait(uint64_t gen, int64_t timeout_ms) const;
  // Timestamp of the latest record, if it is complete.
  bool timestamp(Clock::time_point* out) const;

 private:
  bool reached(uint64_t gen) const { return pending_.count(gen) == 0; }

  const uint32_t flags_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  uint64_t recorded_ = 0;      // latest generation queued (0: never recorded / reset)
  uint64_t next_gen_ = 0;      // generations never repeat, even across resets
  std::set<uint64_t> pending_; // queued, not yet reached
  uint64_t stamped_gen_ = 0;   // generation stamp_ belongs to
  Clock::time_point stamp_{};
};

}  // namespace openacl::rt
