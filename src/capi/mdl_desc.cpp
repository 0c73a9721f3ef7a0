// aclmdlDesc (spec §3.3): a copy of a model's description (model::ModelInfo),
// filled from a loaded model, a file or bytes. Live descs are registered, so a
// destroyed or bogus pointer is refused instead of read.
//
// Names: a tensor name longer than 127 characters does not fit
// aclmdlIODims.name; such a tensor is shown (NameByIndex, the dims structs)
// under a generated name "acl_modelId_<id>_input_<index>" / "..._output_..."
// as CANN does, and aclmdlGetTensorRealName maps it back. IndexByName accepts
// the shown and the real name.
//
// Gear models: input dims show -1 for gear dims; output dims (GetOutputDims)
// are those of the largest gear; GetCurOutputDims follows the gear the model
// was last set to (a desc not filled from a loaded model: the largest gear).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "capi/capi.h"
#include "capi/mdl_registry.h"
#include "graph/dtype.h"

struct aclmdlDesc {
  bool filled = false;
  openacl::model::ModelInfo info;
  uint32_t model_id = 0;                            // 0 unless filled by aclmdlGetDesc
  std::shared_ptr<openacl::capi::ModelEntry> entry;  // set by aclmdlGetDesc
  std::vector<std::string> input_names;             // as shown (<= 127 chars)
  std::vector<std::string> output_names;
};

using namespace openacl;
using capi::guarded;

namespace {

constexpr size_t kMaxName = ACL_MAX_TENSOR_NAME_LEN - 1;

std::mutex g_mutex;  // guards the live set and every desc's contents
std::unordered_set<const aclmdlDesc*>& live() {
  static auto* set = new std::unordered_set<const aclmdlDesc*>();
  return *set;
}

// Runs body(desc) under the lock when desc is live and filled.
template <class Body>
Status with_desc(const aclmdlDesc* desc, Body&& body) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(desc, "modelDesc"));
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!live().count(desc))
    return Errorf(code::kInvalidParam, "modelDesc %p is unknown or already destroyed; create one with "
                                       "aclmdlCreateDesc",
                  static_cast<const void*>(desc));
  if (!desc->filled)
    return Errorf(code::kInvalidParam, "modelDesc %p is empty; fill it with aclmdlGetDesc, aclmdlGetDescFromFile or "
                                       "aclmdlGetDescFromMem first",
                  static_cast<const void*>(desc));
  return body(*desc);
}

Status check_index(const std::vector<model::IoInfo>& v, size_t index, const char* kind) {
  if (index < v.size()) return Status::Ok();
  return Errorf(code::kInvalidParam, "%s index %zu is out of range: the model has %zu %ss (0..%zu)", kind, index,
                v.size(), kind, v.empty() ? 0 : v.size() - 1);
}

std::string shown_name(const std::string& real, uint32_t id, const char* kind, size_t index) {
  if (real.size() <= kMaxName) return real;
  return strformat("acl_modelId_%u_%s_%zu", id, kind, index);
}

void fill(aclmdlDesc* d, model::ModelInfo info, uint32_t id, std::shared_ptr<capi::ModelEntry> entry) {
  d->info = std::move(info);
  d->model_id = id;
  d->entry = std::move(entry);
  d->input_names.clear();
  d->output_names.clear();
  for (size_t i = 0; i < d->info.inputs.size(); ++i)
    d->input_names.push_back(shown_name(d->info.inputs[i].name, id, "input", i));
  for (size_t i = 0; i < d->info.outputs.size(); ++i)
    d->output_names.push_back(shown_name(d->info.outputs[i].name, id, "output", i));
  d->filled = true;
}

Status fill_dims(aclmdlIODims* out, const std::string& name, const std::vector<int64_t>& dims) {
  if (dims.size() > ACL_MAX_DIM_CNT)
    return Errorf(code::kInvalidParam, "tensor '%s' has %zu dims; aclmdlIODims holds at most %d", name.c_str(),
                  dims.size(), ACL_MAX_DIM_CNT);
  std::memset(out->name, 0, sizeof out->name);
  std::memcpy(out->name, name.data(), std::min(name.size(), kMaxName));
  out->dimCount = dims.size();
  for (size_t i = 0; i < dims.size(); ++i) out->dims[i] = dims[i];
  return Status::Ok();
}

