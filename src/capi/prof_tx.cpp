// msproftx user annotations and step info (acl_prof.h, spec §5.2): stamps,
// marks, push/pop and start/stop ranges, recorded while a collection with
// ACL_PROF_MSPROFTX runs (prof::tx_tracing()); steps ("Step n" ranges) while
// any collection runs. Outside one the calls succeed and record nothing, so
// instrumented programs run unchanged.
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_prof.h"
#include "capi/capi.h"
#include "prof/collection.h"

namespace openacl::capi {
namespace {

constexpr size_t kMaxMessage = 1024;

struct Stamp {
  std::string message;
};

}  // namespace
}  // namespace openacl::capi

// A step in progress: its START time and thread; started == false between steps.
struct aclprofStepInfo {
  bool started = false;
  int64_t start_ns = 0;
  uint32_t thread_id = 0;
  uint64_t stream = 0;
};

namespace openacl::capi {
namespace {

// Step ranges share the async-event id space with aclprofRangeStart ids:
// they take the upper half.
constexpr uint32_t kStepIdBase = 0x80000000u;

struct TxState {
  std::mutex mutex;
  std::set<const Stamp*> live;
  std::set<const aclprofStepInfo*> steps;
  uint32_t next_step = 1;
  uint32_t next_range = 1;
  std::map<uint32_t, prof::MarkEvent> ranges;  // started, not stopped
};
TxState& tx() {
  static auto* s = new TxState();  // never destroyed
  return *s;
}

// The stamp's message; kInvalidParam for a stamp that is not live.
Status stamp_message(void* stamp, std::string* out) {
  OPENACL_RETURN_IF_ERROR(not_null(stamp, "stamp"));
  TxState& s = tx();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.live.count(static_cast<const Stamp*>(stamp)))
    return Errorf(code::kInvalidParam, "stamp %p is not a live stamp; create one with aclprofCreateStamp", stamp);
  *out = static_cast<const Stamp*>(stamp)->message;
  return Status::Ok();
}

Status check_message(const char* msg, size_t len, const char* what) {
  OPENACL_RETURN_IF_ERROR(not_null(msg, what));
  if (len == 0 || len > kMaxMessage)
    return Errorf(code::kInvalidParam, "%s length %zu is invalid; pass 1 to %zu bytes", what, len, kMaxMessage);
  return Status::Ok();
}

// Push/pop ranges of the calling thread.
thread_local std::vector<prof::MarkEvent> t_pushed;

}  // namespace
}  // namespace openacl::capi

using namespace openacl;
using capi::guarded;

extern "C" {

void* aclprofCreateStamp(void) {
  void* made = nullptr;
  (void)guarded(__func__, [&] {
    auto* stamp = new capi::Stamp();
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.live.insert(stamp);
    made = stamp;
    return Status::Ok();
  });
  return made;
}

void aclprofDestroyStamp(void* stamp) {
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(stamp, "stamp"));
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.live.erase(static_cast<const capi::Stamp*>(stamp)))
      return Errorf(code::kInvalidParam, "stamp %p is not a live stamp (destroyed twice?)", stamp);
    delete static_cast<capi::Stamp*>(stamp);
    return Status::Ok();
  });
}

aclError aclprofSetStampTraceMessage(void* stamp, const char* msg, uint32_t msgLength) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_message(msg, msgLength, "msg"));
    std::string old;
    OPENACL_RETURN_IF_ERROR(capi::stamp_message(stamp, &old));
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.live.count(static_cast<const capi::Stamp*>(stamp)))
      return Errorf(code::kInvalidParam, "stamp %p was destroyed meanwhile", stamp);
    static_cast<capi::Stamp*>(stamp)->message.assign(msg, strnlen(msg, msgLength));
    return Status::Ok();
  });
}

aclError aclprofMark(void* stamp) {
  return guarded(__func__, [&] {
    prof::MarkEvent e;
    OPENACL_RETURN_IF_ERROR(capi::stamp_message(stamp, &e.message));
    if (!prof::tx_tracing()) return Status::Ok();
    e.start_ns = e.end_ns = prof::now_ns();
    e.thread_id = prof::thread_id();
    prof::record_mark(std::move(e));
    return Status::Ok();
  });
}

aclError aclprofMarkEx(const char* msg, size_t msgLen, aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_message(msg, msgLen, "msg"));
    if (!prof::tx_tracing()) return Status::Ok();
    prof::MarkEvent e;
    e.message.assign(msg, strnlen(msg, msgLen));
    e.start_ns = e.end_ns = prof::now_ns();
    e.thread_id = prof::thread_id();
    e.stream = reinterpret_cast<uintptr_t>(stream);
    prof::record_mark(std::move(e));
    return Status::Ok();
  });
}

