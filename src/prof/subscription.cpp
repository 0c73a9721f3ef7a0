#include "prof/subscription.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log.h"
#include "prof/op_record.h"
#include "prof/trace.h"

namespace openacl::prof {

namespace {

size_t env_size(const char* name, size_t fallback, size_t lo) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || n < lo) {
    OACL_WARN("%s='%s' is not a number >= %zu; using %zu", name, v, lo, fallback);
    return fallback;
  }
  return static_cast<size_t>(n);
}

// Whole records per write(): at most PIPE_BUF bytes, so each write is atomic.
constexpr size_t kRecordsPerWrite = PIPE_BUF / sizeof(OpRecord);

}  // namespace

// Owns the write end of one pipe and the thread that writes to it.
class PipeWriter {
 public:
  PipeWriter(int fd, size_t capacity) : fd_(fd), capacity_(capacity) {
    thread_ = std::thread([this] { run(); });
  }
  ~PipeWriter() { finish(0); }
  PipeWriter(const PipeWriter&) = delete;
  PipeWriter& operator=(const PipeWriter&) = delete;

  int fd() const { return fd_; }

  bool push(const OpRecord& r) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!stopping_ && !broken_ && queue_.size() < capacity_) {
        queue_.push_back(r);
        cv_.notify_one();
        return true;
      }
      if (stopping_) return false;  // after unsubscribe: not counted, the caller forgets it
      ++dropped_;
    }
    return false;
  }

  // Flushes (waiting at most timeout_ms for the reader), closes the fd, joins.
  void finish(int timeout_ms) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (finished_) return;
      finished_ = true;
      stopping_ = true;
      deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }

  uint64_t written() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return written_;
  }
  uint64_t dropped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
  }

 private:
  void run() {
    // A reader that closed its end must not kill the process with SIGPIPE:
    // the write fails with EPIPE instead and the records are dropped.
    pthread_sigmask(SIG_BLOCK, &pipe_set(), nullptr);
    std::vector<OpRecord> batch;
    batch.reserve(kRecordsPerWrite);
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) return;
        const size_t n = std::min(queue_.size(), kRecordsPerWrite);
        batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      }
      const bool ok = write_batch(batch);
      std::lock_guard<std::mutex> lock(mutex_);
      if (ok) {
        written_ += batch.size();
        continue;
      }
      // The reader is gone or did not read in time: drop the batch and the rest.
      broken_ = true;
      for (const OpRecord& r : batch) forget_op_strings(r.op_index);
      for (const OpRecord& r : queue_) forget_op_strings(r.op_index);
      dropped_ += batch.size() + queue_.size();
      queue_.clear();
    }
  }

  // Waits for room (poll) so that it can give up at the unsubscribe deadline
  // instead of blocking forever in write() on a pipe nobody reads.
  bool write_batch(const std::vector<OpRecord>& batch) {
    const char* p = reinterpret_cast<const char*>(batch.data());
    size_t left = batch.size() * sizeof(OpRecord);
    while (left > 0) {
      pollfd pfd{fd_, POLLOUT, 0};
      const int pr = ::poll(&pfd, 1, 50);
      if (pr < 0 && errno != EINTR) return false;
      if (pr > 0 && (pfd.revents & (POLLERR | POLLNVAL))) return false;
      if (pr > 0 && (pfd.revents & POLLOUT)) {
        const ssize_t n = ::write(fd_, p, left);
        if (n > 0) {
          p += n;
          left -= static_cast<size_t>(n);
          continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
          if (errno == EPIPE) {  // consume the pending SIGPIPE the failed write raised
            const timespec zero{0, 0};
            (void)sigtimedwait(&pipe_set(), nullptr, &zero);
          }
          return false;
        }
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_ && std::chrono::steady_clock::now() >= deadline_) return false;
    }
    return true;
  }

  static const sigset_t& pipe_set() {
    static const sigset_t s = [] {
      sigset_t t;
      sigemptyset(&t);
      sigaddset(&t, SIGPIPE);
      return t;
    }();
    return s;
  }

  const int fd_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<OpRecord> queue_;
  bool stopping_ = false;
  bool finished_ = false;
  bool broken_ = false;
  std::chrono::steady_clock::time_point deadline_{};
  uint64_t written_ = 0;
  uint64_t dropped_ = 0;
  std::thread thread_;
};

ModelSubscription::ModelSubscription(uint32_t model_id, int device, bool time_info,
                                     std::shared_ptr<PipeWriter> writer)
    : model_id_(model_id), device_(device), time_info_(time_info), writer_(std::move(writer)) {}

