/*
 * Calls that pass an arbitrary int where the C API takes an enum. In C++ a value
 * outside an enum's range cannot be formed without undefined behaviour, but C callers
 * (and the Python binding) pass such values legitimately; these wrappers are compiled
 * as C (raw_enums.c), so the tests exercise the library's validation, not our UB.
 */
#ifndef OPENACL_TESTS_CAPI_RAW_ENUMS_H_
#define OPENACL_TESTS_CAPI_RAW_ENUMS_H_

#include "acl/acl.h"
#include "acl/acl_prof.h"

#ifdef __cplusplus
extern "C" {
#endif

aclError raw_aclrtSetTsDevice(int tsId);
aclError raw_aclrtMalloc(void **devPtr, size_t size, int policy);
aclError raw_aclrtMallocAlign32(void **devPtr, size_t size, int policy);
aclError raw_aclrtMallocCached(void **devPtr, size_t size, int policy);
aclError raw_aclrtGetMemInfo(int attr, size_t *free_bytes, size_t *total);
aclError raw_aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind);
aclError raw_aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, int kind, aclrtStream stream);
aclError raw_aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                           int kind);
aclError raw_aclrtLaunchCallback(aclrtCallback fn, void *userData, int blockType, aclrtStream stream);
size_t raw_aclDataTypeSize(int dataType);
void raw_aclAppLog(int level, const char *msg);
aclError raw_aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, int tag, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OPENACL_TESTS_CAPI_RAW_ENUMS_H_ */
