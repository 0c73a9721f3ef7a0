// The op-info subscription (acl_prof.h, spec §5.3-5.4): subscribe configs,
// aclprofModelSubscribe / UnSubscribe, and the record readers. The records,
// the pipe writer and the op-string table live in src/prof.
#include <fcntl.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "acl/acl_prof.h"
#include "capi/capi.h"
#include "capi/mdl_registry.h"
#include "capi/prof_state.h"
#include "prof/collection.h"
#include "prof/op_record.h"
#include "prof/subscription.h"

struct aclprofSubscribeConfig {
  int8_t time_info;
  int metrics;
  int fd;
};

namespace openacl::capi {

namespace {

struct Configs {
  std::mutex mutex;
  std::set<const aclprofSubscribeConfig*> live;
};
Configs& configs() {
  static auto* c = new Configs();  // never destroyed
  return *c;
}

Status find_config(const aclprofSubscribeConfig* cfg, aclprofSubscribeConfig* copy) {
  OPENACL_RETURN_IF_ERROR(not_null(cfg, "profSubscribeConfig"));
  Configs& c = configs();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.live.count(cfg))
    return Errorf(code::kInvalidParam,
                  "profSubscribeConfig %p is not a live subscribe config; create one with "
                  "aclprofCreateSubscribeConfig (and do not use it after aclprofDestroySubscribeConfig)",
                  static_cast<const void*>(cfg));
  *copy = *cfg;
  return Status::Ok();
}

// The record buffer checks every reader makes (§5.4); `index` -1: none.
Status check(const char* api, const void* info, size_t len, int64_t index, uint32_t* count = nullptr) {
  (void)api;
  std::string detail;
  uint32_t n = 0;
  if (const char* why = prof::check_records(info, len, index, &n, &detail))
    return Errorf(code::kInvalidParam, "%s%s%s", why, detail.empty() ? "" : " ", detail.c_str());
  if (count) *count = n;
  return Status::Ok();
}

Status op_string_len(const void* info, size_t len, uint32_t index, prof::OpString which, size_t* out) {
  OPENACL_RETURN_IF_ERROR(check("", info, len, index));
  OPENACL_RETURN_IF_ERROR(not_null(out, which == prof::OpString::kType ? "opTypeLen" : "opNameLen"));
  std::string s;
  if (!prof::op_string(prof::record_at(info, index).op_index, which, false, &s))
    return Errorf(code::kInvalidParam,
                  "the op %s of record %u was read already (each name and type can be read once), was forgotten "
                  "(over 262144 unread) or the record "
                  "comes from another process",
                  which == prof::OpString::kType ? "type" : "name", index);
  *out = s.size() + 1;
  return Status::Ok();
}

Status op_string_copy(const void* info, size_t len, uint32_t index, prof::OpString which, char* out,
                      size_t out_len) {
  const char* what = which == prof::OpString::kType ? "type" : "name";
  OPENACL_RETURN_IF_ERROR(check("", info, len, index));
  OPENACL_RETURN_IF_ERROR(not_null(out, which == prof::OpString::kType ? "opType" : "opName"));
  const uint64_t key = prof::record_at(info, index).op_index;
  std::string s;
  if (!prof::op_string(key, which, false, &s))
    return Errorf(code::kInvalidParam,
                  "the op %s of record %u was read already (each name and type can be read once), was forgotten "
                  "(over 262144 unread) or the record "
                  "comes from another process",
                  what, index);
  if (out_len < s.size())
    return Errorf(code::kInvalidParam, "op%sLen %zu is shorter than the op %s '%s' (%zu bytes with its NUL); pass "
                  "the length aclprofGetOp%sLen gives", which == prof::OpString::kType ? "Type" : "Name", out_len,
                  what, s.c_str(), s.size() + 1, which == prof::OpString::kType ? "Type" : "Name");
  if (!prof::op_string(key, which, true, &s))  // another thread read it meanwhile
    return Errorf(code::kInvalidParam, "the op %s of record %u was read already", what, index);
  // CANN's behaviour: a buffer of exactly strlen bytes gets the string less
  // its last character (room for the NUL); the string is consumed either way.
  const size_t n = std::min(s.size(), out_len - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  return Status::Ok();
}

}  // namespace

}  // namespace openacl::capi

