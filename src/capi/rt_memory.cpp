// Memory: allocation, copies, fills, info (spec §2.5, docs/runtime.md "Memory").
#include <limits>

#include "capi/capi.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

namespace {

Status check_kind(aclrtMemcpyKind kind) {
  int k = static_cast<int>(kind);
  if (k >= ACL_MEMCPY_HOST_TO_HOST && k <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) return Status::Ok();
  return Errorf(code::kInvalidParam, "kind %d is not an aclrtMemcpyKind; pass 0..7 (ACL_MEMCPY_DEFAULT = 4 infers it)",
                k);
}

// The checks every 1-D copy shares; count == 0 was handled by the caller.
Status check_copy_1d(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind, const char* api) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(dst, "dst"));
  OPENACL_RETURN_IF_ERROR(capi::not_null(src, "src"));
  OPENACL_RETURN_IF_ERROR(check_kind(kind));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  if (count > destMax)
    return Errorf(code::kRtParamInvalid, "count %zu > destMax %zu for dst %p; pass destMax >= count", count, destMax,
                  dst);
  return runtime().check_copy(dst, count, src, count, static_cast<rt::CopyKind>(kind), api);
}

// Span of a pitched region: (height - 1) * pitch + width, false on overflow.
bool span_2d(size_t pitch, size_t width, size_t height, size_t* out) {
  size_t rows = height - 1;
  if (rows != 0 && pitch > (std::numeric_limits<size_t>::max() - width) / rows) return false;
  *out = rows * pitch + width;
  return true;
}

Status check_copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                     aclrtMemcpyKind kind, const char* api) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(dst, "dst"));
  OPENACL_RETURN_IF_ERROR(capi::not_null(src, "src"));
  OPENACL_RETURN_IF_ERROR(check_kind(kind));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  if (width > dpitch || width > spitch)
    return Errorf(code::kInvalidParam, "width %zu exceeds dpitch %zu or spitch %zu; a row cannot be wider than its pitch",
                  width, dpitch, spitch);
  size_t dst_span = 0, src_span = 0;
  if (!span_2d(dpitch, width, height, &dst_span) || !span_2d(spitch, width, height, &src_span))
    return Errorf(code::kInvalidParam, "pitch x height overflows the address space (height %zu)", height);
  return runtime().check_copy(dst, dst_span, src, src_span, static_cast<rt::CopyKind>(kind), api);
}

void copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
  auto& be = runtime().backend();
  if (dpitch == width && spitch == width) {
    be.copy(dst, src, width * height);
    return;
  }
  for (size_t r = 0; r < height; ++r)
    be.copy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
}

Status check_fill(void* devPtr, size_t maxCount, size_t count, const char* api) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  if (count > maxCount)
    return Errorf(code::kRtParamInvalid, "count %zu > maxCount %zu for devPtr %p; pass maxCount >= count", count,
                  maxCount, devPtr);
  return runtime().check_fill(devPtr, count, api);
}

Status resolve(aclrtStream handle, rt::Stream** s, std::shared_ptr<rt::Stream>* keep) {
  return runtime().resolve_stream(handle, s, keep);
}

}  // namespace

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().malloc_device(size, true, devPtr);  // every policy is accepted, as CANN does
  });
}

aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().malloc_device(size, false, devPtr);
  });
}

aclError aclrtMallocCached(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().malloc_device(size, true, devPtr);
  });
}

aclError aclrtMemFlush(void* devPtr, size_t size) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().check_range_in_one_allocation(devPtr, size, "devPtr");  // host-coherent already
  });
}

aclError aclrtMemInvalidate(void* devPtr, size_t size) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(devPtr, "devPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().check_range_in_one_allocation(devPtr, size, "devPtr");
  });
}

aclError aclrtFree(void* devPtr) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().free_device(devPtr);
  });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(hostPtr, "hostPtr"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().malloc_host(size, hostPtr);
  });
}

aclError aclrtFreeHost(void* hostPtr) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().free_host(hostPtr);
  });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  return guarded(__func__, [&] {
    if (count == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_copy_1d(dst, destMax, src, count, kind, "aclrtMemcpy"));
    const int64_t start = prof::task_tracing() ? prof::now_ns() : 0;
    runtime().backend().copy(dst, src, count);
    if (start != 0) capi::trace_copy("aclrtMemcpy", nullptr, -1, kind, count, start);
    return Status::Ok();
  });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  return guarded(__func__, [&] {
    if (count == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_copy_1d(dst, destMax, src, count, kind, "aclrtMemcpyAsync"));
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s, &keep));
    rt::Backend* be = &runtime().backend();
    s->enqueue(
        [be, dst, src, count, kind, stream, device = s->device()]() -> Status {
          const int64_t start = prof::task_tracing() ? prof::now_ns() : 0;
          be->copy(dst, src, count);
          if (start != 0) capi::trace_copy("aclrtMemcpyAsync", stream, device, kind, count, start);
          return Status::Ok();
        },
        "aclrtMemcpyAsync");
    return Status::Ok();
  });
}

aclError aclrtMemcpy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       aclrtMemcpyKind kind) {
  return guarded(__func__, [&] {
    if (width == 0 || height == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_copy_2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2d"));
    copy_2d(dst, dpitch, src, spitch, width, height);
    return Status::Ok();
  });
}

aclError aclrtMemcpy2dAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            aclrtMemcpyKind kind, aclrtStream stream) {
  return guarded(__func__, [&] {
    if (width == 0 || height == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_copy_2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2dAsync"));
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s, &keep));
    s->enqueue(
        [=]() -> Status {
          copy_2d(dst, dpitch, src, spitch, width, height);
          return Status::Ok();
        },
        "aclrtMemcpy2dAsync");
    return Status::Ok();
  });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  return guarded(__func__, [&] {
    if (count == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_fill(devPtr, maxCount, count, "aclrtMemset"));
    runtime().backend().fill(devPtr, value & 0xFF, count);
    return Status::Ok();
  });
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  return guarded(__func__, [&] {
    if (count == 0) return Status::Ok();
    OPENACL_RETURN_IF_ERROR(check_fill(devPtr, maxCount, count, "aclrtMemsetAsync"));
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s, &keep));
    rt::Backend* be = &runtime().backend();
    int byte = value & 0xFF;
    s->enqueue(
        [be, devPtr, byte, count]() -> Status {
          be->fill(devPtr, byte, count);
          return Status::Ok();
        },
        "aclrtMemsetAsync");
    return Status::Ok();
  });
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(free, "free"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(total, "total"));
    if (static_cast<int>(attr) < ACL_DDR_MEM || static_cast<int>(attr) > ACL_MEM_P2P_HUGE1G)
      return Errorf(code::kInvalidParam, "attr %d is not an aclrtMemAttr (0..17)", static_cast<int>(attr));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().mem_info(free, total);  // one memory pool serves every attribute here
  });
}

}  // extern "C"
