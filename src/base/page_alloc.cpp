#include "base/page_alloc.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL, which is ignored
#endif

namespace openacl {
namespace {

// Below this, populating saves less than the syscall costs.
constexpr size_t kPopulateFrom = size_t{256} << 10;
constexpr uintptr_t kPage = 4096;

}  // namespace

void PageFree::operator()(void* p) const noexcept { std::free(p); }

void populate_pages(void* p, size_t bytes) {
  if (!p || bytes < kPopulateFrom) return;
  // madvise wants a page-aligned start: populate the whole pages inside.
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
}

PageBuffer alloc_pages(size_t bytes) {
  if (bytes > SIZE_MAX - 64) return PageBuffer();  // rounding up would wrap
  const size_t size = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size);
  populate_pages(p, size);
  return PageBuffer(p);
}

}  // namespace openacl