// The output dims GetOutputDims reports: ModelInfo's, which for gear models
// are the largest gear's (spec §3.3).
const std::vector<int64_t>& static_output_dims(const aclmdlDesc& d, size_t index) {
  return d.info.outputs[index].dims;
}

// Index of `name` among the shown or real names; -1 when absent.
long find_name(const std::vector<std::string>& shown, const std::vector<model::IoInfo>& io, const char* name) {
  for (size_t i = 0; i < shown.size(); ++i)
    if (shown[i] == name) return static_cast<long>(i);
  for (size_t i = 0; i < io.size(); ++i)
    if (io[i].name == name) return static_cast<long>(i);
  return -1;
}

// IndexByName: an unknown name returns ACL_ERROR_INVALID_PARAM without a
// recorded message or log line — programs probe every model for
// ascend_mbatch_shape_data (compat-notes §1.3).
aclError index_by_name(const char* api, const aclmdlDesc* desc, const char* name, size_t* index, bool input) {
  bool miss = false;
  aclError r = guarded(api, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(name, "name"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(index, "index"));
    return with_desc(desc, [&](const aclmdlDesc& d) {
      long i = input ? find_name(d.input_names, d.info.inputs, name) : find_name(d.output_names, d.info.outputs, name);
      if (i < 0) {
        miss = true;
        return Status::Ok();
      }
      *index = static_cast<size_t>(i);
      return Status::Ok();
    });
  });
  if (r != ACL_SUCCESS) return r;
  return miss ? ACL_ERROR_INVALID_PARAM : ACL_SUCCESS;
}

// One field of input or output `index` of a desc; `fallback` (with the error
// recorded) for a bad desc or index.
template <class T, class Get>
T io_field(const char* api, const aclmdlDesc* desc, bool input, size_t index, T fallback, Get&& get) {
  T out = fallback;
  guarded(api, [&] {
    return with_desc(desc, [&](const aclmdlDesc& d) {
      const std::vector<model::IoInfo>& ios = input ? d.info.inputs : d.info.outputs;
      OPENACL_RETURN_IF_ERROR(check_index(ios, index, input ? "input" : "output"));
      out = get(ios[index]);
      return Status::Ok();
    });
  });
  return out;
}

}  // namespace

extern "C" {

aclmdlDesc* aclmdlCreateDesc(void) {
  aclmdlDesc* out = nullptr;
  guarded(__func__, [&] {
    auto* d = new aclmdlDesc();
    std::lock_guard<std::mutex> lock(g_mutex);
    live().insert(d);
    out = d;
    return Status::Ok();
  });
  return out;
}

aclError aclmdlDestroyDesc(aclmdlDesc* modelDesc) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelDesc, "modelDesc"));
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (!live().erase(modelDesc))
        return Errorf(code::kInvalidParam, "modelDesc %p is unknown or already destroyed",
                      static_cast<const void*>(modelDesc));
    }
    delete modelDesc;
    return Status::Ok();
  });
}

aclError aclmdlGetDesc(aclmdlDesc* modelDesc, uint32_t modelId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelDesc, "modelDesc"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<capi::ModelEntry> entry;
    OPENACL_RETURN_IF_ERROR(capi::find_model(modelId, &entry));
    std::shared_ptr<model::LoadedModel> m = entry->model();
    if (!m) return Errorf(code::kInvalidModelId, "model %u is being unloaded", modelId);
    model::ModelInfo info = m->info();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(modelDesc))
      return Errorf(code::kInvalidParam, "modelDesc %p is unknown or already destroyed",
                    static_cast<const void*>(modelDesc));
    fill(modelDesc, std::move(info), modelId, std::move(entry));
    return Status::Ok();
  });
}

aclError aclmdlGetDescFromFile(aclmdlDesc* modelDesc, const char* modelPath) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelDesc, "modelDesc"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    capi::ModelFile file;
    OPENACL_RETURN_IF_ERROR(capi::map_model_file(modelPath, "modelPath", &file));
    model::ModelInfo info;
    Status st = model::describe(file.data, file.size, file.dir, &info);
    if (!st.ok())
      return st.message().find(modelPath) == std::string::npos
                 ? Status(st.code(), strformat("model file '%s': %s", modelPath, st.message().c_str()))
                 : st;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(modelDesc))
      return Errorf(code::kInvalidParam, "modelDesc %p is unknown or already destroyed",
                    static_cast<const void*>(modelDesc));
    fill(modelDesc, std::move(info), 0, nullptr);
    return Status::Ok();
  });
}