aclError aclprofPush(void* stamp) {
  return guarded(__func__, [&] {
    prof::MarkEvent e;
    OPENACL_RETURN_IF_ERROR(capi::stamp_message(stamp, &e.message));
    e.kind = prof::MarkEvent::Kind::kPushPop;
    e.start_ns = prof::now_ns();
    e.thread_id = prof::thread_id();
    capi::t_pushed.push_back(std::move(e));
    return Status::Ok();
  });
}

aclError aclprofPop(void) {
  return guarded(__func__, [&] {
    if (capi::t_pushed.empty())
      return Errorf(code::kInvalidParam, "no range is open on this thread; call aclprofPush first");
    prof::MarkEvent e = std::move(capi::t_pushed.back());
    capi::t_pushed.pop_back();
    e.end_ns = prof::now_ns();
    if (prof::tx_tracing()) prof::record_mark(std::move(e));
    return Status::Ok();
  });
}

aclError aclprofRangeStart(void* stamp, uint32_t* rangeId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(rangeId, "rangeId"));
    prof::MarkEvent e;
    OPENACL_RETURN_IF_ERROR(capi::stamp_message(stamp, &e.message));
    e.kind = prof::MarkEvent::Kind::kRange;
    e.start_ns = prof::now_ns();
    e.thread_id = prof::thread_id();
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    e.range_id = s.next_range++;
    if (s.next_range == 0) s.next_range = 1;  // ids wrap past 0
    *rangeId = e.range_id;
    s.ranges[e.range_id] = std::move(e);
    return Status::Ok();
  });
}

aclError aclprofRangeStop(uint32_t rangeId) {
  return guarded(__func__, [&] {
    prof::MarkEvent e;
    {
      auto& s = capi::tx();
      std::lock_guard<std::mutex> lock(s.mutex);
      auto it = s.ranges.find(rangeId);
      if (it == s.ranges.end())
        return Errorf(code::kInvalidParam, "range %u was not started or is already stopped; pass the id "
                      "aclprofRangeStart gave", rangeId);
      e = std::move(it->second);
      s.ranges.erase(it);
    }
    e.end_ns = prof::now_ns();
    e.end_thread_id = prof::thread_id();
    if (prof::tx_tracing()) prof::record_mark(std::move(e));
    return Status::Ok();
  });
}

aclprofStepInfo* aclprofCreateStepInfo(void) {
  aclprofStepInfo* made = nullptr;
  (void)guarded(__func__, [&] {
    auto* info = new aclprofStepInfo();
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.steps.insert(info);
    made = info;
    return Status::Ok();
  });
  return made;
}

void aclprofDestroyStepInfo(aclprofStepInfo* stepInfo) {
  (void)guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(stepInfo, "stepInfo"));
    auto& s = capi::tx();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.steps.erase(stepInfo))
      return Errorf(code::kInvalidParam, "stepInfo %p is not live (destroyed twice?)", static_cast<void*>(stepInfo));
    delete stepInfo;
    return Status::Ok();
  });
}

aclError aclprofGetStepTimestamp(aclprofStepInfo* stepInfo, aclprofStepTag tag, aclrtStream stream) {
  const int t = capi::enum_int(tag);
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(stepInfo, "stepInfo"));
    if (t != ACL_STEP_START && t != ACL_STEP_END)
      return Errorf(code::kInvalidParam, "tag %d is invalid; pass ACL_STEP_START (0) or ACL_STEP_END (1)", t);
    const int64_t now = prof::now_ns();
    prof::MarkEvent e;
    {
      auto& s = capi::tx();
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.steps.count(stepInfo))
        return Errorf(code::kInvalidParam, "stepInfo %p is not live; create it with aclprofCreateStepInfo",
                      static_cast<void*>(stepInfo));
      if (t == ACL_STEP_START) {
        if (stepInfo->started)
          return Errorf(code::kInvalidParam, "the step was started already; call with ACL_STEP_END first");
        stepInfo->started = true;
        stepInfo->start_ns = now;
        stepInfo->thread_id = prof::thread_id();
        stepInfo->stream = reinterpret_cast<uintptr_t>(stream);
        return Status::Ok();
      }
      if (!stepInfo->started)
        return Errorf(code::kInvalidParam, "the step was not started; call with ACL_STEP_START first");
      stepInfo->started = false;
      const uint32_t n = s.next_step++;
      e.kind = prof::MarkEvent::Kind::kRange;
      e.message = "Step " + std::to_string(n);
      e.range_id = capi::kStepIdBase | (n & ~capi::kStepIdBase);
      e.start_ns = stepInfo->start_ns;
      e.thread_id = stepInfo->thread_id;
      e.stream = stepInfo->stream;
    }
    e.end_ns = now;
    e.end_thread_id = prof::thread_id();
    prof::record_step(std::move(e));
    return Status::Ok();
  });
}

}  // extern "C"
