#include "runtime/memory_registry.h"

#include <algorithm>
#include <mutex>

namespace openacl::rt {

void MemoryRegistry::add(Allocation a) {
  std::unique_lock lock(mutex_);
  a.serial = next_serial_++;
  // A range handed out again is no longer "freed".
  freed_.erase(std::remove_if(freed_.begin(), freed_.end(),
                              [&](const Allocation& f) { return f.base < a.end() && a.base < f.end(); }),
               freed_.end());
  live_[a.base] = a;
}

std::optional<Allocation> MemoryRegistry::remove(const void* p) {
  std::unique_lock lock(mutex_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(p));
  if (it == live_.end()) return std::nullopt;
  Allocation a = it->second;
  live_.erase(it);
  // Only device ranges are remembered: the backend never hands a freed device
  // address to anyone else, while freed host memory returns to the C heap and
  // may legitimately come back as a numpy buffer.
  if (a.kind == MemKind::kHost) return a;
  freed_.push_back(a);
  if (freed_.size() > kFreedHistory) freed_.pop_front();
  return a;
}

std::optional<Allocation> MemoryRegistry::find(const void* p) const {
  uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(mutex_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return std::nullopt;
  --it;
  if (!it->second.contains(addr)) return std::nullopt;
  return it->second;
}

std::optional<Allocation> MemoryRegistry::find_freed(const void* p) const {
  uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(mutex_);
  for (auto it = freed_.rbegin(); it != freed_.rend(); ++it)
    if (it->contains(addr)) return *it;
  return std::nullopt;
}

std::vector<Allocation> MemoryRegistry::live(int device_filter, bool all_devices) const {
  std::shared_lock lock(mutex_);
  std::vector<Allocation> out;
  for (auto& [base, a] : live_)
    if (all_devices || a.device == device_filter) out.push_back(a);
  std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.serial < y.serial; });
  return out;
}

size_t MemoryRegistry::device_bytes(int device) const {
  std::shared_lock lock(mutex_);
  size_t total = 0;
  for (auto& [base, a] : live_)
    if (a.kind == MemKind::kDevice && a.device == device) total += a.size;
  return total;
}

void MemoryRegistry::clear() {
  std::unique_lock lock(mutex_);
  live_.clear();
  freed_.clear();
}

}  // namespace openacl::rt