void ModelSubscription::emit(const std::string& op_name, const std::string& op_type, int64_t start_ns,
                             int64_t end_ns, uint32_t tid) noexcept {
  try {
    OpRecord r{};
    r.model_id = model_id_;
    r.flag = 0;  // ACL_SUBSCRIBE_OP
    r.thread_id = tid;
    r.op_index = register_op_strings(op_name, op_type);
    if (time_info_) {
      r.start = static_cast<uint64_t>(start_ns / 1000);
      r.end = static_cast<uint64_t>(end_ns / 1000);
      r.duration = r.end >= r.start ? r.end - r.start : 0;
      r.execution_time = r.duration;
    }
    r.dev_id = static_cast<uint32_t>(device_);
    sign_record(&r);
    if (!writer_->push(r)) forget_op_strings(r.op_index);
  } catch (...) {
    // Out of memory for the strings: the record is lost, the execution goes on.
  }
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<uint32_t, std::shared_ptr<ModelSubscription>> models;
  std::map<int, std::weak_ptr<PipeWriter>> writers;  // by fd
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: executions may run during exit
  return *r;
}

}  // namespace

bool subscribe_model(uint32_t model_id, int device, int fd, bool time_info) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.models.count(model_id)) return false;
  std::shared_ptr<PipeWriter> writer;
  auto it = r.writers.find(fd);
  if (it != r.writers.end()) writer = it->second.lock();
  if (!writer) {
    writer = std::make_shared<PipeWriter>(fd, env_size("OPENACL_PROF_SUBSCRIBE_QUEUE", 16384, 1));
    r.writers[fd] = writer;
  }
  r.models[model_id] = std::make_shared<ModelSubscription>(model_id, device, time_info, std::move(writer));
  detail::g_subscriptions.store(static_cast<uint32_t>(r.models.size()), std::memory_order_relaxed);
  return true;
}

namespace {

// Takes one model's subscription out (caller holds the registry's mutex and
// has removed the model from `models`). Returns the writer to finish when no
// other model writes to the same pipe, else nullptr.
std::shared_ptr<PipeWriter> detach(Registry& r, const std::shared_ptr<ModelSubscription>& sub) {
  const std::shared_ptr<PipeWriter>& w = sub->writer();
  for (const auto& [id, other] : r.models)
    if (other->writer() == w) return nullptr;
  r.writers.erase(w->fd());
  return w;
}

// Flushes and closes (outside the registry's mutex: the flush may wait for the
// reader, and executions of other models look subscriptions up meanwhile).
SubscriptionReport finish(const std::shared_ptr<ModelSubscription>& sub, const std::shared_ptr<PipeWriter>& last) {
  SubscriptionReport rep;
  if (last) {
    last->finish(static_cast<int>(env_size("OPENACL_PROF_FLUSH_TIMEOUT_MS", 2000, 0)));
    rep.closed = true;
  }
  rep.written = sub->writer()->written();
  rep.dropped = sub->writer()->dropped();
  if (rep.closed && rep.dropped > 0)
    OACL_WARN("profiling subscription of model %u: %llu record(s) dropped (the pipe was not read fast enough or "
              "was closed; %llu written). Read the pipe while the model executes.",
              sub->model_id(), static_cast<unsigned long long>(rep.dropped),
              static_cast<unsigned long long>(rep.written));
  return rep;
}

}  // namespace

bool unsubscribe_model(uint32_t model_id, SubscriptionReport* report) {
  std::shared_ptr<ModelSubscription> sub;
  std::shared_ptr<PipeWriter> last;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.models.find(model_id);
    if (it == r.models.end()) return false;
    sub = it->second;
    r.models.erase(it);
    detail::g_subscriptions.store(static_cast<uint32_t>(r.models.size()), std::memory_order_relaxed);
    last = detach(r, sub);
  }
  SubscriptionReport rep = finish(sub, last);
  if (report) *report = rep;
  return true;
}

bool model_subscribed(uint32_t model_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.models.count(model_id) != 0;
}

std::shared_ptr<ModelSubscription> find_subscription(uint32_t model_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.models.find(model_id);
  return it == r.models.end() ? nullptr : it->second;
}

size_t unsubscribe_all() {
  std::vector<std::pair<std::shared_ptr<ModelSubscription>, std::shared_ptr<PipeWriter>>> ended;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    while (!r.models.empty()) {
      auto sub = r.models.begin()->second;
      r.models.erase(r.models.begin());
      ended.emplace_back(sub, detach(r, sub));
    }
    detail::g_subscriptions.store(0, std::memory_order_relaxed);
  }
  for (const auto& [sub, last] : ended) finish(sub, last);
  return ended.size();
}

bool fd_in_use(int fd) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.writers.find(fd);
  return it != r.writers.end() && !it->second.expired();
}

}  // namespace openacl::prof
