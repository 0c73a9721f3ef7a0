// Logging: off by default, free when off (one relaxed load per call site).
// Enabled by OPENACL_LOG=<level> (stderr) or ASCEND_SLOG_PRINT_TO_STDOUT=1
// (stdout, level from ASCEND_GLOBAL_LOG_LEVEL, default error). See docs/runtime.md.
#pragma once

#include <atomic>

namespace openacl {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

namespace detail {
extern std::atomic<int> g_log_threshold;  // messages below it are dropped
}

inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= detail::g_log_threshold.load(std::memory_order_relaxed);
}

// Re-reads the environment variables (called once at load and by aclInit).
void log_configure_from_env();

void log_write(LogLevel level, const char* tag, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace openacl

#define OPENACL_LOG(level, ...)                                         \
  do {                                                                  \
    if (::openacl::log_enabled(level)) ::openacl::log_write(level, "OpenACL", __VA_ARGS__); \
  } while (0)
#define OACL_DEBUG(...) OPENACL_LOG(::openacl::LogLevel::kDebug, __VA_ARGS__)
#define OACL_INFO(...) OPENACL_LOG(::openacl::LogLevel::kInfo, __VA_ARGS__)
#define OACL_WARN(...) OPENACL_LOG(::openacl::LogLevel::kWarning, __VA_ARGS__)
#define OACL_ERROR(...) OPENACL_LOG(::openacl::LogLevel::kError, __VA_ARGS__)
