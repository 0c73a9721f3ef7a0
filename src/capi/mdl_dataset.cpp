// aclmdlDataset (spec §3.4): an ordered list of data buffers the dataset never
// owns, each with an optional tensor desc the dataset does own (a copy of the
// user's, as CANN makes, or one the library made for an output). Live datasets
// are registered, so a destroyed or bogus pointer is refused instead of read.
#include <algorithm>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "capi/capi.h"
#include "capi/mdl_registry.h"
#include "capi/tensor_desc.h"

struct aclmdlDataset {
  std::vector<aclDataBuffer*> buffers;
  std::vector<aclTensorDesc*> descs;  // parallel to buffers; owned (DescOwner::kDataset); nullptr: none
  uint64_t serial = 0;                // unique per dataset: a reused address is not mistaken for it
};

using namespace openacl;

namespace {

std::mutex g_mutex;  // guards the live set and every dataset's buffer and desc lists
uint64_t g_next_serial = 1;  // under g_mutex
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

Status dataset_desc_dims(const aclmdlDataset* dataset, const char* role,
                         std::vector<std::optional<std::vector<int64_t>>>* dims, uint64_t* serial) {
  if (!dataset) return Errorf(code::kInvalidParam, "%s dataset is NULL; pass one made by aclmdlCreateDataset", role);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!live().count(dataset))
    return Errorf(code::kInvalidParam, "%s dataset %p is unknown or already destroyed", role,
                  static_cast<const void*>(dataset));
  *serial = dataset->serial;
  if (dims) dims->clear();  // stays empty when the dataset holds no desc (the common case)
  if (!dims || std::all_of(dataset->descs.begin(), dataset->descs.end(), [](auto* d) { return !d; }))
    return Status::Ok();
  dims->assign(dataset->buffers.size(), std::nullopt);
  for (size_t i = 0; i < dataset->descs.size() && i < dims->size(); ++i) {
    if (!dataset->descs[i]) continue;
    std::vector<int64_t> d;
    aclDataType t;
    OPENACL_RETURN_IF_ERROR(tensor_desc_shape(dataset->descs[i], &d, &t));
    (*dims)[i] = std::move(d);
  }
  return Status::Ok();
}

void dataset_report_outputs(const aclmdlDataset* dataset, uint64_t serial, const std::vector<OutputReport>& reports) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!live().count(dataset) || dataset->serial != serial) return;
  // The dataset is live: the const was only for the caller's view of it.
  auto* d = const_cast<aclmdlDataset*>(dataset);
  if (d->descs.size() < d->buffers.size()) d->descs.resize(d->buffers.size(), nullptr);
  for (size_t o = 0; o < reports.size() && o < d->descs.size(); ++o) {
    const OutputReport& r = reports[o];
    if (!d->descs[o]) d->descs[o] = new_tensor_desc(r.dtype, r.dims, r.format, DescOwner::kDataset);
    (void)update_tensor_desc(d->descs[o], r.dtype, r.dims, r.format, r.address);
  }
}

}  // namespace openacl::capi

extern "C" {

aclmdlDataset* aclmdlCreateDataset(void) {
  aclmdlDataset* out = nullptr;
  capi::guarded(__func__, [&] {
    auto* d = new aclmdlDataset();
    std::lock_guard<std::mutex> lock(g_mutex);
    d->serial = g_next_serial++;
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
    for (aclTensorDesc* desc : dataset->descs) capi::delete_tensor_desc(desc);  // the dataset's own copies
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
    dataset->descs.push_back(nullptr);
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

aclError aclmdlSetDatasetTensorDesc(aclmdlDataset* dataset, aclTensorDesc* tensorDesc, size_t index) {
  return capi::guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    // A copy made outside the dataset lock (the desc registry has its own);
    // it replaces the slot's desc under the lock.
    aclTensorDesc* copy = nullptr;
    if (tensorDesc) {
      Status st;
      copy = capi::copy_tensor_desc(tensorDesc, capi::DescOwner::kDataset, &st);
      OPENACL_RETURN_IF_ERROR(st);
    }
    aclTensorDesc* old = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      Status st = live().count(dataset) ? Status::Ok() : unknown(dataset);
      if (st.ok() && index >= dataset->buffers.size())
        st = Errorf(code::kInvalidParam,
                    "index %zu is out of range: the dataset holds %zu buffer(s); add the buffer "
                    "(aclmdlAddDatasetBuffer) before its desc",
                    index, dataset->buffers.size());
      if (!st.ok()) {
        capi::delete_tensor_desc(copy);
        return st;
      }
      old = dataset->descs[index];
      dataset->descs[index] = copy;
    }
    capi::delete_tensor_desc(old);
    return Status::Ok();
  });
}

aclTensorDesc* aclmdlGetDatasetTensorDesc(const aclmdlDataset* dataset, size_t index) {
  aclTensorDesc* out = nullptr;
  capi::guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(dataset)) return unknown(dataset);
    if (index >= dataset->buffers.size())
      return Errorf(code::kInvalidParam, "index %zu is out of range: the dataset holds %zu buffer(s)", index,
                    dataset->buffers.size());
    out = dataset->descs[index];
    return Status::Ok();
  });
  return out;
}

}  // extern "C"