using namespace openacl;
using capi::guarded;

extern "C" {

aclprofSubscribeConfig* aclprofCreateSubscribeConfig(int8_t timeInfoSwitch, aclprofAicoreMetrics aicoreMetrics,
                                                     void* fd) {
  aclprofSubscribeConfig* made = nullptr;
  (void)guarded(__func__, [&] {
    if (timeInfoSwitch != 0 && timeInfoSwitch != 1)
      return Errorf(code::kInvalidParam, "timeInfoSwitch %d is invalid; pass 1 (collect op times) or 0",
                    timeInfoSwitch);
    OPENACL_RETURN_IF_ERROR(capi::check_aicore_metrics(static_cast<int>(aicoreMetrics), "aicoreMetrics"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(fd, "fd"));
    const int f = *static_cast<const int*>(fd);
    const int flags = f >= 0 ? ::fcntl(f, F_GETFL) : -1;
    if (flags < 0)
      return Errorf(code::kInvalidParam, "fd %d is not an open file descriptor; pass the write end of a pipe "
                    "(os.pipe()[1])", f);
    if ((flags & O_ACCMODE) == O_RDONLY)
      return Errorf(code::kInvalidParam, "fd %d is open read-only; pass the write end of the pipe (os.pipe()[1])",
                    f);
    auto* cfg = new aclprofSubscribeConfig{timeInfoSwitch, static_cast<int>(aicoreMetrics), f};
    auto& c = capi::configs();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live.insert(cfg);
    made = cfg;
    return Status::Ok();
  });
  return made;
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig* profSubscribeConfig) {
  return guarded(__func__, [&] {
    aclprofSubscribeConfig copy;
    OPENACL_RETURN_IF_ERROR(capi::find_config(profSubscribeConfig, &copy));
    auto& c = capi::configs();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live.erase(profSubscribeConfig);
    delete profSubscribeConfig;
    return Status::Ok();
  });
}

aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig* profSubscribeConfig) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    aclprofSubscribeConfig cfg;
    OPENACL_RETURN_IF_ERROR(capi::find_config(profSubscribeConfig, &cfg));
    OPENACL_RETURN_IF_ERROR(capi::check_no_collection("aclprofModelSubscribe"));
    std::shared_ptr<capi::ModelEntry> entry;
    if (!capi::find_model(modelId, &entry).ok())
      return Errorf(code::kInvalidModelId, "model id %u is not loaded; subscribe after aclmdlLoad* returns its id",
                    modelId);
    if (prof::model_subscribed(modelId))
      return Errorf(ACL_ERROR_PROF_REPEAT_SUBSCRIBE,
                    "model %u is already subscribed; call aclprofModelUnSubscribe before subscribing it again",
                    modelId);
    if (::fcntl(cfg.fd, F_GETFL) < 0)
      return Errorf(code::kInvalidParam, "the config's fd %d is no longer open (a pipe write end is closed by "
                    "aclprofModelUnSubscribe); create a new pipe and config", cfg.fd);
    if (!prof::subscribe_model(modelId, entry->device(), cfg.fd, cfg.time_info == 1))
      return Errorf(ACL_ERROR_PROF_REPEAT_SUBSCRIBE, "model %u is already subscribed", modelId);
    return Status::Ok();
  });
}

aclError aclprofModelUnSubscribe(uint32_t modelId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    if (!prof::unsubscribe_model(modelId, nullptr)) {
      std::shared_ptr<capi::ModelEntry> entry;
      if (!capi::find_model(modelId, &entry).ok())
        return Errorf(code::kInvalidModelId, "model id %u is not loaded and not subscribed", modelId);
      return Errorf(code::kInvalidModelId,
                    "model %u is not subscribed; call aclprofModelSubscribe first (or it was unsubscribed already)",
                    modelId);
    }
    return Status::Ok();
  });
}

