// Collection to files (acl_prof.h, spec §5.2, compat-notes §3): aclprofInit /
// Finalize / CreateConfig / DestroyConfig / Start / Stop / SetConfig, and the
// collection acl.json's `profiler` section or OPENACL_PROFILING_OUTPUT
// (tools/msprof) starts at aclInit. Events and files: src/prof.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_prof.h"
#include "capi/capi.h"
#include "capi/prof_state.h"
#include "prof/collection.h"
#include "prof/subscription.h"

struct aclprofConfig {
  std::vector<uint32_t> devices;
  int metrics;
  uint64_t data_types;
};

namespace openacl::capi {

namespace {

// Every bit acl_prof.h defines.
constexpr uint64_t kKnownBits = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
                                ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE | ACL_PROF_TRAINING_TRACE |
                                ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API | ACL_PROF_GE_API_L0 |
                                ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_MEMORY | ACL_PROF_TASK_TIME_L2 |
                                ACL_PROF_OP_ATTR | ACL_PROF_TASK_TIME_L3 | ACL_PROF_GE_API_L1 |
                                ACL_PROF_API_STATS | ACL_PROF_AICORE_SHAPE;
// Bits that ask for the API layer / for executed tasks.
constexpr uint64_t kApiBits = ACL_PROF_ACL_API | ACL_PROF_API_STATS | ACL_PROF_RUNTIME_API | ACL_PROF_GE_API_L0 |
                              ACL_PROF_GE_API_L1;
constexpr uint64_t kTaskBits = ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME_L2 |
                               ACL_PROF_TASK_TIME_L3 | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU | ACL_PROF_OP_ATTR |
                               ACL_PROF_AICORE_SHAPE | ACL_PROF_TASK_MEMORY;

struct State {
  std::mutex mutex;
  std::set<const aclprofConfig*> live;
  bool from_config = false;  // acl.json / OPENACL_PROFILING_OUTPUT started the collection
  bool api_init = false;     // aclprofInit called
  std::vector<std::string> settings;  // aclprofSetConfig values, by type (kept, see acl_prof.h)
};
State& state() {
  static auto* s = new State();  // never destroyed: the atexit writer may run late
  return *s;
}

Status find_config(const aclprofConfig* cfg, aclprofConfig* copy) {
  OPENACL_RETURN_IF_ERROR(not_null(cfg, "profilerConfig"));
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.live.count(cfg))
    return Errorf(code::kInvalidParam,
                  "profilerConfig %p is not a live config; create one with aclprofCreateConfig (and do not use it "
                  "after aclprofDestroyConfig)",
                  static_cast<const void*>(cfg));
  *copy = *cfg;
  return Status::Ok();
}

uint32_t collect_bits(uint64_t data_types) {
  uint32_t bits = 0;
  if (data_types & kApiBits) bits |= prof::kCollectApi;
  if (data_types & kTaskBits) bits |= prof::kCollectTasks;
  if (data_types & ACL_PROF_MSPROFTX) bits |= prof::kCollectTx;
  return bits;
}

std::string device_list(const std::vector<uint32_t>& devices) {
  std::string s;
  for (uint32_t d : devices) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

bool parse_uint(const std::string& text, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Value checks of aclprofSetConfig (ranges from spec §5.1).
Status check_setting(int type, const std::string& v) {
  uint64_t n = 0;
  auto range = [&](uint64_t lo, uint64_t hi, const char* unit) -> Status {
    if (parse_uint(v, lo, hi, &n)) return Status::Ok();
    return Errorf(code::kInvalidParam, "config '%s' for type %d is invalid; pass an integer in [%llu, %llu]%s",
                  v.c_str(), type, static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), unit);
  };
  auto list_of = [&](std::initializer_list<const char*> allowed) -> Status {
    size_t start = 0;
    while (start <= v.size()) {
      const size_t comma = v.find(',', start);
      const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      bool ok = false;
      for (const char* a : allowed) ok = ok || item == a;
      if (!ok)
        return Errorf(code::kInvalidParam, "config '%s' for type %d is invalid; pass a comma list of cpu, mem",
                      v.c_str(), type);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return Status::Ok();
  };
  switch (type) {
    case ACL_PROF_STORAGE_LIMIT: {
      std::string num = v;
      if (num.size() > 2 && num.compare(num.size() - 2, 2, "MB") == 0) num.resize(num.size() - 2);
      if (parse_uint(num, 200, 4294967295ull, &n)) return Status::Ok();
      return Errorf(code::kInvalidParam, "storage limit '%s' is invalid; pass e.g. \"200MB\" (200 to 4294967295 MB)",
                    v.c_str());
    }
    case ACL_PROF_SYS_HARDWARE_MEM_FREQ:
    case ACL_PROF_SYS_IO_FREQ:
    case ACL_PROF_DVPP_FREQ: return range(1, 100, " Hz");
    case ACL_PROF_SYS_INTERCONNECTION_FREQ:
    case ACL_PROF_HOST_SYS_USAGE_FREQ: return range(1, 50, " Hz");
    case ACL_PROF_LLC_MODE:
      if (v == "read" || v == "write") return Status::Ok();
      return Errorf(code::kInvalidParam, "LLC mode '%s' is invalid; pass \"read\" or \"write\"", v.c_str());
    case ACL_PROF_HOST_SYS:
    case ACL_PROF_HOST_SYS_USAGE: return list_of({"cpu", "mem"});
    default: return Status::Ok();
  }
}

}  // namespace

Status check_aicore_metrics(int value, const char* name) {
  if ((value >= ACL_AICORE_ARITHMETIC_UTILIZATION && value <= ACL_AICORE_MEMORY_ACCESS) || value == ACL_AICORE_NONE)
    return Status::Ok();
  return Errorf(code::kInvalidParam, "%s %d is not an aclprofAicoreMetrics value; pass 0..8 or ACL_AICORE_NONE (255)",
                name, value);
}

Status check_no_collection(const char* api) {
  if (!prof::collection_initialized()) return Status::Ok();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return Errorf(ACL_ERROR_PROF_API_CONFLICT,
                "%s: a collection to files is set up (%s); the op-info subscription cannot be mixed with it: %s",
                api, s.from_config ? "by acl.json's profiler section or openacl-msprof" : "aclprofInit",
                s.from_config ? "turn that collection off" : "call aclprofFinalize first");
}

Status prof_from_config() {
  const RuntimeConfig& cfg = runtime().config();
  const char* env = std::getenv("OPENACL_PROFILING_OUTPUT");
  std::string dir;
  const char* source = nullptr;
  if (env && *env) {
    dir = env;
    source = "OPENACL_PROFILING_OUTPUT";
  } else if (cfg.profiler_on) {
    dir = cfg.profiler_output.empty() ? "." : cfg.profiler_output;
    source = "acl.json profiler.output";
  } else {
    return Status::Ok();
  }
  if (prof::collection_initialized()) return Status::Ok();  // a reference-counted second aclInit
  Status st = prof::collection_init(dir);
  if (!st.ok())
    return Errorf(ACL_ERROR_INVALID_PROFILING_CONFIG, "%s: %s", source, st.message().c_str());
  std::vector<uint32_t> devices;
  for (int d = 0; d < runtime().device_count(); ++d) devices.push_back(static_cast<uint32_t>(d));
  uint32_t busy = 0;
  (void)prof::collection_start(devices, prof::kCollectApi | prof::kCollectTasks | prof::kCollectTx, &busy);
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.from_config = true;
  }
  // A program profiled by openacl-msprof may exit without aclFinalize: write then.
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { prof_shutdown(); }); });
  OACL_INFO("profiling: collecting every device into %s (from %s)", dir.c_str(), source);
  return Status::Ok();
}

