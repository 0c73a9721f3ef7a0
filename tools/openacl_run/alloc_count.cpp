// openacl-run --count-allocs (alloc_count.h).
#include "alloc_count.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

std::atomic<bool> g_on{false};
std::atomic<long> g_ours{0}, g_onednn{0};

constexpr int kSites = 16, kDepth = 12;
void* g_site[kSites][kDepth];
int g_site_depth[kSites];

// Whether a frame of this stack lies in oneDNN's library.
bool inside_onednn(void* const* frames, int n) {
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname && std::strstr(info.dli_fname, "libdnnl")) return true;
  }
  return false;
}

void count() {
  void* frames[64];
  const int n = backtrace(frames, 64);
  if (inside_onednn(frames, n)) {
    g_onednn.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const long i = g_ours.fetch_add(1, std::memory_order_relaxed);
  if (i < kSites) {
    g_site_depth[i] = n < kDepth ? n : kDepth;
    std::memcpy(g_site[i], frames, sizeof(void*) * static_cast<size_t>(g_site_depth[i]));
  }
}

// While counting, an allocation made by count() itself is not counted.
thread_local bool t_in_count = false;

void* counted(std::size_t n) noexcept {
  if (g_on.load(std::memory_order_relaxed) && !t_in_count) {
    t_in_count = true;
    count();
    t_in_count = false;
  }
  return std::malloc(n ? n : 1);
}

}  // namespace

namespace openacl::tools {

void start_counting() {
  void* warm[2];
  backtrace(warm, 2);  // its first call loads libgcc (allocating): not during counting
  g_ours = 0, g_onednn = 0;
  g_on = true;
}

AllocCounts stop_counting() {
  g_on = false;
  return {g_ours.load(), g_onednn.load()};
}

void print_alloc_sites(std::FILE* out, int most) {
  const long n = g_ours.load() < most ? g_ours.load() : most;
  for (long i = 0; i < n && i < kSites; ++i) {
    std::fprintf(out, "  allocation %ld:", i + 1);
    for (int j = 1; j < g_site_depth[i]; ++j) {  // frame 0 is count()
      Dl_info info;
      if (dladdr(g_site[i][j], &info) && info.dli_fbase)
        std::fprintf(out, " %s+%#lx",
                     std::strrchr(info.dli_fname, '/') ? std::strrchr(info.dli_fname, '/') + 1 : info.dli_fname,
                     static_cast<unsigned long>(static_cast<char*>(g_site[i][j]) - static_cast<char*>(info.dli_fbase)));
    }
    std::fprintf(out, "\n");
  }
}

}  // namespace openacl::tools

// The replaced forms: each new pairs with its delete (malloc/free).
void* operator new(std::size_t n) {
  if (void* p = counted(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop
