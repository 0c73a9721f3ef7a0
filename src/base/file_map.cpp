#include "base/file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace openacl {
namespace {

struct Region {
  uintptr_t end = 0;
  int fd = -1;
};

// Mappings by start address.
struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Region> regions;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: mappings may outlive static destruction
  return *r;
}

}  // namespace

std::shared_ptr<const void> map_file_readonly(int fd, size_t size) {
  if (size == 0) {
    errno = EINVAL;
    return nullptr;
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  const int own = size >= kRegisterFrom ? ::fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (own < 0) return std::shared_ptr<const void>(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  {
    Registry& r = registry();
    std::unique_lock lock(r.mu);
    r.regions[begin] = Region{begin + size, own};
  }
  return std::shared_ptr<const void>(p, [size, own](const void* q) {
    Registry& r = registry();
    {
      std::unique_lock lock(r.mu);
      r.regions.erase(reinterpret_cast<uintptr_t>(q));
    }
    ::close(own);
    ::munmap(const_cast<void*>(q), size);
  });
}

FileSpan file_span(const void* p, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  if (!p || bytes > UINTPTR_MAX - begin) return {};
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  auto it = r.regions.upper_bound(begin);
  if (it == r.regions.begin()) return {};
  --it;
  if (begin + bytes > it->second.end) return {};
  return FileSpan{it->second.fd, static_cast<uint64_t>(begin - it->first)};
}

bool read_span(const FileSpan& span, uint64_t at, void* dst, size_t bytes) {
  if (span.fd < 0) return false;
  char* out = static_cast<char*>(dst);
  uint64_t off = span.offset + at;
  while (bytes > 0) {
    const ssize_t n = ::pread(span.fd, out, bytes, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // an error, or the file shrank under the mapping
    out += n;
    off += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace openacl
