// Runtime memory: CANN's allocation rules, the registry checks behind every
// copy, and strict mode (docs/runtime.md "Memory").
#include <cinttypes>

#include "base/log.h"
#include "runtime/runtime.h"

namespace openacl::rt {

namespace {

constexpr size_t kAlign = 64;       // start addresses
constexpr size_t kGranule = 32;     // size rounding
constexpr size_t kPadding = 32;     // extra bytes after aclrtMalloc blocks
constexpr size_t kMaxRequest = size_t{1} << 56;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

const char* kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToHost: return "ACL_MEMCPY_HOST_TO_HOST";
    case CopyKind::kHostToDevice: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case CopyKind::kDeviceToHost: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case CopyKind::kDeviceToDevice: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case CopyKind::kDefault: return "ACL_MEMCPY_DEFAULT";
    case CopyKind::kHostToBufToDevice: return "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE";
    case CopyKind::kInnerDeviceToDevice: return "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE";
    case CopyKind::kInterDeviceToDevice: return "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE";
  }
  return "?";
}

// What the declared kind says about (src, dst): true = device memory.
bool expected_sides(CopyKind k, bool* src_dev, bool* dst_dev) {
  switch (k) {
    case CopyKind::kHostToHost: *src_dev = false; *dst_dev = false; return true;
    case CopyKind::kHostToDevice:
    case CopyKind::kHostToBufToDevice: *src_dev = false; *dst_dev = true; return true;
    case CopyKind::kDeviceToHost: *src_dev = true; *dst_dev = false; return true;
    case CopyKind::kDeviceToDevice:
    case CopyKind::kInnerDeviceToDevice:
    case CopyKind::kInterDeviceToDevice: *src_dev = true; *dst_dev = true; return true;
    case CopyKind::kDefault: return false;
  }
  return false;
}

std::string describe(const std::optional<Allocation>& a) {
  if (!a) return "host memory not allocated by OpenACL";
  if (a->kind == MemKind::kHost) return strformat("host memory from aclrtMallocHost (block %p)", reinterpret_cast<void*>(a->base));
  return strformat("device %d memory (block %p)", a->device, reinterpret_cast<void*>(a->base));
}

}  // namespace

Status Runtime::malloc_device(size_t size, bool padded, void** out) {
  if (size == 0) return Errorf(code::kInvalidParam, "size is 0; pass the number of bytes to allocate (> 0)");
  if (size > kMaxRequest)
    return Errorf(code::kRtMemoryAllocation, "size %zu is larger than any device can hold", size);
  std::shared_ptr<Context> ctx;
  OPENACL_RETURN_IF_ERROR(current_context(&ctx));
  Device& dev = *devices_[static_cast<size_t>(ctx->device())];
  const size_t bytes = round_up(size, kGranule) + (padded ? kPadding : 0);
  uint64_t used = dev.used.load();
  do {
    if (used + bytes > dev.capacity)
      return Errorf(code::kRtMemoryAllocation,
                    "device %d cannot hold %zu more bytes (%zu requested): %" PRIu64 " of %" PRIu64
                    " bytes free; free memory with aclrtFree or raise OPENACL_DEVICE_MEMORY",
                    dev.id, bytes, size, dev.capacity - used, dev.capacity);
  } while (!dev.used.compare_exchange_weak(used, used + bytes));
  void* p = backend_->allocate(dev.id, bytes, kAlign);
  if (!p) {
    dev.used.fetch_sub(bytes);
    return Errorf(code::kRtMemoryAllocation, "the host has no memory left for %zu bytes of device %d memory", bytes,
                  dev.id);
  }
  memory_.add(Allocation{reinterpret_cast<uintptr_t>(p), bytes, size, MemKind::kDevice, dev.id, 0});
  *out = p;
  return Status::Ok();
}

Status Runtime::free_device(void* ptr) {
  if (!ptr) return Errorf(code::kInvalidParam, "devPtr is NULL; pass a pointer returned by aclrtMalloc");
  auto a = memory_.find(ptr);
  if (!a) {
    if (auto f = memory_.find_freed(ptr))
      return Errorf(code::kInvalidParam, "%p was already freed (block of %zu bytes on device %d); free it only once",
                    ptr, f->requested, f->device);
    return Errorf(code::kInvalidParam, "%p was not allocated by aclrtMalloc (unknown pointer)", ptr);
  }
  if (a->kind == MemKind::kHost)
    return Errorf(code::kInvalidParam, "%p is host memory from aclrtMallocHost; free it with aclrtFreeHost", ptr);
  if (a->base != reinterpret_cast<uintptr_t>(ptr))
    return Errorf(code::kInvalidParam, "%p points %zu bytes into the block at %p; pass the address aclrtMalloc returned",
                  ptr, static_cast<size_t>(reinterpret_cast<uintptr_t>(ptr) - a->base), reinterpret_cast<void*>(a->base));
  if (!memory_.remove(ptr)) return Errorf(code::kInvalidParam, "%p was freed concurrently by another thread", ptr);
  if (a->device >= 0 && a->device < static_cast<int>(devices_.size()))
    devices_[static_cast<size_t>(a->device)]->used.fetch_sub(a->size);
  backend_->deallocate(a->device, ptr);
  return Status::Ok();
}

Status Runtime::malloc_host(size_t size, void** out) {
  if (size == 0) return Errorf(code::kInvalidParam, "size is 0; pass the number of bytes to allocate (> 0)");
  if (size > kMaxRequest) return Errorf(code::kBadAlloc, "size %zu is larger than the host can hold", size);
  const size_t bytes = round_up(size, kGranule);
  void* p = backend_->allocate_host(bytes, kAlign);
  if (!p) return Errorf(code::kBadAlloc, "the host has no memory left for %zu bytes", bytes);
  memory_.add(Allocation{reinterpret_cast<uintptr_t>(p), bytes, size, MemKind::kHost, -1, 0});
  *out = p;
  return Status::Ok();
}

