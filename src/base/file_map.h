// Read-only private mappings of whole files (an .om loaded in place) that
// keep a descriptor of the file beside them, so that a sparse reader can copy
// a few bytes out of the page cache with pread instead of reading them
// through the mapping.
//
// Why: a fault on a mapped file maps the whole page-cache folio the page sits
// in (up to 2 MiB on Linux 6.x with ext4 when the file was just written), and
// every mapped page counts as the process's resident memory until it is
// handed back. BERT's first Gather of 128 token rows from its 89 MiB
// embedding table through the mapping made 88 MiB of it resident; read with
// pread, the table stays in the page cache (shared, reclaimable) and the
// process holds only the rows it copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace openacl {

// Files smaller than this are mapped but not registered: they hold no table
// worth a system call per read, and a process that loads many small models
// keeps its descriptors.
inline constexpr size_t kRegisterFrom = size_t{4} << 20;

// Maps the first `size` bytes of the open file `fd` read-only and private,
// and, from kRegisterFrom bytes on, registers the mapping with a duplicate
// of `fd` (the caller keeps and closes its own; when no descriptor is left,
// the mapping goes unregistered). The returned pointer owns both: its
// deleter unregisters the mapping, closes the duplicate and unmaps. Empty
// when the mapping fails, with errno set.
std::shared_ptr<const void> map_file_readonly(int fd, size_t size);

// Where [p, p + bytes) lies in a registered mapping: the file's descriptor
// and the offset of p in it. fd < 0 when the range is not wholly inside one.
// Valid while the mapping is (the bytes a kernel reads keep it alive).
struct FileSpan {
  int fd = -1;
  uint64_t offset = 0;
};
FileSpan file_span(const void* p, size_t bytes);

// Copies `bytes` at `at` bytes past the span's start into dst (pread, resumed
// after short reads and EINTR). False on failure (the caller then reads the
// mapping instead).
bool read_span(const FileSpan& span, uint64_t at, void* dst, size_t bytes);

}  // namespace openacl
