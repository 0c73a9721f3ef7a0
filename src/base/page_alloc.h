// Large, long-lived host buffers: packed weights, the model's weight copy,
// work arenas. Their pages are faulted in up front by one madvise call
// (MADV_POPULATE_WRITE) instead of one page fault per 4 KiB on first touch.
// On the project's VM kind first touch costs about 1 ms per MB in faults;
// populated, 0.4-0.6 ms. (Transparent huge pages were tried as well: BERT's
// load got 30% faster, ResNet-50's 45% slower, run after run, with no
// compaction or fallback counted: the VM's host decides, so they are not used.)
//
// A hint only: on kernels without MADV_POPULATE_WRITE (before Linux 5.14) the
// buffer is an ordinary aligned allocation, faulted in on first touch. The
// contents are unspecified (a reused heap block need not be zero).
#pragma once

#include <cstddef>
#include <memory>

namespace openacl {

struct PageFree {
  void operator()(void* p) const noexcept;
};
using PageBuffer = std::unique_ptr<void, PageFree>;

// At least `bytes` bytes (1 for 0), 64-byte aligned; empty when the
// allocation fails (a size no allocator can give included).
PageBuffer alloc_pages(size_t bytes);

// Faults in the whole pages of [p, p + bytes) for writing, in one call, when
// the range is large enough to gain from it: for memory about to be filled
// that another allocator gave (the device arena). Contents are kept.
void populate_pages(void* p, size_t bytes);

// Hands back the whole pages inside [p, p + bytes) (MADV_DONTNEED) and
// returns their bytes (0 when the call fails). Only for memory whose
// contents may go: a private read-only file mapping (a later read faults
// the pages back in from the file).
size_t release_pages(const void* p, size_t bytes);

}  // namespace openacl
