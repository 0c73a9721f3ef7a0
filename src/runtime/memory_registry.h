// The memory registry: every allocation OpenACL hands out, in an interval map.
// It validates frees and copies, infers copy directions, accounts device usage
// and keeps recently freed ranges so strict mode can name a use after free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace openacl::rt {

enum class MemKind : uint8_t { kDevice, kHost };

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;       // bytes actually reserved (rounded + padding)
  size_t requested = 0;  // bytes the caller asked for
  MemKind kind = MemKind::kDevice;
  int device = -1;       // -1 for host memory
  uint64_t serial = 0;   // allocation order, for leak reports

  bool contains(uintptr_t p) const { return p >= base && p < base + size; }
  uintptr_t end() const { return base + size; }
};

class MemoryRegistry {
 public:
  void add(Allocation a);
  // Removes the allocation starting exactly at p; nullopt if there is none.
  std::optional<Allocation> remove(const void* p);
  // The live allocation containing p, if any.
  std::optional<Allocation> find(const void* p) const;
  // A recently freed device allocation containing p (and not since reused), if any.
  std::optional<Allocation> find_freed(const void* p) const;
  std::vector<Allocation> live(int device_filter, bool all_devices) const;
  size_t device_bytes(int device) const;  // sum of `size` of the device's live allocations
  void clear();

 private:
  static constexpr size_t kFreedHistory = 4096;
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Allocation> live_;
  std::deque<Allocation> freed_;
  uint64_t next_serial_ = 1;
};

}  // namespace openacl::rt