aclError aclprofGetOpDescSize(size_t* opDescSize) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(opDescSize, "opDescSize"));
    *opDescSize = sizeof(prof::OpRecord);
    return Status::Ok();
  });
}

aclError aclprofGetOpNum(const void* opInfo, size_t opInfoLen, uint32_t* opNumber) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(opNumber, "opNumber"));
    return capi::check(__func__, opInfo, opInfoLen, -1, opNumber);
  });
}

aclError aclprofGetOpTypeLen(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opTypeLen) {
  return guarded(__func__,
                 [&] { return capi::op_string_len(opInfo, opInfoLen, index, prof::OpString::kType, opTypeLen); });
}

aclError aclprofGetOpNameLen(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opNameLen) {
  return guarded(__func__,
                 [&] { return capi::op_string_len(opInfo, opInfoLen, index, prof::OpString::kName, opNameLen); });
}

aclError aclprofGetOpType(const void* opInfo, size_t opInfoLen, uint32_t index, char* opType, size_t opTypeLen) {
  return guarded(__func__, [&] {
    return capi::op_string_copy(opInfo, opInfoLen, index, prof::OpString::kType, opType, opTypeLen);
  });
}

aclError aclprofGetOpName(const void* opInfo, size_t opInfoLen, uint32_t index, char* opName, size_t opNameLen) {
  return guarded(__func__, [&] {
    return capi::op_string_copy(opInfo, opInfoLen, index, prof::OpString::kName, opName, opNameLen);
  });
}

uint64_t aclprofGetOpStart(const void* opInfo, size_t opInfoLen, uint32_t index) {
  uint64_t v = 0;
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    v = prof::record_at(opInfo, index).start;
    return Status::Ok();
  });
  return v;
}

uint64_t aclprofGetOpEnd(const void* opInfo, size_t opInfoLen, uint32_t index) {
  uint64_t v = 0;
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    v = prof::record_at(opInfo, index).end;
    return Status::Ok();
  });
  return v;
}

uint64_t aclprofGetOpDuration(const void* opInfo, size_t opInfoLen, uint32_t index) {
  uint64_t v = 0;
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    v = prof::record_at(opInfo, index).duration;
    return Status::Ok();
  });
  return v;
}

size_t aclprofGetModelId(const void* opInfo, size_t opInfoLen, uint32_t index) {
  size_t v = 0;
  const aclError ret = guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    v = prof::record_at(opInfo, index).model_id;
    return Status::Ok();
  });
  return ret == ACL_SUCCESS ? v : static_cast<size_t>(ret);
}

aclprofSubscribeOpFlag aclprofGetOpFlag(const void* opInfo, size_t opInfoLen, uint32_t index) {
  aclprofSubscribeOpFlag v = ACL_SUBSCRIBE_NONE;
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    v = static_cast<aclprofSubscribeOpFlag>(prof::record_at(opInfo, index).flag);
    return Status::Ok();
  });
  return v;
}

const char* aclprofGetOpAttriValue(const void* opInfo, size_t opInfoLen, uint32_t index,
                                   aclprofSubscribeOpAttri attri) {
  thread_local std::string value;
  const char* out = nullptr;
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check(__func__, opInfo, opInfoLen, index));
    if (static_cast<int>(attri) != ACL_SUBSCRIBE_ATTRI_THREADID)
      return Errorf(code::kInvalidParam, "attri %d is invalid; pass ACL_SUBSCRIBE_ATTRI_THREADID (0)",
                    static_cast<int>(attri));
    value = std::to_string(prof::record_at(opInfo, index).thread_id);
    out = value.c_str();
    return Status::Ok();
  });
  return out;
}

}  // extern "C"
