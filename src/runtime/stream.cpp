#include "runtime/stream.h"

#include <chrono>

#include "base/log.h"
#include "base/spin.h"

namespace openacl::rt {

namespace {
// A worker that just ran out of work polls this long before sleeping: back-to-back
// enqueues then cost no futex wake-up, and an idle worker still sleeps soon.
constexpr std::chrono::microseconds kIdlePoll{50};
}  // namespace

Stream::Stream(int device, Context* context, bool is_default, uint32_t priority, uint32_t flags)
    : device_(device), context_(context), is_default_(is_default), priority_(priority), flags_(flags) {}

Stream::~Stream() { shutdown(); }

void Stream::enqueue(Task task, const char* what) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      // A task queued on a stream being torn down by another thread: it can no
      // longer run; report it at the next synchronisation.
      if (sticky_error_.ok())
        sticky_error_ = Errorf(code::kRtParamInvalid, "task '%s' queued on a stream that was being destroyed", what);
      return;
    }
    queue_.push_back(Item{std::move(task), what, ++enqueued_});
    enqueue_hint_.store(enqueued_, std::memory_order_relaxed);
    if (!worker_.joinable()) worker_ = std::thread(&Stream::worker_loop, this);
    wake = worker_sleeping_;
  }
  if (wake) work_cv_.notify_one();
}

void Stream::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty()) {
      const uint64_t seen = enqueue_hint_.load(std::memory_order_relaxed);
      lock.unlock();
      spin_until(
          [&] {
            return enqueue_hint_.load(std::memory_order_relaxed) != seen || stopping_.load(std::memory_order_relaxed);
          },
          kIdlePoll);  // the locked check below decides
      lock.lock();
      while (queue_.empty() && !stopping_) {
        worker_sleeping_ = true;
        work_cv_.wait(lock);
        worker_sleeping_ = false;
      }
      if (queue_.empty() && stopping_) return;
    }
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status st;
    try {
      st = item.task();
    } catch (const std::exception& e) {
      st = Errorf(code::kRtInternalError, "exception: %s", e.what());
    } catch (...) {
      st = Errorf(code::kRtInternalError, "unknown exception");
    }
    item.task = nullptr;  // release captures outside the lock
    lock.lock();
    if (!st.ok()) {
      OACL_ERROR("stream %p: task #%llu '%s' failed (%d): %s", static_cast<void*>(this),
                 static_cast<unsigned long long>(item.seq), item.what, st.code(), st.message().c_str());
      if (sticky_error_.ok())
        sticky_error_ = Errorf(st.code(), "task #%llu '%s' failed: %s", static_cast<unsigned long long>(item.seq),
                               item.what, st.message().c_str());
    }
    ++completed_;
    completed_hint_.store(completed_, std::memory_order_release);
    done_cv_.notify_all();
  }
}

Status Stream::synchronize(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  if (completed_ < target && timeout_ms != 0) {
    // Short tasks finish within microseconds: poll before paying for a sleep.
    lock.unlock();
    spin_until([&] { return completed_hint_.load(std::memory_order_acquire) >= target; }, kIdlePoll);
    lock.lock();
  }
  auto done = [&] { return completed_ >= target; };
  if (timeout_ms < 0) {
    done_cv_.wait(lock, done);
  } else if (!done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), done)) {
    return Errorf(code::kRtStreamSyncTimeout, "stream still has %llu pending task(s) after %lld ms",
                  static_cast<unsigned long long>(target - completed_), static_cast<long long>(timeout_ms));
  }
  Status st = std::move(sticky_error_);
  sticky_error_ = Status::Ok();
  return st;
}

bool Stream::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= enqueued_;
}

bool Stream::on_worker_thread() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return worker_.joinable() && worker_.get_id() == std::this_thread::get_id();
}

void Stream::discard_pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  completed_ += queue_.size();
  completed_hint_.store(completed_, std::memory_order_release);
  queue_.clear();
  done_cv_.notify_all();
}

void Stream::shutdown() {
  std::thread worker;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = enqueued_;
    // From one of its own tasks the stream cannot drain: the running task is the caller.
    const bool from_worker = worker_.joinable() && worker_.get_id() == std::this_thread::get_id();
    if (!from_worker) done_cv_.wait(lock, [&] { return completed_ >= target; });
    stopping_ = true;
    worker = std::move(worker_);
  }
  work_cv_.notify_all();
  if (worker.joinable()) {
    if (worker.get_id() == std::this_thread::get_id()) worker.detach();  // destroyed from its own task
    else worker.join();
  }
}

}  // namespace openacl::rt