Status Runtime::free_host(void* ptr) {
  if (!ptr) return Errorf(code::kInvalidParam, "hostPtr is NULL; pass a pointer returned by aclrtMallocHost");
  auto a = memory_.find(ptr);
  if (!a) {
    if (memory_.find_freed(ptr)) return Errorf(code::kInvalidParam, "%p was already freed; free it only once", ptr);
    return Errorf(code::kInvalidParam, "%p was not allocated by aclrtMallocHost (unknown pointer)", ptr);
  }
  if (a->kind == MemKind::kDevice)
    return Errorf(code::kInvalidParam, "%p is device memory from aclrtMalloc; free it with aclrtFree", ptr);
  if (a->base != reinterpret_cast<uintptr_t>(ptr))
    return Errorf(code::kInvalidParam, "%p points into the block at %p; pass the address aclrtMallocHost returned", ptr,
                  reinterpret_cast<void*>(a->base));
  if (!memory_.remove(ptr)) return Errorf(code::kInvalidParam, "%p was freed concurrently by another thread", ptr);
  backend_->deallocate_host(ptr);
  return Status::Ok();
}

Status Runtime::mem_info(size_t* free_bytes, size_t* total_bytes) {
  std::shared_ptr<Context> ctx;
  OPENACL_RETURN_IF_ERROR(current_context(&ctx));
  const Device& dev = *devices_[static_cast<size_t>(ctx->device())];
  uint64_t used = dev.used.load();
  *total_bytes = static_cast<size_t>(dev.capacity);
  *free_bytes = static_cast<size_t>(dev.capacity - std::min<uint64_t>(used, dev.capacity));
  return Status::Ok();
}

Status Runtime::check_range_in_one_allocation(const void* ptr, size_t size, const char* what) {
  auto a = memory_.find(ptr);
  if (!a) return Errorf(code::kInvalidParam, "%s %p is not memory allocated by OpenACL", what, ptr);
  if (size > a->end() - reinterpret_cast<uintptr_t>(ptr))
    return Errorf(code::kInvalidParam, "%s range %p + %zu runs past the end of its block (%p, %zu bytes)", what, ptr,
                  size, reinterpret_cast<void*>(a->base), a->size);
  return Status::Ok();
}

Status Runtime::check_access(const void* p, size_t span, const char* role, const char* api,
                             std::optional<Allocation>* found) {
  *found = memory_.find(p);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  if (*found) {
    const Allocation& a = **found;
    if (span > a.end() - addr)
      return Errorf(code::kRtParamInvalid,
                    "%s range %p + %zu bytes runs %zu bytes past the end of its block (%p, %zu bytes allocated); "
                    "shrink the count or allocate more",
                    role, p, span, static_cast<size_t>(addr + span - a.end()), reinterpret_cast<void*>(a.base), a.size);
    if (config_.strict && span > a.base + a.requested - std::min(addr, a.base + a.requested))
      return Errorf(code::kRtParamInvalid,
                    "strict mode: %s range %p + %zu bytes goes past the %zu bytes requested for block %p (into the "
                    "allocation padding)",
                    role, p, span, a.requested, reinterpret_cast<void*>(a.base));
    return Status::Ok();
  }
  if (config_.strict) {
    if (auto f = memory_.find_freed(p))
      return Errorf(code::kRtParamInvalid, "strict mode: %s %p is inside block %p (%zu bytes) that was already freed "
                                           "(use after free)",
                    role, p, reinterpret_cast<void*>(f->base), f->requested);
  }
  return Status::Ok();
}

Status Runtime::check_copy(void* dst, size_t dst_span, const void* src, size_t src_span, CopyKind kind,
                           const char* api) {
  std::optional<Allocation> d, s;
  OPENACL_RETURN_IF_ERROR(check_access(dst, dst_span, "dst", api, &d));
  OPENACL_RETURN_IF_ERROR(check_access(src, src_span, "src", api, &s));
  bool want_src_dev = false, want_dst_dev = false;
  if (!expected_sides(kind, &want_src_dev, &want_dst_dev)) return Status::Ok();  // DEFAULT: inferred
  const bool src_dev = s && s->kind == MemKind::kDevice;
  const bool dst_dev = d && d->kind == MemKind::kDevice;
  if (src_dev == want_src_dev && dst_dev == want_dst_dev) return Status::Ok();
  std::string what = strformat("kind %s but src %p is %s and dst %p is %s", kind_name(kind), src, describe(s).c_str(),
                               dst, describe(d).c_str());
  if (config_.strict)
    return Errorf(code::kRtParamInvalid, "strict mode: %s; pass the matching kind or ACL_MEMCPY_DEFAULT", what.c_str());
  warn_once(strformat("%s/%d/%d%d", api, static_cast<int>(kind), src_dev, dst_dev),
            "%s: %s; copied anyway (OPENACL_STRICT=1 rejects this)", api, what.c_str());
  return Status::Ok();
}

Status Runtime::check_fill(void* dst, size_t count, const char* api) {
  std::optional<Allocation> d;
  OPENACL_RETURN_IF_ERROR(check_access(dst, count, "devPtr", api, &d));
  if (d && d->kind == MemKind::kDevice) return Status::Ok();
  if (config_.strict)
    return Errorf(code::kInvalidParam, "strict mode: devPtr %p is %s, not device memory; allocate it with aclrtMalloc",
                  dst, describe(d).c_str());
  warn_once(strformat("%s/host", api), "%s: devPtr %p is %s, not device memory; filled anyway", api, dst,
            describe(d).c_str());
  return Status::Ok();
}

}  // namespace openacl::rt
