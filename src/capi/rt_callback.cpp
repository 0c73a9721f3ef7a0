// Host callbacks (spec §2.6, docs/runtime.md "Host callbacks").
#include "capi/capi.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

extern "C" {

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    return runtime().reports().subscribe(threadId, s);
  });
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    return runtime().reports().unsubscribe(threadId, s);
  });
}

aclError aclrtLaunchCallback(aclrtCallback fn, void* userData, aclrtCallbackBlockType blockType, aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(reinterpret_cast<void*>(fn), "fn"));
    if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
      return Errorf(code::kInvalidParam, "blockType %d is invalid; pass ACL_CALLBACK_NO_BLOCK (0) or ACL_CALLBACK_BLOCK (1)",
                    static_cast<int>(blockType));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    uint64_t tid = runtime().reports().subscriber(s);
    if (tid == 0)
      return Errorf(code::kRtStreamNoCbReg,
                    "stream %p has no report thread; call aclrtSubscribeReport(threadId, stream) first", stream);
    rt::ReportHub* hub = &runtime().reports();
    bool block = blockType == ACL_CALLBACK_BLOCK;
    s->enqueue(
        [hub, tid, fn, userData, block]() -> Status {
          hub->deliver(tid, fn, userData, block);
          return Status::Ok();
        },
        "aclrtLaunchCallback");
    return Status::Ok();
  });
}

aclError aclrtProcessReport(int32_t timeout) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_timeout(timeout, "timeout"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().reports().process(timeout);
  });
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void* args) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(reinterpret_cast<void*>(fn), "fn"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    rt::Stream* s;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    s->enqueue(
        [fn, args]() -> Status {
          fn(args);
          return Status::Ok();
        },
        "aclrtLaunchHostFunc");
    return Status::Ok();
  });
}

}  // extern "C"
