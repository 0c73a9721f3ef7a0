#include <cstdlib>
#include <cstring>

#include "runtime/backend.h"

namespace openacl::rt {

namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  void* allocate(int, size_t bytes, size_t alignment) override { return aligned(bytes, alignment); }
  void deallocate(int, void* ptr) override { std::free(ptr); }
  void* allocate_host(size_t bytes, size_t alignment) override { return aligned(bytes, alignment); }
  void deallocate_host(void* ptr) override { std::free(ptr); }
  void copy(void* dst, const void* src, size_t count) override { std::memmove(dst, src, count); }
  void fill(void* dst, int value, size_t count) override { std::memset(dst, value, count); }

 private:
  static void* aligned(size_t bytes, size_t alignment) {
    void* p = nullptr;
    return posix_memalign(&p, alignment, bytes) == 0 ? p : nullptr;
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

}  // namespace openacl::rt
