// The backend interface: what a device kind must provide (STYLE.md 2).
// The runtime core owns streams, events and validation; a backend only moves and
// holds bytes. The CPU backend is always present; a CUDA backend (loaded at run
// time) will implement the same interface plus its own stream executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace openacl::rt {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Prepares `count` devices of `capacity` bytes each (called by aclInit);
  // false when the address space cannot be reserved.
  virtual bool open_devices(int count, uint64_t capacity) = 0;
  // Releases every device's memory (called by aclFinalize, after the runtime
  // has freed what it still tracked).
  virtual void close_devices() = 0;
  // Device memory of `bytes` (already rounded by the caller) aligned to `alignment`.
  // nullptr when the system has none left.
  virtual void* allocate(int device, size_t bytes, size_t alignment) = 0;
  virtual void deallocate(int device, void* ptr) = 0;
  // Host memory usable for fast transfers (page-locked on real devices).
  virtual void* allocate_host(size_t bytes, size_t alignment) = 0;
  virtual void deallocate_host(void* ptr) = 0;
  // Byte moves between any two validated ranges; the ranges may overlap.
  virtual void copy(void* dst, const void* src, size_t count) = 0;
  virtual void fill(void* dst, int value, size_t count) = 0;
};

// The process-wide CPU backend: device memory is host memory.
Backend& cpu_backend();

}  // namespace openacl::rt
