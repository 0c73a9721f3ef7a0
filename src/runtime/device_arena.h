// A device's address space on the CPU backend: one reserved virtual range per
// device, carved by a best-fit allocator with coalescing. Keeping device memory
// out of the C heap means a freed device address is never handed to numpy or
// malloc, so the registry can tell a use after free from live host memory, and
// every device pointer is recognisable by its range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace openacl::rt {

class DeviceArena {
 public:
  DeviceArena() = default;
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Reserves `capacity` bytes of address space (pages are committed on first touch).
  bool reserve(uint64_t capacity);
  void release();
  // nullptr when no free range is large enough.
  void* allocate(size_t bytes, size_t alignment);
  // False when p is not a live block of this arena.
  bool deallocate(void* p);

 private:
  bool owns_locked(const void* p) const;
  void insert_free(uint64_t off, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);

  mutable std::mutex mutex_;
  char* base_ = nullptr;
  uint64_t capacity_ = 0;
  std::map<uint64_t, uint64_t> free_by_offset_;             // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;    // (size, offset), best fit
  std::unordered_map<uint64_t, uint64_t> used_;             // offset -> size
};

}  // namespace openacl::rt
