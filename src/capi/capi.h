// capi: the extern "C" acl* entry points. The only layer that knows acl* types.
// Every entry point runs its body through guarded(): nothing escapes as an
// exception, each failure maps to one aclError and records a message naming the
// call, the bad value and the fix (STYLE.md 8, 10).
#pragma once

#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "acl/acl.h"
#include "base/log.h"
#include "base/status.h"
#include "capi/prof_trace.h"
#include "runtime/runtime.h"

namespace openacl::capi {

// Stores "<api>: <message>" as the calling thread's (or process's) recent error.
void record_error(const char* api, const Status& st);

template <class F>
aclError guarded_untraced(const char* api, F&& body) noexcept {
  try {
    Status st = body();
    if (!st.ok()) record_error(api, st);
    return st.code();
  } catch (const std::bad_alloc&) {
    record_error(api, Status(code::kBadAlloc, "out of host memory"));
    return code::kBadAlloc;
  } catch (const std::exception& e) {
    record_error(api, Status(code::kInternalError, std::string("internal error: ") + e.what()));
    return code::kInternalError;
  } catch (...) {
    record_error(api, Status(code::kInternalError, "internal error (unknown exception)"));
    return code::kInternalError;
  }
}

// The API-layer trace point of every entry point: with profiling off it costs
// one relaxed atomic load and a branch (prof::api_tracing()).
template <class F>
aclError guarded(const char* api, F&& body) noexcept {
  const int64_t start = prof::api_tracing() ? prof::now_ns() : 0;
  const aclError result = guarded_untraced(api, std::forward<F>(body));
  if (start != 0) [[unlikely]] trace_api(api, start, result);
  return result;
}

inline rt::Runtime& runtime() { return rt::Runtime::instance(); }

// The int a caller passed for an enum parameter. C callers and the Python
// binding may pass any int; reading the bytes, rather than loading a value of
// the enum type, keeps an out-of-range value defined (and UBSan quiet) until
// the caller's validation refuses it.
template <class E>
inline int enum_int(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "enum_int reads an int-sized enum");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

inline Status require_init() { return runtime().require_init(); }

inline Status not_null(const void* p, const char* name) {
  if (p) return Status::Ok();
  return Errorf(code::kInvalidParam, "%s is NULL; pass a valid pointer", name);
}

// -1 (forever) or a positive number of milliseconds.
inline Status check_timeout(int32_t timeout, const char* name) {
  if (timeout == -1 || timeout > 0) return Status::Ok();
  return Errorf(code::kInvalidParam, "%s %d is invalid; pass -1 to wait forever or a positive number of ms", name,
                timeout);
}

}  // namespace openacl::capi

// The data-buffer record (spec §3.1): never owns the memory it points to.
struct aclDataBuffer {
  void* data;
  size_t size;
};