void prof_shutdown() {
  const size_t ended = prof::unsubscribe_all();
  if (ended) OACL_INFO("profiling: aclFinalize ended %zu subscription(s)", ended);
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.from_config && !s.api_init) return;
    s.from_config = false;
    s.api_init = false;
  }
  std::string dir;
  Status st = prof::collection_finalize(&dir);
  if (!st.ok())
    OACL_ERROR("profiling: %s", st.message().c_str());
  else if (!dir.empty())
    OACL_INFO("profiling: results written to %s", dir.c_str());
}

}  // namespace openacl::capi

using namespace openacl;
using capi::guarded;
using capi::runtime;

extern "C" {

aclError aclprofInit(const char* profilerResultPath, size_t length) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OPENACL_RETURN_IF_ERROR(capi::not_null(profilerResultPath, "profilerResultPath"));
    if (length == 0 || length > 4096)
      return Errorf(code::kInvalidParam, "length %zu is invalid; pass strlen(profilerResultPath), 1 to 4096", length);
    const std::string dir(profilerResultPath, strnlen(profilerResultPath, length));
    if (dir.empty()) return Errorf(code::kInvalidParam, "profilerResultPath is \"\"; pass a folder");
    if (prof::subscriptions_active())
      return Errorf(ACL_ERROR_PROF_API_CONFLICT, "a model is subscribed (aclprofModelSubscribe); collection to "
                    "files cannot be mixed with it: unsubscribe every model first");
    auto& s = capi::state();
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.from_config)
        return Errorf(ACL_ERROR_PROF_ALREADY_RUN, "profiling already runs from acl.json's profiler section (or "
                      "openacl-msprof); use one or the other");
      if (s.api_init)
        return Errorf(code::kRepeatInitialize, "aclprofInit was already called; call aclprofFinalize first");
    }
    OPENACL_RETURN_IF_ERROR(prof::collection_init(dir));
    std::lock_guard<std::mutex> lock(s.mutex);
    s.api_init = true;
    return Status::Ok();
  });
}

