// aclmdlDataset (spec §3.4): an ordered list of data buffers the dataset never
// owns. Live datasets are registered, so a destroyed or bogus pointer is
// refused instead of read.
#include <mutex>
#include <unordered_set>
#include <vector>

#include "capi/capi.h"
#include "capi/mdl_registry.h"

struct aclmdlDataset {
  std::vector<aclDataBuffer*> buffers;
};

using namespace openacl;

namespace {

std::mutex g_mutex;  // guards the live set and every dataset's buffer list
std::unordered_set<const aclmdlDataset*>& live() {
  static auto* set = new std::unordered_set<const aclmdlDataset*>();
  return *set;
}

Status unknown(const aclmdlDataset* d) {
  return Errorf(code::kInvalidParam, "dataset %p is unknown or already destroyed; create one with aclmdlCreateDataset",
                static_cast<const void*>(d));
}

// Reads a data buffer through the public getters: they check the buffer is
// live, so a buffer destroyed after it was added reads as (NULL, 0).
model::IoBuffer read_buffer(const aclDataBuffer* b) {
  return model::IoBuffer{aclGetDataBufferAddr(b), aclGetDataBufferSizeV2(b)};
}

}  // namespace

namespace openacl::capi {

Status dataset_buffers(const aclmdlDataset* dataset, const char* role, std::vector<model::IoBuffer>* out) {
  if (!dataset) return Errorf(code::kInvalidParam, "%s dataset is NULL; pass one made by aclmdlCreateDataset", role);
  std::vector<aclDataBuffer*> buffers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset))
      return Errorf(code::kInvalidParam, "%s dataset %p is unknown or already destroyed", role,
                    static_cast<const void*>(dataset));
    buffers = dataset->buffers;
  }
  out->clear();
  out->reserve(buffers.size());
  for (const aclDataBuffer* b : buffers) out->push_back(read_buffer(b));
  return Status::Ok();
}

Status dataset_buffer_at(const aclmdlDataset* dataset, size_t index, model::IoBuffer* out) {
  OPENACL_RETURN_IF_ERROR(not_null(dataset, "dataset"));
  const aclDataBuffer* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset)) return unknown(dataset);
    if (index >= dataset->buffers.size())
      return Errorf(code::kInvalidParam, "index %zu is out of range: the dataset holds %zu buffer(s)", index,
                    dataset->buffers.size());
    b = dataset->buffers[index];
  }
  *out = read_buffer(b);
  return Status::Ok();
}

}  // namespace openacl::capi

extern "C" {

aclmdlDataset* aclmdlCreateDataset(void) {
  aclmdlDataset* out = nullptr;
  capi::guarded(__func__, [&] {
    auto* d = new aclmdlDataset();
    std::lock_guard<std::mutex> lock(g_mutex);
    live().insert(d);
    out = d;
    return Status::Ok();
  });
  return out;
}

aclError aclmdlDestroyDataset(const aclmdlDataset* dataset) {
  return capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (!live().erase(dataset)) return unknown(dataset);
    }
    delete dataset;  // the buffers and their memory stay the caller's
    return Status::Ok();
  });
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset* dataset, aclDataBuffer* dataBuffer) {
  return capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataBuffer, "dataBuffer"));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset)) return unknown(dataset);
    dataset->buffers.push_back(dataBuffer);
    return Status::Ok();
  });
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset* dataset) {
  size_t n = 0;
  capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset)) return unknown(dataset);
    n = dataset->buffers.size();
    return Status::Ok();
  });
  return n;
}

aclDataBuffer* aclmdlGetDatasetBuffer(const aclmdlDataset* dataset, size_t index) {
  aclDataBuffer* out = nullptr;
  capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset)) return unknown(dataset);
    if (index >= dataset->buffers.size())
      return Errorf(code::kInvalidParam, "index %zu is out of range: the dataset holds %zu buffer(s)", index,
                    dataset->buffers.size());
    out = dataset->buffers[index];
    return Status::Ok();
  });
  return out;
}

}  // extern "C"
