// aclInit / aclFinalize, version and platform queries, fp16 helpers, app log.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/dtype.h"
#include "base/fp16.h"
#include "capi/capi.h"
#include "capi/mdl_dump.h"
#include "capi/mdl_registry.h"
#include "capi/op_execute.h"
#include "capi/prof_state.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

namespace {
// libopenacl_ompenv.so (omp_defaults.c) set GOMP_SPINCOUNT for libgomp, which
// has read it by the time this library initialises: take it back out, so the
// program's child processes inherit the environment the user gave.
__attribute__((constructor)) void openacl_omp_env_cleanup() {
  const char* mark = std::getenv("OPENACL_OMP_ENV_SET");
  if (!mark || std::strcmp(mark, "1") != 0) return;
  unsetenv("GOMP_SPINCOUNT");
  unsetenv("OPENACL_OMP_ENV_SET");
}
}  // namespace

extern "C" {

aclError aclInit(const char* configPath) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(runtime().init(configPath));
    // acl.json's `dump` section: a bad one fails aclInit (ACL_ERROR_INVALID_DUMP_CONFIG) and undoes it.
    Status dump = capi::dump_from_acl_json(runtime().config().raw_json);
    if (!dump.ok()) {
      (void)runtime().finalize(true, nullptr);
      return dump;
    }
    // acl.json's `profiler` section or OPENACL_PROFILING_OUTPUT (openacl-msprof).
    Status prof = capi::prof_from_config();
    if (!prof.ok()) {
      capi::dump_reset();
      (void)runtime().finalize(true, nullptr);
    }
    return prof;
  });
}

aclError aclFinalize(void) {
  return guarded(__func__, [&] {
    // Models still loaded go first, so their memory is released (not reported
    // as leaked) before the devices are torn down.
    if (runtime().initialized()) {
      capi::prof_shutdown();  // flushes subscriptions, writes a running collection
      capi::unload_all_models();
      capi::op_reset();  // compiled single ops hold device memory too
      capi::dump_reset();
    }
    return runtime().finalize(true, nullptr);
  });
}

aclError aclFinalizeReference(uint64_t* refCount) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(refCount, "refCount"));
    Status st = runtime().finalize(false, refCount);
    if (st.ok() && !runtime().initialized()) {  // the last reference ends the dump, profiling and op cache too
      capi::dump_reset();
      capi::prof_shutdown();
      capi::op_reset();
    }
    return st;
  });
}

aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(majorVersion, "majorVersion"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(minorVersion, "minorVersion"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(patchVersion, "patchVersion"));
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return Status::Ok();
  });
}

const char* aclrtGetSocName(void) {
  // Before aclInit the configured name comes from the environment alone.
  static thread_local std::string name;
  try {
    name = runtime().initialized() ? runtime().config().soc_name : config_from_env().soc_name;
    return name.c_str();
  } catch (...) {
    return nullptr;
  }
}

aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(runMode, "runMode"));
    *runMode = ACL_HOST;  // the application always runs on the host
    return Status::Ok();
  });
}

float aclFloat16ToFloat(aclFloat16 value) { return half_to_float(value); }

aclFloat16 aclFloatToFloat16(float value) { return float_to_half(value); }

size_t aclDataTypeSize(aclDataType dataType) { return dtype_size(static_cast<int>(dataType)); }

void aclAppLog(aclLogLevel logLevel, const char* func, const char* file, uint32_t line, const char* fmt, ...) {
  if (logLevel < ACL_DEBUG || logLevel > ACL_ERROR || !fmt) return;
  auto level = static_cast<LogLevel>(logLevel);
  if (!log_enabled(level)) return;
  char body[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(body, sizeof body, fmt, args);
  va_end(args);
  const char* base = file ? std::strrchr(file, '/') : nullptr;
  base = base ? base + 1 : (file ? file : "?");
  log_write(level, "APP", "%s:%u %s] %s", base, line, func ? func : "?", body);
}

}  // extern "C"
