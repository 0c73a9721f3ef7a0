#include "runtime/report_hub.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>

#include "base/spin.h"

namespace openacl::rt {

namespace {
// The report thread and a stream blocked on a callback poll this long before
// sleeping, so a callback round trip needs no futex wake-up on either side.
constexpr std::chrono::microseconds kHandOffPoll{50};
}  // namespace

struct Done {
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> finished{false};
  void signal() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished.store(true, std::memory_order_release);
    }
    cv.notify_all();
  }
  void wait() {
    if (spin_until([&] { return finished.load(std::memory_order_acquire); }, kHandOffPoll)) return;
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return finished.load(std::memory_order_acquire); });
  }
};

Status ReportHub::subscribe(uint64_t thread_id, const Stream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = bindings_.find(stream);
  if (it != bindings_.end())
    return Errorf(code::kRtStreamSubscribe,
                  "stream %p is already subscribed by thread %llu; a stream has one report thread — "
                  "unsubscribe it first",
                  static_cast<const void*>(stream), static_cast<unsigned long long>(it->second));
  bindings_[stream] = thread_id;
  if (!inboxes_.count(thread_id)) inboxes_[thread_id] = std::make_shared<Inbox>();
  return Status::Ok();
}

Status ReportHub::unsubscribe(uint64_t thread_id, const Stream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = bindings_.find(stream);
  if (it == bindings_.end() || it->second != thread_id)
    return Errorf(code::kRtStreamSubscribe, "stream %p is not subscribed by thread %llu",
                  static_cast<const void*>(stream), static_cast<unsigned long long>(thread_id));
  bindings_.erase(it);
  return Status::Ok();
}

uint64_t ReportHub::subscriber(const Stream* stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = bindings_.find(stream);
  return it == bindings_.end() ? 0 : it->second;
}

void ReportHub::drop_stream(const Stream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  bindings_.erase(stream);
}

std::shared_ptr<ReportHub::Inbox> ReportHub::inbox(uint64_t thread_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& box = inboxes_[thread_id];
  if (!box) box = std::make_shared<Inbox>();
  return box;
}

void ReportHub::deliver(uint64_t thread_id, Fn fn, void* data, bool block) {
  std::shared_ptr<Done> done = block ? std::make_shared<Done>() : nullptr;
  std::shared_ptr<Inbox> box;
  {
    // Pushing under the hub lock means shutdown() either sees this call (and
    // releases it) or it was never queued.
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_down_) return;
    auto& slot = inboxes_[thread_id];
    if (!slot) slot = std::make_shared<Inbox>();
    box = slot;
    std::lock_guard<std::mutex> box_lock(box->mutex);
    box->calls.push_back(Call{fn, data, done});
    box->pending.store(box->calls.size(), std::memory_order_release);
  }
  box->cv.notify_all();
  if (done) done->wait();
}

Status ReportHub::process(int64_t timeout_ms) {
  auto box = inbox(static_cast<uint64_t>(pthread_self()));
  std::deque<Call> ready;
  if (timeout_ms != 0)
    spin_until([&] { return box->pending.load(std::memory_order_acquire) != 0; },
               timeout_ms < 0 ? kHandOffPoll : std::min(kHandOffPoll, std::chrono::microseconds(timeout_ms * 1000)));
  {
    std::unique_lock<std::mutex> lock(box->mutex);
    auto has_calls = [&] { return !box->calls.empty(); };
    if (timeout_ms < 0) box->cv.wait(lock, has_calls);
    else box->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), has_calls);
    ready.swap(box->calls);
    box->pending.store(0, std::memory_order_release);
  }
  if (ready.empty())
    return Errorf(code::kRtReportTimeout, "no callback arrived within %lld ms", static_cast<long long>(timeout_ms));
  for (Call& c : ready) {
    c.fn(c.data);
    if (c.done) c.done->signal();
  }
  return Status::Ok();
}

void ReportHub::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  shut_down_ = true;
  bindings_.clear();
  for (auto& [tid, box] : inboxes_) {
    std::lock_guard<std::mutex> lock(box->mutex);
    for (Call& c : box->calls)
      if (c.done) c.done->signal();
    box->calls.clear();
    box->pending.store(0, std::memory_order_release);
  }
  inboxes_.clear();
}

void ReportHub::restart() {
  std::lock_guard<std::mutex> lock(mutex_);
  shut_down_ = false;
}

}  // namespace openacl::rt
