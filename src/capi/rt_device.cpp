// Devices and contexts (spec §2.1, §2.2).
#include "capi/capi.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().set_device(deviceId);
  });
}

aclError aclrtResetDevice(int32_t deviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().reset_device(deviceId, false);
  });
}

aclError aclrtResetDeviceForce(int32_t deviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().reset_device(deviceId, true);
  });
}

aclError aclrtGetDevice(int32_t* deviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(deviceId, "deviceId"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<rt::Context> ctx;
    OPENACL_RETURN_IF_ERROR(runtime().current_context(&ctx));
    *deviceId = ctx->device();
    return Status::Ok();
  });
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(count, "count"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    *count = static_cast<uint32_t>(runtime().device_count());
    return Status::Ok();
  });
}

aclError aclrtSetTsDevice(aclrtTsId tsId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR)
      return Errorf(code::kInvalidParam, "tsId %d is invalid; pass ACL_TS_ID_AICORE (0) or ACL_TS_ID_AIVECTOR (1)",
                    static_cast<int>(tsId));
    return Status::Ok();  // one scheduler serves both on this backend
  });
}

aclError aclrtSynchronizeDevice(void) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().synchronize_device(-1);
  });
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::check_timeout(timeout, "timeout"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().synchronize_device(timeout);
  });
}

aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(canAccessPeer, "canAccessPeer"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OPENACL_RETURN_IF_ERROR(runtime().check_device(deviceId));
    OPENACL_RETURN_IF_ERROR(runtime().check_device(peerDeviceId));
    if (deviceId == peerDeviceId)
      return Errorf(code::kInvalidParam, "deviceId and peerDeviceId are both %d; pass two different devices", deviceId);
    *canAccessPeer = 1;  // all virtual devices share the host's memory
    return Status::Ok();
  });
}

static Status check_peer(int32_t peerDeviceId) {
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  OPENACL_RETURN_IF_ERROR(runtime().check_device(peerDeviceId));
  std::shared_ptr<rt::Context> ctx;
  OPENACL_RETURN_IF_ERROR(runtime().current_context(&ctx));
  if (ctx->device() == peerDeviceId)
    return Errorf(code::kInvalidParam, "peerDeviceId %d is the current device; pass another device", peerDeviceId);
  return Status::Ok();
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  return guarded(__func__, [&] {
    if (flags != 0) return Errorf(code::kInvalidParam, "flags %u is invalid; it must be 0", flags);
    return check_peer(peerDeviceId);
  });
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  return guarded(__func__, [&] { return check_peer(peerDeviceId); });
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(context, "context"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<rt::Context> ctx;
    OPENACL_RETURN_IF_ERROR(runtime().create_context(deviceId, &ctx));
    *context = ctx.get();
    return Status::Ok();
  });
}

aclError aclrtDestroyContext(aclrtContext context) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(context, "context"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().destroy_context(context);
  });
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(context, "context"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return runtime().set_current_context(context);
  });
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(context, "context"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<rt::Context> ctx;
    OPENACL_RETURN_IF_ERROR(runtime().current_context(&ctx));
    *context = ctx.get();
    return Status::Ok();
  });
}

}  // extern "C"