aclError aclmdlGetDescFromMem(aclmdlDesc* modelDesc, const void* model, size_t modelSize) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelDesc, "modelDesc"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(model, "model"));
    if (modelSize == 0) return Errorf(code::kInvalidParam, "modelSize is 0; pass the number of bytes of the model");
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    model::ModelInfo info;
    OPENACL_RETURN_IF_ERROR(model::describe(model, modelSize, "", &info));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().count(modelDesc))
      return Errorf(code::kInvalidParam, "modelDesc %p is unknown or already destroyed",
                    static_cast<const void*>(modelDesc));
    fill(modelDesc, std::move(info), 0, nullptr);
    return Status::Ok();
  });
}

size_t aclmdlGetNumInputs(aclmdlDesc* modelDesc) {
  size_t n = 0;
  guarded(__func__, [&] {
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      n = d.info.inputs.size();
      return Status::Ok();
    });
  });
  return n;
}

size_t aclmdlGetNumOutputs(aclmdlDesc* modelDesc) {
  size_t n = 0;
  guarded(__func__, [&] {
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      n = d.info.outputs.size();
      return Status::Ok();
    });
  });
  return n;
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, true, index, size_t{0},
                  [](const model::IoInfo& io) { return io.bytes; });
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, false, index, size_t{0},
                  [](const model::IoInfo& io) { return io.bytes; });
}

aclError aclmdlGetInputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.inputs, index, "input"));
      return fill_dims(dims, d.input_names[index], d.info.inputs[index].dims);
    });
  });
}

// No AIPP here: the shape fed to the model is the input's own.
aclError aclmdlGetInputDimsV2(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.inputs, index, "input"));
      return fill_dims(dims, d.input_names[index], d.info.inputs[index].dims);
    });
  });
}

aclError aclmdlGetOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.outputs, index, "output"));
      return fill_dims(dims, d.output_names[index], static_output_dims(d, index));
    });
  });
}

aclError aclmdlGetCurOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.outputs, index, "output"));
      if (!d.entry) return fill_dims(dims, d.output_names[index], static_output_dims(d, index));
      std::shared_ptr<model::LoadedModel> m = d.entry->model();
      if (!m)
        return Errorf(code::kInvalidModelId, "model %u this desc was filled from is unloaded; its current gear is "
                                             "gone (aclmdlGetOutputDims still answers)",
                      d.model_id);
      return fill_dims(dims, d.output_names[index], m->current_output_dims(index));
    });
  });
}

aclError aclmdlGetInputDimsRange(const aclmdlDesc* modelDesc, size_t index, aclmdlIODimsRange* dimsRange) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dimsRange, "dimsRange"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.inputs, index, "input"));
      const model::IoInfo& io = d.info.inputs[index];
      if (io.dims.size() > ACL_MAX_DIM_CNT)
        return Errorf(code::kInvalidParam, "input '%s' has %zu dims; aclmdlIODimsRange holds at most %d",
                      io.name.c_str(), io.dims.size(), ACL_MAX_DIM_CNT);
      dimsRange->rangeCount = io.dims.size();
      for (size_t k = 0; k < io.dims.size(); ++k) {
        if (io.ranges.size() == io.dims.size()) {
          dimsRange->range[k][0] = io.ranges[k].first;
          dimsRange->range[k][1] = io.ranges[k].second;
        } else {  // no ranges recorded: fixed dims are their own range, others unbounded
          dimsRange->range[k][0] = io.dims[k] >= 0 ? io.dims[k] : 1;
          dimsRange->range[k][1] = io.dims[k];
        }
      }
      return Status::Ok();
    });
  });
}

const char* aclmdlGetInputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  const char* out = nullptr;
  guarded(__func__, [&] {
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.inputs, index, "input"));
      out = d.input_names[index].c_str();
      return Status::Ok();
    });
  });
  return out;
}

const char* aclmdlGetOutputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  const char* out = nullptr;
  guarded(__func__, [&] {
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      OPENACL_RETURN_IF_ERROR(check_index(d.info.outputs, index, "output"));
      out = d.output_names[index].c_str();
      return Status::Ok();
    });
  });
  return out;
}

