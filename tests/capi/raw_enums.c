/* C99 on purpose: see raw_enums.h. Also proves the public headers compile as C. */
#include "raw_enums.h"

aclError raw_aclrtSetTsDevice(int tsId) { return aclrtSetTsDevice((aclrtTsId)tsId); }

aclError raw_aclrtMalloc(void **devPtr, size_t size, int policy) {
    return aclrtMalloc(devPtr, size, (aclrtMemMallocPolicy)policy);
}

aclError raw_aclrtMallocAlign32(void **devPtr, size_t size, int policy) {
    return aclrtMallocAlign32(devPtr, size, (aclrtMemMallocPolicy)policy);
}

aclError raw_aclrtMallocCached(void **devPtr, size_t size, int policy) {
    return aclrtMallocCached(devPtr, size, (aclrtMemMallocPolicy)policy);
}

aclError raw_aclrtGetMemInfo(int attr, size_t *free_bytes, size_t *total) {
    return aclrtGetMemInfo((aclrtMemAttr)attr, free_bytes, total);
}

aclError raw_aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind) {
    return aclrtMemcpy(dst, destMax, src, count, (aclrtMemcpyKind)kind);
}

aclError raw_aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, int kind, aclrtStream stream) {
    return aclrtMemcpyAsync(dst, destMax, src, count, (aclrtMemcpyKind)kind, stream);
}

aclError raw_aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                           int kind) {
    return aclrtMemcpy2d(dst, dpitch, src, spitch, width, height, (aclrtMemcpyKind)kind);
}

aclError raw_aclrtLaunchCallback(aclrtCallback fn, void *userData, int blockType, aclrtStream stream) {
    return aclrtLaunchCallback(fn, userData, (aclrtCallbackBlockType)blockType, stream);
}

size_t raw_aclDataTypeSize(int dataType) { return aclDataTypeSize((aclDataType)dataType); }

void raw_aclAppLog(int level, const char *msg) { aclAppLog((aclLogLevel)level, "raw", "raw_enums.c", 1, "%s", msg); }

aclError raw_aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, int tag, aclrtStream stream) {
    return aclprofGetStepTimestamp(stepInfo, (aclprofStepTag)tag, stream);
}
