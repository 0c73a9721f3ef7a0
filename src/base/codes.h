// Error codes used inside OpenACL. The values are CANN's (spec §8); capi checks
// them against the public headers with static_asserts, so this is the one table.
#pragma once

namespace openacl::code {

inline constexpr int kSuccess = 0;
inline constexpr int kInvalidParam = 100000;
inline constexpr int kUninitialize = 100001;
inline constexpr int kRepeatInitialize = 100002;
inline constexpr int kInvalidFile = 100003;
inline constexpr int kWriteFile = 100004;
inline constexpr int kParseFile = 100006;
inline constexpr int kInvalidDumpConfig = 100009;
inline constexpr int kInvalidModelId = 100011;
inline constexpr int kDeserializeModel = 100012;
inline constexpr int kParseModel = 100013;
inline constexpr int kReadModelFailure = 100014;
inline constexpr int kModelSizeInvalid = 100015;
inline constexpr int kModelMissingAttr = 100016;
inline constexpr int kModelInputNotMatch = 100017;
inline constexpr int kModelOutputNotMatch = 100018;
inline constexpr int kModelNotDynamic = 100019;
inline constexpr int kOpTypeNotMatch = 100020;
inline constexpr int kOpInputNotMatch = 100021;
inline constexpr int kOpOutputNotMatch = 100022;
inline constexpr int kOpAttrNotMatch = 100023;
inline constexpr int kOpNotFound = 100024;
inline constexpr int kOpLoadFailed = 100025;
inline constexpr int kUnsupportedDataType = 100026;
inline constexpr int kRepeatFinalize = 100037;
inline constexpr int kDumpAlreadyRun = 100044;
inline constexpr int kDumpNotRun = 100045;
inline constexpr int kBadAlloc = 200000;
inline constexpr int kApiNotSupport = 200001;
inline constexpr int kFeatureUnsupported = 200006;
inline constexpr int kInternalError = 500000;

inline constexpr int kRtParamInvalid = 107000;
inline constexpr int kRtInvalidDeviceId = 107001;
inline constexpr int kRtContextNull = 107002;
inline constexpr int kRtModelContext = 107004;
inline constexpr int kRtEventTimestampInvalid = 107006;
inline constexpr int kRtEventTimestampReversal = 107007;
inline constexpr int kRtStreamSubscribe = 107011;
inline constexpr int kRtThreadSubscribe = 107012;
inline constexpr int kRtStreamNoCbReg = 107015;
inline constexpr int kRtWaitTimeout = 107019;
inline constexpr int kRtMemoryAllocation = 207001;
inline constexpr int kRtInternalError = 507000;
inline constexpr int kRtModelExecute = 507011;
inline constexpr int kRtReportTimeout = 507012;
inline constexpr int kRtStreamSyncTimeout = 507046;
inline constexpr int kRtEventSyncTimeout = 507047;

inline constexpr int kGeDynamicBatchSizeInvalid = 145013;

}  // namespace openacl::code
