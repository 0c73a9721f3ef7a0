#include "runtime/event.h"

#include "base/spin.h"

namespace openacl::rt {

uint64_t Event::begin_record() {
  std::lock_guard<std::mutex> lock(mutex_);
  recorded_ = ++next_gen_;
  pending_.insert(recorded_);
  return recorded_;
}

uint64_t Event::latest_generation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

void Event::complete(uint64_t gen) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(gen);
    if (gen == recorded_) {
      stamp_ = Clock::now();
      stamped_gen_ = gen;
    }
  }
  cv_.notify_all();
}

void Event::reset(uint64_t gen) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (recorded_ <= gen) {
      recorded_ = 0;
      pending_.clear();  // releases waiters on earlier records, as a reset does
    }
  }
  cv_.notify_all();
}

bool Event::is_complete() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_ != 0 && reached(recorded_);
}

bool Event::wait(uint64_t gen, int64_t timeout_ms) const {
  auto done_locked = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    return reached(gen);
  };
  // Poll briefly first: a record queued behind short work completes within microseconds.
  if (timeout_ms != 0 && spin_until(done_locked, std::chrono::microseconds(50))) return true;
  std::unique_lock<std::mutex> lock(mutex_);
  auto done = [&] { return reached(gen); };
  if (timeout_ms < 0) {
    cv_.wait(lock, done);
    return true;
  }
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), done);
}

bool Event::timestamp(Clock::time_point* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recorded_ == 0 || !reached(recorded_) || stamped_gen_ != recorded_) return false;
  *out = stamp_;
  return true;
}

}  // namespace openacl::rt
