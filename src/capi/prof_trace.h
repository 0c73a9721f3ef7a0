// capi: the producers' side of profiling (src/prof): API calls (guarded),
// copies (rt_memory.cpp) and model executions (mdl_observe.h). Each helper is
// called only after the caller saw a prof::*_tracing() switch on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "prof/trace.h"

namespace openacl::capi {

// One acl* call that started at start_ns and returned `result`.
void trace_api(const char* api, int64_t start_ns, int result) noexcept;
// One copy of `bytes` (aclrtMemcpyKind `kind`) that ran from start_ns to now
// on `stream` (nullptr: the default stream; for a synchronous copy, the
// calling thread's device is looked up).
void trace_copy(const char* api, const void* stream, int device, int kind, size_t bytes, int64_t start_ns) noexcept;

}  // namespace openacl::capi
