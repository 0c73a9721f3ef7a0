#include "base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace openacl {

namespace detail {
std::atomic<int> g_log_threshold{static_cast<int>(LogLevel::kOff)};
}

namespace {

std::atomic<FILE*> g_sink{stderr};
std::mutex g_write_mutex;

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
    default: return "OFF";
  }
}

int parse_level_word(const char* s) {
  if (!s || !*s) return -1;
  if (!strcasecmp(s, "debug") || !strcmp(s, "0")) return 0;
  if (!strcasecmp(s, "info") || !strcmp(s, "1")) return 1;
  if (!strcasecmp(s, "warning") || !strcasecmp(s, "warn") || !strcmp(s, "2")) return 2;
  if (!strcasecmp(s, "error") || !strcmp(s, "3")) return 3;
  if (!strcasecmp(s, "off") || !strcasecmp(s, "null") || !strcmp(s, "4")) return 4;
  return -1;
}

struct EnvInit {
  EnvInit() { log_configure_from_env(); }
} g_env_init;

}  // namespace

void log_configure_from_env() {
  int threshold = static_cast<int>(LogLevel::kOff);
  FILE* sink = stderr;
  const char* ascend_level = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  const char* to_stdout = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
  if (to_stdout && !strcmp(to_stdout, "1")) {
    int lvl = parse_level_word(ascend_level);
    threshold = lvl >= 0 ? lvl : static_cast<int>(LogLevel::kError);
    sink = stdout;
  }
  int own = parse_level_word(std::getenv("OPENACL_LOG"));
  if (own >= 0) {
    threshold = own;
    sink = stderr;
  }
  g_sink.store(sink);
  detail::g_log_threshold.store(threshold);
}

void log_write(LogLevel level, const char* tag, const char* fmt, ...) {
  char body[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(body, sizeof body, fmt, args);
  va_end(args);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm local{};
  localtime_r(&ts.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H:%M:%S", &local);
  std::lock_guard<std::mutex> lock(g_write_mutex);
  FILE* sink = g_sink.load();
  std::fprintf(sink, "[%s] %s(%d,%ld) %s.%06ld %s\n", level_name(level), tag, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), stamp, ts.tv_nsec / 1000, body);
  std::fflush(sink);
}

}  // namespace openacl
