// Recent-error messages (aclGetRecentErrMsg) and the code table check.
#include <mutex>

#include "capi/capi.h"

namespace openacl::capi {

static_assert(code::kInvalidParam == ACL_ERROR_INVALID_PARAM);
static_assert(code::kUninitialize == ACL_ERROR_UNINITIALIZE);
static_assert(code::kRepeatInitialize == ACL_ERROR_REPEAT_INITIALIZE);
static_assert(code::kInvalidFile == ACL_ERROR_INVALID_FILE);
static_assert(code::kParseFile == ACL_ERROR_PARSE_FILE);
static_assert(code::kInvalidDumpConfig == ACL_ERROR_INVALID_DUMP_CONFIG);
static_assert(code::kDumpAlreadyRun == ACL_ERROR_DUMP_ALREADY_RUN);
static_assert(code::kDumpNotRun == ACL_ERROR_DUMP_NOT_RUN);
static_assert(code::kRepeatFinalize == ACL_ERROR_REPEAT_FINALIZE);
static_assert(code::kBadAlloc == ACL_ERROR_BAD_ALLOC);
static_assert(code::kApiNotSupport == ACL_ERROR_API_NOT_SUPPORT);
static_assert(code::kFeatureUnsupported == ACL_ERROR_FEATURE_UNSUPPORTED);
static_assert(code::kInternalError == ACL_ERROR_INTERNAL_ERROR);
static_assert(code::kRtParamInvalid == ACL_ERROR_RT_PARAM_INVALID);
static_assert(code::kRtInvalidDeviceId == ACL_ERROR_RT_INVALID_DEVICEID);
static_assert(code::kRtContextNull == ACL_ERROR_RT_CONTEXT_NULL);
static_assert(code::kRtEventTimestampInvalid == ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
static_assert(code::kRtEventTimestampReversal == ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL);
static_assert(code::kRtStreamSubscribe == ACL_ERROR_RT_STREAM_SUBSCRIBE);
static_assert(code::kRtThreadSubscribe == ACL_ERROR_RT_THREAD_SUBSCRIBE);
static_assert(code::kRtStreamNoCbReg == ACL_ERROR_RT_STREAM_NO_CB_REG);
static_assert(code::kRtWaitTimeout == ACL_ERROR_RT_WAIT_TIMEOUT);
static_assert(code::kRtMemoryAllocation == ACL_ERROR_RT_MEMORY_ALLOCATION);
static_assert(code::kRtInternalError == ACL_ERROR_RT_INTERNAL_ERROR);
static_assert(code::kRtReportTimeout == ACL_ERROR_RT_REPORT_TIMEOUT);
static_assert(code::kRtStreamSyncTimeout == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
static_assert(code::kRtEventSyncTimeout == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
static_assert(code::kWriteFile == ACL_ERROR_WRITE_FILE);
static_assert(code::kInvalidModelId == ACL_ERROR_INVALID_MODEL_ID);
static_assert(code::kDeserializeModel == ACL_ERROR_DESERIALIZE_MODEL);
static_assert(code::kParseModel == ACL_ERROR_PARSE_MODEL);
static_assert(code::kReadModelFailure == ACL_ERROR_READ_MODEL_FAILURE);
static_assert(code::kModelSizeInvalid == ACL_ERROR_MODEL_SIZE_INVALID);
static_assert(code::kModelMissingAttr == ACL_ERROR_MODEL_MISSING_ATTR);
static_assert(code::kModelInputNotMatch == ACL_ERROR_MODEL_INPUT_NOT_MATCH);
static_assert(code::kModelOutputNotMatch == ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
static_assert(code::kModelNotDynamic == ACL_ERROR_MODEL_NOT_DYNAMIC);
static_assert(code::kUnsupportedDataType == ACL_ERROR_UNSUPPORTED_DATA_TYPE);
static_assert(code::kRtModelContext == ACL_ERROR_RT_MODEL_CONTEXT);
static_assert(code::kRtModelExecute == ACL_ERROR_RT_MODEL_EXECUTE);
static_assert(code::kGeDynamicBatchSizeInvalid == static_cast<int>(ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID));

namespace {
thread_local std::string t_message;
thread_local std::string t_returned;  // keeps the pointer handed out valid
std::mutex g_process_mutex;
std::string g_process_message;

bool process_level() { return runtime().initialized() && runtime().config().err_msg_process_level; }
}  // namespace

void record_error(const char* api, const Status& st) {
  std::string msg = std::string(api) + ": " + st.message();
  // Timeouts of polling calls are routine, not errors worth a log line.
  LogLevel level = st.code() == code::kRtReportTimeout ? LogLevel::kDebug : LogLevel::kError;
  if (log_enabled(level)) log_write(level, "OpenACL", "%s (code %d)", msg.c_str(), st.code());
  if (process_level()) {
    std::lock_guard<std::mutex> lock(g_process_mutex);
    g_process_message = std::move(msg);
  } else {
    t_message = std::move(msg);
  }
}

}  // namespace openacl::capi

using namespace openacl;

extern "C" const char* aclGetRecentErrMsg(void) {
  try {
    capi::t_returned.clear();
    if (capi::process_level()) {
      std::lock_guard<std::mutex> lock(capi::g_process_mutex);
      capi::t_returned.swap(capi::g_process_message);
    } else {
      capi::t_returned.swap(capi::t_message);
    }
    return capi::t_returned.empty() ? nullptr : capi::t_returned.c_str();
  } catch (...) {
    return nullptr;
  }
}
