#include "prof/trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

namespace openacl::prof {

namespace detail {
std::atomic<uint32_t> g_collect{0};
std::atomic<uint32_t> g_subscriptions{0};
}  // namespace detail

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t thread_id() {
  thread_local const uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

}  // namespace openacl::prof
