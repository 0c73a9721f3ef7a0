#include "runtime/runtime.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <unordered_set>

#include "base/log.h"

namespace openacl::rt {

namespace {

thread_local std::shared_ptr<Context> t_current;

constexpr uint32_t kLowestPriority = 7;

}  // namespace

// ---------------------------------------------------------------- Context

Context::Context(int device, bool is_default)
    : device_(device), is_default_(is_default), default_stream_(std::make_unique<Stream>(device, this, true, 0, 0)) {}

Context::~Context() { default_stream_->shutdown(); }

void Context::add_stream(const std::shared_ptr<Stream>& s) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(s);
}

void Context::forget_stream(const Stream* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(), [&](auto& p) { return p.get() == s; }),
                 streams_.end());
}

std::vector<std::shared_ptr<Stream>> Context::streams() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return streams_;
}

Status Context::synchronize(int64_t timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  auto remaining = [&]() -> int64_t {
    if (timeout_ms < 0) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left < 0 ? 0 : left;
  };
  Status first = default_stream_->synchronize(remaining());
  for (auto& s : streams()) {
    Status st = s->synchronize(remaining());
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

std::vector<std::shared_ptr<Stream>> Context::retire() {
  alive_.store(false, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  return std::move(streams_);
}

// ---------------------------------------------------------------- lifecycle

Runtime& Runtime::instance() {
  // Never destroyed: threads and atexit handlers may still call in at exit.
  static Runtime* rt = new Runtime();
  return *rt;
}

Status Runtime::require_init() const {
  if (initialized()) return Status::Ok();
  return Errorf(code::kUninitialize, "OpenACL is not initialised; call aclInit (acl.init) first");
}

Status Runtime::init(const char* config_path) {
  std::lock_guard<std::mutex> lock(mutex_);
  int count = init_count_.load();
  if (count > 0) {
    init_count_.store(count + 1, std::memory_order_release);
    return Errorf(code::kRepeatInitialize,
                  "already initialised (now %d references); the call was counted — each aclInit needs an "
                  "aclFinalizeReference, or one aclFinalize ends all",
                  count + 1);
  }
  log_configure_from_env();
  RuntimeConfig cfg = config_from_env();
  if (config_path && *config_path) OPENACL_RETURN_IF_ERROR(apply_acl_json(config_path, cfg));
  if (!backend_->open_devices(cfg.device_count, cfg.device_memory))
    return Errorf(code::kRtMemoryAllocation,
                  "cannot reserve %d x %llu bytes of address space for the devices; lower OPENACL_DEVICE_MEMORY "
                  "or OPENACL_DEVICE_COUNT",
                  cfg.device_count, static_cast<unsigned long long>(cfg.device_memory));
  config_ = cfg;
  devices_.clear();
  for (int i = 0; i < cfg.device_count; ++i) {
    auto d = std::make_unique<Device>();
    d->id = i;
    d->capacity = cfg.device_memory;
    devices_.push_back(std::move(d));
  }
  reports_.restart();
  if (cfg.default_device >= 0) {
    Device& d = *devices_[static_cast<size_t>(cfg.default_device)];
    d.primary = std::make_shared<Context>(d.id, true);
    d.refcount = 1;
    contexts_.add(d.primary);
    implicit_default_ = d.primary;
  }
  init_count_.store(1, std::memory_order_release);
  OACL_INFO("initialised: %d device(s) x %llu bytes, soc %s, strict %d, backend %s", cfg.device_count,
            static_cast<unsigned long long>(cfg.device_memory), cfg.soc_name.c_str(), cfg.strict ? 1 : 0,
            backend_->name());
  return Status::Ok();
}

Status Runtime::finalize(bool all_references, uint64_t* remaining) {
  std::vector<std::shared_ptr<Stream>> streams;
  std::vector<std::shared_ptr<Context>> contexts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int count = init_count_.load();
    if (count == 0) {
      if (remaining) *remaining = 0;
      return Errorf(code::kRepeatFinalize, "not initialised (already finalised, or aclInit never succeeded)");
    }
    if (!all_references && count > 1) {
      init_count_.store(count - 1, std::memory_order_release);
      if (remaining) *remaining = static_cast<uint64_t>(count - 1);
      return Status::Ok();
    }
    init_count_.store(0, std::memory_order_release);
    if (remaining) *remaining = 0;
    reports_.shutdown();  // releases streams blocked on callbacks nobody will run
    streams = streams_.take_all();
    contexts = contexts_.take_all();
    events_.take_all();
    for (auto& d : devices_) d->primary.reset();
    implicit_default_.reset();
  }
  for (auto& c : contexts) c->retire();
  for (auto& s : streams) s->shutdown();
  for (auto& c : contexts) c->default_stream()->shutdown();
  t_current.reset();

  auto leaks = memory_.live(0, true);
  for (const Allocation& a : leaks) {
    OACL_WARN("leak at finalize: %s memory %p, %zu bytes (requested %zu)%s", a.kind == MemKind::kHost ? "host" : "device",
              reinterpret_cast<void*>(a.base), a.size, a.requested,
              a.kind == MemKind::kDevice ? strformat(" on device %d", a.device).c_str() : "");
    if (a.kind == MemKind::kHost) backend_->deallocate_host(reinterpret_cast<void*>(a.base));
    else backend_->deallocate(a.device, reinterpret_cast<void*>(a.base));
  }
  if (!leaks.empty()) OACL_WARN("finalize freed %zu leaked allocation(s)", leaks.size());
  memory_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  if (init_count_.load() == 0) {
    devices_.clear();
    backend_->close_devices();
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- devices & contexts

Status Runtime::check_device(int id) const {
  if (id >= 0 && id < static_cast<int>(devices_.size())) return Status::Ok();
  return Errorf(code::kRtInvalidDeviceId, "device id %d is out of range; %zu device(s) exist (0..%d)%s", id,
                devices_.size(), static_cast<int>(devices_.size()) - 1,
                " — set OPENACL_DEVICE_COUNT or acl.json openacl.device_count for more");
}

Status Runtime::set_device(int id) {
  std::lock_guard<std::mutex> lock(mutex_);
  OPENACL_RETURN_IF_ERROR(check_device(id));
  Device& d = *devices_[static_cast<size_t>(id)];
  if (!d.primary) {
    d.primary = std::make_shared<Context>(id, true);
    contexts_.add(d.primary);
  }
  ++d.refcount;
  t_current = d.primary;
  return Status::Ok();
}

Status Runtime::reset_device(int id, bool force) {
  std::shared_ptr<Context> ctx;
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    OPENACL_RETURN_IF_ERROR(check_device(id));
    Device& d = *devices_[static_cast<size_t>(id)];
    if (d.refcount == 0)
      return Errorf(code::kRtInvalidDeviceId, "device %d is not set (reset more often than aclrtSetDevice)", id);
    d.refcount = force ? 0 : d.refcount - 1;
    if (d.refcount > 0) return Status::Ok();
    ctx = std::move(d.primary);
    if (implicit_default_ == ctx) implicit_default_.reset();
    contexts_.remove(ctx.get());
    streams = ctx->retire();
    for (auto& s : streams) {
      streams_.remove(s.get());
      reports_.drop_stream(s.get());
    }
    reports_.drop_stream(ctx->default_stream());
  }
  for (auto& s : streams) s->shutdown();
  ctx->default_stream()->shutdown();
  if (t_current == ctx) t_current.reset();
  for (const Allocation& a : memory_.live(id, false))
    OACL_WARN("device %d reset with live allocation %p, %zu bytes (requested %zu); free it with aclrtFree", id,
              reinterpret_cast<void*>(a.base), a.size, a.requested);
  return Status::Ok();
}

Status Runtime::current_context(std::shared_ptr<Context>* out) {
  if (t_current && t_current->alive()) {
    *out = t_current;
    return Status::Ok();
  }
  if (t_current) t_current.reset();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (implicit_default_ && implicit_default_->alive()) {
      *out = implicit_default_;
      return Status::Ok();
    }
  }
  return Errorf(code::kRtContextNull,
                "no current context on this thread; call aclrtSetDevice (acl.rt.set_device) or "
                "aclrtSetCurrentContext (acl.rt.set_context) in this thread first");
}

Status Runtime::create_context(int device, std::shared_ptr<Context>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  OPENACL_RETURN_IF_ERROR(check_device(device));
  auto ctx = std::make_shared<Context>(device, false);
  contexts_.add(ctx);
  t_current = ctx;
  *out = ctx;
  return Status::Ok();
}

Status Runtime::destroy_context(const void* handle) {
  auto ctx = contexts_.get(handle);
  if (!ctx) return Errorf(code::kInvalidParam, "context %p is unknown or already destroyed", handle);
  if (ctx->is_default())
    return Errorf(code::kInvalidParam,
                  "context %p is the default context of device %d; it is released by aclrtResetDevice", handle,
                  ctx->device());
  if (!contexts_.remove(handle)) return Errorf(code::kInvalidParam, "context %p was destroyed concurrently", handle);
  auto streams = ctx->retire();
  for (auto& s : streams) {
    streams_.remove(s.get());
    reports_.drop_stream(s.get());
    s->shutdown();
  }
  reports_.drop_stream(ctx->default_stream());
  ctx->default_stream()->shutdown();
  if (t_current == ctx) t_current.reset();
  return Status::Ok();
}

Status Runtime::set_current_context(const void* handle) {
  auto ctx = contexts_.get(handle);
  if (!ctx || !ctx->alive())
    return Errorf(code::kInvalidParam, "context %p is unknown or destroyed; create one with aclrtCreateContext",
                  handle);
  t_current = std::move(ctx);
  return Status::Ok();
}

Status Runtime::synchronize_device(int64_t timeout_ms) {
  std::shared_ptr<Context> cur;
  OPENACL_RETURN_IF_ERROR(current_context(&cur));
  Status first;
  for (auto& ctx : contexts_.snapshot()) {
    if (ctx->device() != cur->device()) continue;
    Status st = ctx->synchronize(timeout_ms);
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

// ---------------------------------------------------------------- streams & events

Status Runtime::create_stream(uint32_t priority, uint32_t flags, void** handle) {
  std::shared_ptr<Context> ctx;
  OPENACL_RETURN_IF_ERROR(current_context(&ctx));
  auto s = std::make_shared<Stream>(ctx->device(), ctx.get(), false, std::min(priority, kLowestPriority), flags);
  ctx->add_stream(s);
  *handle = streams_.add(s);
  return Status::Ok();
}

Status Runtime::destroy_stream(const void* handle, bool force) {
  if (!handle)
    return Errorf(code::kInvalidParam, "stream NULL is the default stream, which belongs to its context and "
                                       "cannot be destroyed");
  if (auto s = streams_.get(handle); s && s->on_worker_thread())
    return Errorf(code::kInvalidParam, "stream %p cannot be destroyed from one of its own tasks (callback or host "
                                       "function); destroy it from another thread", handle);
  auto s = streams_.remove(handle);
  if (!s) return Errorf(code::kInvalidParam, "stream %p is unknown or already destroyed", handle);
  if (auto ctx = contexts_.get(s->context())) ctx->forget_stream(s.get());
  reports_.drop_stream(s.get());
  if (force) s->discard_pending();
  s->shutdown();
  return Status::Ok();
}

Status Runtime::resolve_stream(const void* handle, Stream** out, std::shared_ptr<Stream>* keep) {
  if (!handle) {
    std::shared_ptr<Context> ctx;
    OPENACL_RETURN_IF_ERROR(current_context(&ctx));
    // Aliasing pointer: keeps the context (owner of its default stream) alive.
    *keep = std::shared_ptr<Stream>(ctx, ctx->default_stream());
    *out = keep->get();
    return Status::Ok();
  }
  *keep = streams_.get(handle);
  if (!*keep)
    return Errorf(code::kInvalidParam, "stream %p is unknown or already destroyed; create one with aclrtCreateStream",
                  handle);
  *out = keep->get();
  return Status::Ok();
}

Status Runtime::create_event(uint32_t flags, void** handle) {
  *handle = events_.add(std::make_shared<Event>(flags));
  return Status::Ok();
}

Status Runtime::destroy_event(const void* handle) {
  if (!events_.remove(handle))
    return Errorf(code::kInvalidParam, "event %p is unknown or already destroyed", handle);
  return Status::Ok();
}

Status Runtime::find_event(const void* handle, std::shared_ptr<Event>* out) const {
  *out = events_.get(handle);
  if (!*out)
    return Errorf(code::kInvalidParam, "event %p is unknown or already destroyed; create one with aclrtCreateEvent",
                  handle);
  return Status::Ok();
}

// ---------------------------------------------------------------- misc

void warn_once(const std::string& key, const char* fmt, ...) {
  static std::mutex mutex;
  static std::unordered_set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(key).second) return;
  }
  if (!log_enabled(LogLevel::kWarning)) return;
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  log_write(LogLevel::kWarning, "OpenACL", "%s", buf);
}

}  // namespace openacl::rt
