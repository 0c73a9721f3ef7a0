// prof: op-info subscriptions (aclprofModelSubscribe): per subscribed model,
// one OpRecord per executed node goes to the user's pipe.
//
// Writing never blocks an execution. Records go into a bounded queue (default
// 16384 records, OPENACL_PROF_SUBSCRIBE_QUEUE overrides) that one writer
// thread per pipe drains with write()s of at most PIPE_BUF bytes (whole
// records, so a reader never sees a torn record). When the queue is full, for
// instance because nobody reads the pipe, new records are dropped and
// counted. Unsubscribing flushes the queue, waiting at most
// OPENACL_PROF_FLUSH_TIMEOUT_MS (default 2000 ms) for the reader, drops what
// is left, closes the write end (the reader sees EOF) and logs a warning with
// the number of records dropped. A reader that closed its end drops the rest
// the same way (SIGPIPE is blocked on the writer thread).
//
// Several models may share one pipe (the same fd): its write end is closed
// when the last of them is unsubscribed.
//
// Thread-safety: every function may be called from any thread; emit() is
// called by executing threads, concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace openacl::prof {

class PipeWriter;

// What an unsubscribe reports.
struct SubscriptionReport {
  uint64_t written = 0;  // records written to the pipe
  uint64_t dropped = 0;  // records the queue or the flush could not take
  bool closed = false;   // the write end was closed (last model on this pipe)
};

class ModelSubscription {
 public:
  ModelSubscription(uint32_t model_id, int device, bool time_info, std::shared_ptr<PipeWriter> writer);
  uint32_t model_id() const { return model_id_; }
  // One executed node. Never blocks; a record that does not fit is dropped.
  void emit(const std::string& op_name, const std::string& op_type, int64_t start_ns, int64_t end_ns,
            uint32_t thread_id) noexcept;
  const std::shared_ptr<PipeWriter>& writer() const { return writer_; }

 private:
  const uint32_t model_id_;
  const int device_;
  const bool time_info_;
  std::shared_ptr<PipeWriter> writer_;
};

// false: the model is already subscribed. The fd is the pipe's write end;
// from now on the library owns it (closes it at the last unsubscribe).
bool subscribe_model(uint32_t model_id, int device, int fd, bool time_info);
// false: the model is not subscribed.
bool unsubscribe_model(uint32_t model_id, SubscriptionReport* report);
bool model_subscribed(uint32_t model_id);
// The subscription of a model, or nullptr (check subscriptions_active() first).
std::shared_ptr<ModelSubscription> find_subscription(uint32_t model_id);
// Ends every subscription (aclFinalize); returns how many.
size_t unsubscribe_all();
// The fds subscriptions own now (a second config on the same fd shares it).
bool fd_in_use(int fd);

}  // namespace openacl::prof
