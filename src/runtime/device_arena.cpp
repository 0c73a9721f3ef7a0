#include "runtime/device_arena.h"

#include <sys/mman.h>
#include <unistd.h>

namespace openacl::rt {

namespace {
constexpr uint64_t kQuantum = 64;                  // every block starts 64-byte aligned
constexpr uint64_t kReleaseThreshold = 32ull << 20;  // give pages of large freed blocks back to the OS

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }
}  // namespace

DeviceArena::~DeviceArena() { release(); }

bool DeviceArena::reserve(uint64_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (base_) return true;
  uint64_t bytes = round_up(capacity, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = static_cast<char*>(p);
  capacity_ = bytes;
  free_by_offset_.clear();
  free_by_size_.clear();
  used_.clear();
  insert_free(0, bytes);
  return true;
}

void DeviceArena::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!base_) return;
  munmap(base_, capacity_);
  base_ = nullptr;
  capacity_ = 0;
  free_by_offset_.clear();
  free_by_size_.clear();
  used_.clear();
}

void DeviceArena::insert_free(uint64_t off, uint64_t size) {
  free_by_offset_[off] = size;
  free_by_size_.insert({size, off});
}

void DeviceArena::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

void* DeviceArena::allocate(size_t bytes, size_t alignment) {
  if (alignment > kQuantum) return nullptr;  // the runtime never asks for more than 64
  const uint64_t need = round_up(bytes == 0 ? 1 : bytes, kQuantum);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!base_) return nullptr;
  auto fit = free_by_size_.lower_bound({need, 0});
  if (fit == free_by_size_.end()) return nullptr;
  const uint64_t size = fit->first, off = fit->second;
  erase_free(free_by_offset_.find(off));
  if (size > need) insert_free(off + need, size - need);
  used_[off] = need;
  return base_ + off;
}

bool DeviceArena::deallocate(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!base_) return false;
  auto used = used_.find(static_cast<uint64_t>(static_cast<char*>(p) - base_));
  if (!owns_locked(p) || used == used_.end()) return false;
  uint64_t off = used->first, size = used->second;
  used_.erase(used);
  if (size >= kReleaseThreshold) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    uint64_t lo = round_up(off, page), hi = (off + size) / page * page;
    if (hi > lo) madvise(base_ + lo, hi - lo, MADV_DONTNEED);
  }
  // Coalesce with the free neighbours on both sides.
  auto next = free_by_offset_.lower_bound(off);
  if (next != free_by_offset_.end() && next->first == off + size) {
    size += next->second;
    erase_free(next);
  }
  auto prev = free_by_offset_.lower_bound(off);
  if (prev != free_by_offset_.begin()) {
    --prev;
    if (prev->first + prev->second == off) {
      off = prev->first;
      size += prev->second;
      erase_free(prev);
    }
  }
  insert_free(off, size);
  return true;
}

bool DeviceArena::owns_locked(const void* p) const {
  const char* c = static_cast<const char*>(p);
  return base_ && c >= base_ && c < base_ + capacity_;
}

}  // namespace openacl::rt
