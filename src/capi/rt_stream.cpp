// Streams and events (spec §2.3, §2.4).
#include <chrono>

#include "capi/capi.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

namespace {

constexpr uint32_t kKnownEventFlags = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE |
                                      ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

struct StreamRef {
  rt::Stream* stream = nullptr;
  std::shared_ptr<rt::Stream> keep;
};

Status resolve(aclrtStream handle, StreamRef* out) {
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  return runtime().resolve_stream(handle, &out->stream, &out->keep);
}

Status resolve_event(aclrtEvent handle, std::shared_ptr<rt::Event>* out) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "event"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  return runtime().find_event(handle, out);
}

Status create_event(aclrtEvent* event, uint32_t flag) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(event, "event"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  if (flag & ~kKnownEventFlags)
    return Errorf(code::kInvalidParam, "flag 0x%x has unknown bits 0x%x; use ACL_EVENT_* values", flag,
                  flag & ~kKnownEventFlags);
  return runtime().create_event(flag, event);
}

Status wait_event(aclrtEvent event, int32_t timeout) {
  std::shared_ptr<rt::Event> ev;
  OPENACL_RETURN_IF_ERROR(resolve_event(event, &ev));
  uint64_t gen = ev->latest_generation();
  if (gen == 0) return Status::Ok();  // never recorded: nothing to wait for
  if (!ev->wait(gen, timeout))
    return Errorf(code::kRtEventSyncTimeout, "event %p did not complete within %d ms", event, timeout);
  return Status::Ok();
}

// The three query flavours differ only in their enum values.
template <class T>
Status event_status(aclrtEvent event, T* status, T complete, T not_ready) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(status, "status"));
  std::shared_ptr<rt::Event> ev;
  OPENACL_RETURN_IF_ERROR(resolve_event(event, &ev));
  *status = ev->is_complete() ? complete : not_ready;
  return Status::Ok();
}

}  // namespace

extern "C" {

aclError aclrtCreateStream(aclrtStream* stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(stream, "stream"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().create_stream(0, 0, stream);
  });
}

aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(stream, "stream"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().create_stream(priority, flag, stream);
  });
}

aclError aclrtDestroyStream(aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().destroy_stream(stream, false);
  });
}

aclError aclrtDestroyStreamForce(aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().destroy_stream(stream, true);
  });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return guarded(__func__, [&] {
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    return s.stream->synchronize(-1);
  });
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_timeout(timeout, "timeout"));
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    return s.stream->synchronize(timeout);
  });
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(status, "status"));
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    *status = s.stream->idle() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    return Status::Ok();
  });
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  return guarded(__func__, [&] {
    std::shared_ptr<rt::Event> ev;
    OPENACL_RETURN_IF_ERROR(resolve_event(event, &ev));
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    uint64_t gen = ev->latest_generation();
    if (gen == 0) return Status::Ok();  // never recorded: no dependency
    uint32_t limit_s = runtime().wait_timeout_seconds();
    s.stream->enqueue(
        [ev, gen, limit_s]() -> Status {
          int64_t ms = limit_s == 0 ? -1 : static_cast<int64_t>(limit_s) * 1000;
          if (ev->wait(gen, ms)) return Status::Ok();
          return Errorf(code::kRtWaitTimeout, "event %p was not reached within the %u s set by aclrtSetOpWaitTimeout",
                        static_cast<void*>(ev.get()), limit_s);
        },
        "aclrtStreamWaitEvent");
    return Status::Ok();
  });
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  return guarded(__func__, [&] { return create_event(event, ACL_EVENT_SYNC); });
}

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  return guarded(__func__, [&] { return create_event(event, flag); });
}

aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag) {
  return guarded(__func__, [&] { return create_event(event, flag); });
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(event, "event"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().destroy_event(event);
  });
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return guarded(__func__, [&] {
    std::shared_ptr<rt::Event> ev;
    OPENACL_RETURN_IF_ERROR(resolve_event(event, &ev));
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    uint64_t gen = ev->begin_record();
    s.stream->enqueue(
        [ev, gen]() -> Status {
          ev->complete(gen);
          return Status::Ok();
        },
        "aclrtRecordEvent");
    return Status::Ok();
  });
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  return guarded(__func__, [&] {
    std::shared_ptr<rt::Event> ev;
    OPENACL_RETURN_IF_ERROR(resolve_event(event, &ev));
    StreamRef s;
    OPENACL_RETURN_IF_ERROR(resolve(stream, &s));
    uint64_t gen = ev->latest_generation();
    s.stream->enqueue(
        [ev, gen]() -> Status {
          ev->reset(gen);
          return Status::Ok();
        },
        "aclrtResetEvent");
    return Status::Ok();
  });
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
  return guarded(__func__, [&] { return event_status(event, status, ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY); });
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  return guarded(__func__, [&] { return event_status(event, status, ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY); });
}

aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus* status) {
  return guarded(__func__, [&] { return event_status(event, status, ACL_EVENT_WAIT_STATUS_COMPLETE, ACL_EVENT_WAIT_STATUS_NOT_READY); });
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  return guarded(__func__, [&] { return wait_event(event, -1); });
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_timeout(timeout, "timeout"));
    return wait_event(event, timeout);
  });
}

aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(ms, "ms"));
    std::shared_ptr<rt::Event> start, end;
    OPENACL_RETURN_IF_ERROR(resolve_event(startEvent, &start));
    OPENACL_RETURN_IF_ERROR(resolve_event(endEvent, &end));
    rt::Event::Clock::time_point t0, t1;
    if (!start->timestamp(&t0))
      return Errorf(code::kRtEventTimestampInvalid,
                    "startEvent %p has no timestamp (never recorded or not yet reached); synchronize it first",
                    startEvent);
    if (!end->timestamp(&t1))
      return Errorf(code::kRtEventTimestampInvalid,
                    "endEvent %p has no timestamp (never recorded or not yet reached); synchronize it first", endEvent);
    if (t1 < t0)
      return Errorf(code::kRtEventTimestampReversal, "endEvent %p was reached before startEvent %p", endEvent,
                    startEvent);
    *ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
    return Status::Ok();
  });
}

aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    runtime().set_wait_timeout_seconds(timeout);
    return Status::Ok();
  });
}

}  // extern "C"
