#include "base/page_alloc.h"

#include <sys/mman.h>
#include <unistd.h>

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

// The whole pages inside [p, p + bytes): false when there are none.
bool whole_pages(const void* p, size_t bytes, uintptr_t* lo, uintptr_t* hi) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  if (!p || bytes > UINTPTR_MAX - begin) return false;
  *lo = (begin + page - 1) & ~(page - 1);
  *hi = (begin + bytes) & ~(page - 1);
  return *hi > *lo;
}

}  // namespace

void PageFree::operator()(void* p) const noexcept { std::free(p); }

void populate_pages(void* p, size_t bytes) {
  uintptr_t lo, hi;
  if (bytes >= kPopulateFrom && whole_pages(p, bytes, &lo, &hi))
    (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
}

size_t release_pages(const void* p, size_t bytes) {
  uintptr_t lo, hi;
  if (!whole_pages(p, bytes, &lo, &hi)) return 0;
  return ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0 ? hi - lo : 0;
}

PageBuffer alloc_pages(size_t bytes) {
  if (bytes > SIZE_MAX - 64) return PageBuffer();  // rounding up would wrap
  const size_t size = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size);
  populate_pages(p, size);
  return PageBuffer(p);
}

}  // namespace openacl