const char* aclmdlGetTensorRealName(const aclmdlDesc* modelDesc, const char* name) {
  const char* out = nullptr;
  guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(name, "name"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      long i = find_name(d.input_names, d.info.inputs, name);
      if (i >= 0) {
        out = d.info.inputs[static_cast<size_t>(i)].name.c_str();
        return Status::Ok();
      }
      i = find_name(d.output_names, d.info.outputs, name);
      if (i >= 0) {
        out = d.info.outputs[static_cast<size_t>(i)].name.c_str();
        return Status::Ok();
      }
      return Errorf(code::kInvalidParam, "no input or output of the model is named '%s'", name);
    });
  });
  return out;
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return index_by_name(__func__, modelDesc, name, index, true);
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return index_by_name(__func__, modelDesc, name, index, false);
}

aclFormat aclmdlGetInputFormat(const aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, true, index, ACL_FORMAT_UNDEFINED,
                  [](const model::IoInfo& io) { return static_cast<aclFormat>(io.format); });
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, false, index, ACL_FORMAT_UNDEFINED,
                  [](const model::IoInfo& io) { return static_cast<aclFormat>(io.format); });
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, true, index, ACL_DT_UNDEFINED,
                  [](const model::IoInfo& io) { return static_cast<aclDataType>(graph::dtype_to_acl(io.dtype)); });
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc* modelDesc, size_t index) {
  return io_field(__func__, modelDesc, false, index, ACL_DT_UNDEFINED,
                  [](const model::IoInfo& io) { return static_cast<aclDataType>(graph::dtype_to_acl(io.dtype)); });
}

aclError aclmdlGetDynamicBatch(const aclmdlDesc* modelDesc, aclmdlBatch* batch) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(batch, "batch"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {
      batch->batchCount = 0;
      if (d.info.gears.kind != model::GearKind::kBatch) return Status::Ok();
      const auto& gears = d.info.gears.gears;
      if (gears.size() > ACL_MAX_BATCH_NUM)
        return Errorf(code::kInvalidParam, "the model has %zu batch gears; aclmdlBatch holds at most %d",
                      gears.size(), ACL_MAX_BATCH_NUM);
      for (size_t g = 0; g < gears.size(); ++g) batch->batch[g] = gears[g].empty() ? 0 : gears[g][0];
      batch->batchCount = gears.size();
      return Status::Ok();
    });
  });
}

aclError aclmdlGetDynamicHW(const aclmdlDesc* modelDesc, size_t index, aclmdlHW* hw) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(hw, "hw"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {  // index is reserved: ignored (spec §3.3)
      hw->hwCount = 0;
      if (d.info.gears.kind != model::GearKind::kImageSize) return Status::Ok();
      const auto& gears = d.info.gears.gears;
      if (gears.size() > ACL_MAX_HW_NUM)
        return Errorf(code::kInvalidParam, "the model has %zu image-size gears; aclmdlHW holds at most %d",
                      gears.size(), ACL_MAX_HW_NUM);
      for (size_t g = 0; g < gears.size(); ++g) {
        hw->hw[g][0] = gears[g].size() > 0 ? gears[g][0] : 0;
        hw->hw[g][1] = gears[g].size() > 1 ? gears[g][1] : 0;
      }
      hw->hwCount = gears.size();
      return Status::Ok();
    });
  });
}

aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc* modelDesc, size_t index, size_t* gearCount) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(gearCount, "gearCount"));
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {  // index is reserved: ignored
      *gearCount = d.info.gears.kind == model::GearKind::kDims ? d.info.gears.gears.size() : 0;
      return Status::Ok();
    });
  });
}

aclError aclmdlGetInputDynamicDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims,
                                   size_t gearCount) {
  return guarded(__func__, [&] {
    return with_desc(modelDesc, [&](const aclmdlDesc& d) {  // index is reserved: ignored
      const size_t have = d.info.gears.kind == model::GearKind::kDims ? d.info.gears.gears.size() : 0;
      if (gearCount != have)
        return Errorf(code::kInvalidParam,
                      "gearCount %zu does not match the model's %zu dims gears; pass what "
                      "aclmdlGetInputDynamicGearCount reports",
                      gearCount, have);
      if (have == 0) return Status::Ok();
      OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
      for (size_t g = 0; g < have; ++g) {
        const auto& values = d.info.gears.gears[g];
        OPENACL_RETURN_IF_ERROR(fill_dims(&dims[g], "", values));
      }
      return Status::Ok();
    });
  });
}

}  // extern "C"
