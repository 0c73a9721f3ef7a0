#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/device_arena.h"

namespace openacl::rt {

namespace {

// Device memory lives in one reserved address range per device (DeviceArena);
// host memory comes from the C heap.
class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }

  bool open_devices(int count, uint64_t capacity) override {
    arenas_.clear();
    for (int i = 0; i < count; ++i) {
      auto arena = std::make_unique<DeviceArena>();
      // Blocks start 64-byte aligned while CANN's accounting charges multiples of
      // 32, so tiny blocks can take up to twice what they are charged: reserve
      // twice the capacity (address space only) so the accounting, not the
      // alignment, decides when a device is full.
      if (!arena->reserve(capacity <= UINT64_MAX / 2 ? capacity * 2 : capacity) && !arena->reserve(capacity)) {
        arenas_.clear();
        return false;
      }
      arenas_.push_back(std::move(arena));
    }
    return true;
  }
  void close_devices() override { arenas_.clear(); }

  void* allocate(int device, size_t bytes, size_t alignment) override {
    if (device < 0 || device >= static_cast<int>(arenas_.size())) return nullptr;
    return arenas_[static_cast<size_t>(device)]->allocate(bytes, alignment);
  }
  void deallocate(int device, void* ptr) override {
    if (device >= 0 && device < static_cast<int>(arenas_.size())) arenas_[static_cast<size_t>(device)]->deallocate(ptr);
  }
  void* allocate_host(size_t bytes, size_t alignment) override {
    void* p = nullptr;
    return posix_memalign(&p, alignment, bytes) == 0 ? p : nullptr;
  }
  void deallocate_host(void* ptr) override { std::free(ptr); }
  void copy(void* dst, const void* src, size_t count) override { std::memmove(dst, src, count); }
  void fill(void* dst, int value, size_t count) override { std::memset(dst, value, count); }

 private:
  std::vector<std::unique_ptr<DeviceArena>> arenas_;
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

}  // namespace openacl::rt
