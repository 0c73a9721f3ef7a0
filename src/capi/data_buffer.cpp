// aclDataBuffer: a registered {data, size} record (spec §3.1).
#include <mutex>
#include <unordered_set>

#include "capi/capi.h"

using namespace openacl;

namespace {

std::mutex g_mutex;
std::unordered_set<const aclDataBuffer*>& live() {
  static auto* set = new std::unordered_set<const aclDataBuffer*>();
  return *set;
}

}  // namespace

extern "C" {

aclDataBuffer* aclCreateDataBuffer(void* data, size_t size) {
  aclDataBuffer* out = nullptr;
  capi::guarded(__func__, [&] {
    if (!data && size != 0)
      return Errorf(code::kInvalidParam, "data is NULL but size is %zu; pass (NULL, 0) for an empty buffer", size);
    auto* b = new aclDataBuffer{data, size};
    std::lock_guard<std::mutex> lock(g_mutex);
    live().insert(b);
    out = b;
    return Status::Ok();
  });
  return out;
}

aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer) {
  return capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataBuffer, "dataBuffer"));
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (!live().erase(dataBuffer))
        return Errorf(code::kInvalidParam, "data buffer %p is unknown or already destroyed",
                      static_cast<const void*>(dataBuffer));
    }
    delete dataBuffer;
    return Status::Ok();
  });
}

aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size) {
  return capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataBuffer, "dataBuffer"));
    if (!data && size != 0)
      return Errorf(code::kInvalidParam, "data is NULL but size is %zu; pass (NULL, 0) for an empty buffer", size);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataBuffer))
      return Errorf(code::kInvalidParam, "data buffer %p is unknown or already destroyed",
                    static_cast<const void*>(dataBuffer));
    dataBuffer->data = data;
    dataBuffer->size = size;
    return Status::Ok();
  });
}

void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer) {
  if (!dataBuffer) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  return live().count(dataBuffer) ? dataBuffer->data : nullptr;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer) {
  return static_cast<uint32_t>(aclGetDataBufferSizeV2(dataBuffer));
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer) {
  if (!dataBuffer) return 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  return live().count(dataBuffer) ? dataBuffer->size : 0;
}

}  // extern "C"