aclError aclprofFinalize(void) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    auto& s = capi::state();
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.api_init)
        return Errorf(ACL_ERROR_PROF_NOT_RUN, s.from_config ? "profiling was started by acl.json (or openacl-msprof); "
                      "it ends at aclFinalize, not here" : "aclprofInit was not called; there is nothing to finalize");
      s.api_init = false;
      s.settings.clear();
    }
    return prof::collection_finalize();
  });
}

aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) {
  aclprofConfig* made = nullptr;
  (void)guarded(__func__, [&] {
    (void)aicoreEvents;  // reserved (spec §5.2)
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    if (deviceNums == 0) return Errorf(code::kInvalidParam, "deviceNums is 0; pass at least one device id");
    OPENACL_RETURN_IF_ERROR(capi::not_null(deviceIdList, "deviceIdList"));
    const int count = runtime().device_count();
    std::vector<uint32_t> devices;
    for (uint32_t i = 0; i < deviceNums; ++i) {
      const uint32_t d = deviceIdList[i];
      if (d >= static_cast<uint32_t>(count))
        return Errorf(code::kInvalidParam, "deviceIdList[%u] = %u is not a device; pass ids 0..%d", i, d, count - 1);
      for (uint32_t seen : devices)
        if (seen == d) return Errorf(code::kInvalidParam, "device %u is listed twice in deviceIdList", d);
      devices.push_back(d);
    }
    OPENACL_RETURN_IF_ERROR(capi::check_aicore_metrics(static_cast<int>(aicoreMetrics), "aicoreMetrics"));
    if (dataTypeConfig & ~capi::kKnownBits)
      return Errorf(code::kInvalidParam, "dataTypeConfig 0x%llx has unknown bits 0x%llx; OR the ACL_PROF_* values",
                    static_cast<unsigned long long>(dataTypeConfig),
                    static_cast<unsigned long long>(dataTypeConfig & ~capi::kKnownBits));
    auto* cfg = new aclprofConfig{std::move(devices), static_cast<int>(aicoreMetrics), dataTypeConfig};
    auto& s = capi::state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.live.insert(cfg);
    made = cfg;
    return Status::Ok();
  });
  return made;
}

aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  return guarded(__func__, [&] {
    aclprofConfig copy;
    OPENACL_RETURN_IF_ERROR(capi::find_config(profilerConfig, &copy));
    auto& s = capi::state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.live.erase(profilerConfig);
    delete profilerConfig;
    return Status::Ok();
  });
}

aclError aclprofStart(const aclprofConfig* profilerConfig) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    aclprofConfig cfg;
    OPENACL_RETURN_IF_ERROR(capi::find_config(profilerConfig, &cfg));
    {
      auto& s = capi::state();
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.api_init)
        return Errorf(ACL_ERROR_PROF_NOT_RUN, s.from_config ? "profiling already runs from acl.json's profiler "
                      "section (or openacl-msprof); it needs no aclprofStart" : "aclprofInit was not called; call "
                      "it with the result folder first");
    }
    if (prof::subscriptions_active())
      return Errorf(ACL_ERROR_PROF_API_CONFLICT, "a model is subscribed (aclprofModelSubscribe); unsubscribe every "
                    "model before aclprofStart");
    uint32_t busy = 0;
    if (!prof::collection_start(cfg.devices, capi::collect_bits(cfg.data_types), &busy))
      return Errorf(ACL_ERROR_PROF_ALREADY_RUN, "device %u is already being profiled; call aclprofStop first", busy);
    return Status::Ok();
  });
}

aclError aclprofStop(const aclprofConfig* profilerConfig) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    aclprofConfig cfg;
    OPENACL_RETURN_IF_ERROR(capi::find_config(profilerConfig, &cfg));
    {
      auto& s = capi::state();
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.api_init) return Errorf(ACL_ERROR_PROF_NOT_RUN, "aclprofInit was not called; nothing to stop");
    }
    if (!prof::collection_running(cfg.devices))
      return Errorf(ACL_ERROR_PROF_NOT_RUN, "device(s) %s are not being profiled; call aclprofStart with this "
                    "config first", capi::device_list(cfg.devices).c_str());
    std::string dir;
    OPENACL_RETURN_IF_ERROR(prof::collection_stop(cfg.devices, &dir));
    OACL_INFO("profiling: results written to %s", dir.c_str());
    return Status::Ok();
  });
}

aclError aclprofSetConfig(aclprofConfigType configType, const char* config, size_t configLength) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    const int type = static_cast<int>(configType);
    if (type <= ACL_PROF_ARGS_MIN || type >= ACL_PROF_ARGS_MAX || type == 2)
      return Errorf(code::kInvalidParam, "configType %d is not an aclprofConfigType value; pass 1 or 3..16", type);
    OPENACL_RETURN_IF_ERROR(capi::not_null(config, "config"));
    if (configLength == 0 || configLength > 256)
      return Errorf(code::kInvalidParam, "configLength %zu is invalid; pass strlen(config), 1 to 256", configLength);
    const std::string value(config, strnlen(config, configLength));
    if (value.empty()) return Errorf(code::kInvalidParam, "config is \"\"; pass a value");
    if (prof::collection_any_running())
      return Errorf(ACL_ERROR_PROF_ALREADY_RUN, "profiling is running; call aclprofSetConfig before aclprofStart");
    OPENACL_RETURN_IF_ERROR(capi::check_setting(type, value));
    if (type == ACL_PROF_PATH) {
      if (!prof::collection_initialized())
        return Errorf(ACL_ERROR_PROF_NOT_RUN, "ACL_PROF_PATH: call aclprofInit first");
      OPENACL_RETURN_IF_ERROR(prof::collection_init(value));
    }
    auto& s = capi::state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.settings.size() < ACL_PROF_ARGS_MAX) s.settings.resize(ACL_PROF_ARGS_MAX);
    s.settings[static_cast<size_t>(type)] = value;
    return Status::Ok();
  });
}

}  // extern "C"
