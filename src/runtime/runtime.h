// runtime: devices, contexts, streams, events, the memory registry and host
// callbacks, over a Backend. Knows no acl* types: capi translates handles and
// enums into these calls and Status back into aclError (STYLE.md 1, 8).
//
// Thread-safety: every public member may be called from any thread. Objects are
// shared_ptr-owned by their tables; a destroyed handle fails lookup cleanly.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "runtime/backend.h"
#include "runtime/event.h"
#include "runtime/handle_table.h"
#include "runtime/memory_registry.h"
#include "runtime/report_hub.h"
#include "runtime/stream.h"

namespace openacl::rt {

class Context {
 public:
  Context(int device, bool is_default);
  ~Context();
  int device() const { return device_; }
  bool is_default() const { return is_default_; }
  bool alive() const { return alive_.load(std::memory_order_acquire); }
  Stream* default_stream() const { return default_stream_.get(); }

  void add_stream(const std::shared_ptr<Stream>& s);
  void forget_stream(const Stream* s);
  std::vector<std::shared_ptr<Stream>> streams() const;  // explicit streams
  // Waits for the default and explicit streams; first failure wins.
  Status synchronize(int64_t timeout_ms);
  // Marks the context dead and returns its explicit streams (caller destroys them).
  std::vector<std::shared_ptr<Stream>> retire();

 private:
  const int device_;
  const bool is_default_;
  std::atomic<bool> alive_{true};
  std::unique_ptr<Stream> default_stream_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Stream>> streams_;
};

struct Device {
  int id = 0;
  uint64_t capacity = 0;
  std::atomic<uint64_t> used{0};
  int refcount = 0;                   // aclrtSetDevice references (guarded by Runtime::mutex_)
  std::shared_ptr<Context> primary;   // default context while refcount > 0
};

// Copy directions as the caller declared them (aclrtMemcpyKind values).
enum class CopyKind : int {
  kHostToHost = 0, kHostToDevice = 1, kDeviceToHost = 2, kDeviceToDevice = 3, kDefault = 4,
  kHostToBufToDevice = 5, kInnerDeviceToDevice = 6, kInterDeviceToDevice = 7,
};

class Runtime {
 public:
  static Runtime& instance();

  // ---- lifecycle ----
  Status init(const char* config_path);
  Status finalize(bool all_references, uint64_t* remaining);
  bool initialized() const { return init_count_.load(std::memory_order_acquire) > 0; }
  Status require_init() const;
  const RuntimeConfig& config() const { return config_; }
  bool strict() const { return config_.strict; }
  Backend& backend() { return *backend_; }

  // ---- devices & contexts ----
  int device_count() const { return static_cast<int>(devices_.size()); }
  Status set_device(int id);
  Status reset_device(int id, bool force);
  Status check_device(int id) const;
  Status current_context(std::shared_ptr<Context>* out);  // kRtContextNull when none
  Status create_context(int device, std::shared_ptr<Context>* out);
  Status destroy_context(const void* handle);
  Status set_current_context(const void* handle);
  std::shared_ptr<Context> find_context(const void* handle) const { return contexts_.get(handle); }
  Status synchronize_device(int64_t timeout_ms);

  // ---- streams & events ----
  Status create_stream(uint32_t priority, uint32_t flags, void** handle);
  Status destroy_stream(const void* handle, bool force);
  // nullptr resolves to the current context's default stream.
  Status resolve_stream(const void* handle, Stream** out, std::shared_ptr<Stream>* keep);
  Status create_event(uint32_t flags, void** handle);
  Status destroy_event(const void* handle);
  Status find_event(const void* handle, std::shared_ptr<Event>* out) const;
  void set_wait_timeout_seconds(uint32_t s) { wait_timeout_s_.store(s); }
  uint32_t wait_timeout_seconds() const { return wait_timeout_s_.load(); }

  // ---- memory ----
  Status malloc_device(size_t size, bool padded, void** out);
  Status free_device(void* ptr);
  Status malloc_host(size_t size, void** out);
  Status free_host(void* ptr);
  Status mem_info(size_t* free_bytes, size_t* total_bytes);
  Status check_range_in_one_allocation(const void* ptr, size_t size, const char* what);
  // Validates a 1-D or 2-D copy; `rows`/pitches describe the 2-D case (rows 1 for 1-D).
  Status check_copy(void* dst, size_t dst_span, const void* src, size_t src_span, CopyKind kind,
                    const char* api);
  Status check_fill(void* dst, size_t count, const char* api);
  MemoryRegistry& memory() { return memory_; }

  ReportHub& reports() { return reports_; }

 private:
  Runtime() = default;
  void teardown_locked();
  Status check_access(const void* p, size_t span, const char* role, const char* api, std::optional<Allocation>* found);

  std::atomic<int> init_count_{0};
  mutable std::mutex mutex_;  // lifecycle, devices, contexts
  RuntimeConfig config_;
  bool config_locked_ = false;
  std::string first_config_text_;
  Backend* backend_ = &cpu_backend();
  std::vector<std::unique_ptr<Device>> devices_;
  std::shared_ptr<Context> implicit_default_;  // from acl.json defaultDevice
  HandleTable<Context> contexts_;
  HandleTable<Stream> streams_;
  HandleTable<Event> events_;
  MemoryRegistry memory_;
  ReportHub reports_;
  std::atomic<uint32_t> wait_timeout_s_{0};
};

// Warns once per distinct key (e.g. "aclrtMemcpy/kind=1/actual=host->host").
void warn_once(const std::string& key, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace openacl::rt
