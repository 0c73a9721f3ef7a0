// Model load / unload / size query and load configs (spec §3.2).
//
// Every load needs aclInit and a current context (the model's memory is
// allocated on that context's device and counts against it). File loads map
// the file (weights of an .om then stay in place) and look ONNX external data
// up in the file's folder; loads from memory copy what they need during the
// call and refuse external data.
//
// *WithMem loads: the caller's work/weight pointers must be device memory
// from aclrtMalloc on the current device, large enough for what
// aclmdlQuerySize reports for the same model, and not overlapping.
#include <cinttypes>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "capi/capi.h"
#include "capi/mdl_registry.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

// Load options collected by aclmdlSetConfigOpt (values copied at set time).
struct aclmdlConfigHandle {
  bool has_load_type = false;
  size_t load_type = 0;
  bool has_path = false;
  std::string path;
  const void* mem = nullptr;
  bool has_mem_size = false;
  size_t mem_size = 0;
  void* weight = nullptr;
  size_t weight_size = 0;
  void* work = nullptr;
  size_t work_size = 0;
  int32_t priority = 0;  // accepted; one priority for every model here
};

namespace {

std::mutex g_config_mutex;  // guards the live set and the handles' fields
std::unordered_set<const aclmdlConfigHandle*>& live_configs() {
  static auto* set = new std::unordered_set<const aclmdlConfigHandle*>();
  return *set;
}

Status unknown_config(const aclmdlConfigHandle* h) {
  return Errorf(code::kInvalidParam, "config handle %p is unknown or already destroyed; create one with "
                                     "aclmdlCreateConfigHandle",
                static_cast<const void*>(h));
}

// What one load call has: the model bytes and the caller's memory.
struct LoadRequest {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keep;  // owns `data` for file loads
  std::string base_dir;              // "" for loads from memory
  bool with_mem = false;
  void* work = nullptr;
  size_t work_size = 0;
  void* weight = nullptr;
  size_t weight_size = 0;
  bool file_mapped = false;  // data is our private read-only mapping of the file (LoadOptions::file_mapped)
};

Status check_model_bytes(const void* model, size_t size) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(model, "model"));
  if (size == 0) return Errorf(code::kInvalidParam, "modelSize is 0; pass the number of bytes of the model");
  return Status::Ok();
}

// One user region of a *WithMem load: device memory of the model's device
// holding at least `needed` bytes.
Status check_user_region(void* ptr, size_t given, int device, const char* ptr_name) {
  if (!ptr) return Status::Ok();  // the library allocates this region
  auto a = runtime().memory().find(ptr);
  if (!a || a->kind != rt::MemKind::kDevice)
    return Errorf(code::kInvalidParam, "%s %p is not device memory (%s); allocate it with aclrtMalloc", ptr_name, ptr,
                  a ? "it is host memory from aclrtMallocHost" : "OpenACL did not allocate it");
  if (a->device != device)
    return Errorf(code::kInvalidParam, "%s %p is memory of device %d but the model loads on device %d", ptr_name,
                  ptr, a->device, device);
  return runtime().check_range_in_one_allocation(ptr, given, ptr_name);
}

Status load(const LoadRequest& req, uint32_t* modelId) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(modelId, "modelId"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  std::shared_ptr<rt::Context> ctx;
  OPENACL_RETURN_IF_ERROR(runtime().current_context(&ctx));

  model::LoadOptions options;
  options.base_dir = req.base_dir;
  options.file_mapped = req.file_mapped;
  options.allocator = capi::device_allocator(ctx);
  if (req.with_mem && (req.work || req.weight)) {
    // Where the regions are is checked here; whether they are large enough,
    // by LoadedModel::load against the plan it makes (no second compile).
    OPENACL_RETURN_IF_ERROR(check_user_region(req.work, req.work_size, ctx->device(), "workPtr"));
    OPENACL_RETURN_IF_ERROR(check_user_region(req.weight, req.weight_size, ctx->device(), "weightPtr"));
    if (req.work && req.weight) {
      auto w0 = reinterpret_cast<uintptr_t>(req.work), g0 = reinterpret_cast<uintptr_t>(req.weight);
      if (w0 < g0 + req.weight_size && g0 < w0 + req.work_size)
        return Errorf(code::kInvalidParam,
                      "workPtr %p (%zu bytes) and weightPtr %p (%zu bytes) overlap; pass two separate regions",
                      req.work, req.work_size, req.weight, req.weight_size);
    }
    if (req.work) {
      options.work_ptr = req.work;
      options.work_size = req.work_size;
    }
    if (req.weight) {
      options.weight_ptr = req.weight;
      options.weight_size = req.weight_size;
    }
  }
  std::shared_ptr<model::LoadedModel> loaded;
  OPENACL_RETURN_IF_ERROR(model::LoadedModel::load(req.data, req.size, req.keep, options, &loaded));
  return capi::register_model(std::move(loaded), std::move(ctx), modelId);
}

Status load_file(const char* path, bool with_mem, void* work, size_t work_size, void* weight, size_t weight_size,
                 uint32_t* modelId) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(modelId, "modelId"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  capi::ModelFile file;
  OPENACL_RETURN_IF_ERROR(capi::map_model_file(path, "modelPath", &file));
  LoadRequest req{file.data, file.size, file.keep, file.dir, with_mem, work, work_size, weight, weight_size, true};
  Status st = load(req, modelId);
  if (!st.ok() && st.code() != code::kRtContextNull && st.message().find(path) == std::string::npos)
    return Status(st.code(), strformat("model file '%s': %s", path, st.message().c_str()));
  return st;
}

Status load_mem(const void* model, size_t size, bool with_mem, void* work, size_t work_size, void* weight,
                size_t weight_size, uint32_t* modelId) {
  OPENACL_RETURN_IF_ERROR(check_model_bytes(model, size));
  LoadRequest req{model, size, nullptr, "", with_mem, work, work_size, weight, weight_size};
  return load(req, modelId);
}

Status query(const void* data, size_t size, const std::string& base_dir, size_t* workSize, size_t* weightSize) {
  model::ModelInfo info;
  OPENACL_RETURN_IF_ERROR(model::describe(data, size, base_dir, &info));
  *workSize = info.work_size;
  *weightSize = info.weight_size;
  return Status::Ok();
}

// The size valueSize must have for each attribute, or 0 for unknown ones.
size_t value_size_of(aclmdlConfigAttr attr) {
  switch (attr) {
    case ACL_MDL_PRIORITY_INT32:
      return sizeof(int32_t);
    case ACL_MDL_PATH_PTR:
    case ACL_MDL_MEM_ADDR_PTR:
    case ACL_MDL_WEIGHT_ADDR_PTR:
    case ACL_MDL_WORKSPACE_ADDR_PTR:
    case ACL_MDL_INPUTQ_ADDR_PTR:
    case ACL_MDL_OUTPUTQ_ADDR_PTR:
    case ACL_MDL_WEIGHT_PATH_PTR:
      return sizeof(void*);
    case ACL_MDL_LOAD_TYPE_SIZET:
    case ACL_MDL_MEM_SIZET:
    case ACL_MDL_WEIGHT_SIZET:
    case ACL_MDL_WORKSPACE_SIZET:
    case ACL_MDL_INPUTQ_NUM_SIZET:
    case ACL_MDL_OUTPUTQ_NUM_SIZET:
    case ACL_MDL_WORKSPACE_MEM_OPTIMIZE:
      return sizeof(size_t);
  }
  return 0;
}

const char* value_type_of(aclmdlConfigAttr attr) {
  if (attr == ACL_MDL_PRIORITY_INT32) return "an int32_t";
  if (value_size_of(attr) == sizeof(size_t) && (attr == ACL_MDL_LOAD_TYPE_SIZET || attr == ACL_MDL_MEM_SIZET ||
                                                attr == ACL_MDL_WEIGHT_SIZET || attr == ACL_MDL_WORKSPACE_SIZET ||
                                                attr == ACL_MDL_INPUTQ_NUM_SIZET || attr == ACL_MDL_OUTPUTQ_NUM_SIZET ||
                                                attr == ACL_MDL_WORKSPACE_MEM_OPTIMIZE))
    return "a size_t";
  return "a pointer (pass the address of the pointer variable)";
}

}  // namespace

extern "C" {

aclError aclmdlLoadFromFile(const char* modelPath, uint32_t* modelId) {
  return guarded(__func__, [&] { return load_file(modelPath, false, nullptr, 0, nullptr, 0, modelId); });
}

aclError aclmdlLoadFromMem(const void* model, size_t modelSize, uint32_t* modelId) {
  return guarded(__func__, [&] { return load_mem(model, modelSize, false, nullptr, 0, nullptr, 0, modelId); });
}

aclError aclmdlLoadFromFileWithMem(const char* modelPath, uint32_t* modelId, void* workPtr, size_t workSize,
                                   void* weightPtr, size_t weightSize) {
  return guarded(__func__,
                 [&] { return load_file(modelPath, true, workPtr, workSize, weightPtr, weightSize, modelId); });
}

aclError aclmdlLoadFromMemWithMem(const void* model, size_t modelSize, uint32_t* modelId, void* workPtr,
                                  size_t workSize, void* weightPtr, size_t weightSize) {
  return guarded(__func__,
                 [&] { return load_mem(model, modelSize, true, workPtr, workSize, weightPtr, weightSize, modelId); });
}

aclError aclmdlUnload(uint32_t modelId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<capi::ModelEntry> entry;
    OPENACL_RETURN_IF_ERROR(capi::remove_model(modelId, &entry));
    entry->unload();
    return Status::Ok();
  });
}

aclError aclmdlQuerySize(const char* fileName, size_t* workSize, size_t* weightSize) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(workSize, "workSize"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(weightSize, "weightSize"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    capi::ModelFile file;
    OPENACL_RETURN_IF_ERROR(capi::map_model_file(fileName, "fileName", &file));
    Status st = query(file.data, file.size, file.dir, workSize, weightSize);
    if (!st.ok() && st.message().find(fileName) == std::string::npos)
      return Status(st.code(), strformat("model file '%s': %s", fileName, st.message().c_str()));
    return st;
  });
}

aclError aclmdlQuerySizeFromMem(const void* model, size_t modelSize, size_t* workSize, size_t* weightSize) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(check_model_bytes(model, modelSize));
    OPENACL_RETURN_IF_ERROR(capi::not_null(workSize, "workSize"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(weightSize, "weightSize"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return query(model, modelSize, "", workSize, weightSize);
  });
}

aclmdlConfigHandle* aclmdlCreateConfigHandle(void) {
  aclmdlConfigHandle* out = nullptr;
  guarded(__func__, [&] {
    auto* h = new aclmdlConfigHandle();
    std::lock_guard<std::mutex> lock(g_config_mutex);
    live_configs().insert(h);
    out = h;
    return Status::Ok();
  });
  return out;
}

aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle* handle) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    {
      std::lock_guard<std::mutex> lock(g_config_mutex);
      if (!live_configs().erase(handle)) return unknown_config(handle);
    }
    delete handle;
    return Status::Ok();
  });
}

aclError aclmdlSetConfigOpt(aclmdlConfigHandle* handle, aclmdlConfigAttr attr, const void* attrValue,
                            size_t valueSize) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(attrValue, "attrValue"));
    const int a = static_cast<int>(attr);
    const size_t want = value_size_of(attr);
    if (want == 0)
      return Errorf(code::kInvalidParam, "attr %d is not an aclmdlConfigAttr this library knows (0..%d)", a,
                    static_cast<int>(ACL_MDL_WEIGHT_PATH_PTR));
    if (valueSize != want)
      return Errorf(code::kInvalidParam, "valueSize %zu is wrong for attr %d: it takes %s (%zu bytes)", valueSize, a,
                    value_type_of(attr), want);
    switch (attr) {
      case ACL_MDL_INPUTQ_NUM_SIZET:
      case ACL_MDL_INPUTQ_ADDR_PTR:
      case ACL_MDL_OUTPUTQ_NUM_SIZET:
      case ACL_MDL_OUTPUTQ_ADDR_PTR:
        return Errorf(code::kApiNotSupport, "attr %d: queue-fed models (aclmdlLoadFromFileWithQ) are not supported "
                                            "by OpenACL; load from a file or memory and call aclmdlExecute",
                      a);
      case ACL_MDL_WEIGHT_PATH_PTR:
        return Errorf(code::kApiNotSupport, "ACL_MDL_WEIGHT_PATH_PTR: separate weight files are not supported; an "
                                            "OpenACL .om carries its weights (ONNX external data is read from the "
                                            "model file's folder)");
      default:
        break;
    }
    std::lock_guard<std::mutex> lock(g_config_mutex);
    if (!live_configs().count(handle)) return unknown_config(handle);
    switch (attr) {
      case ACL_MDL_PRIORITY_INT32:
        std::memcpy(&handle->priority, attrValue, sizeof(int32_t));
        break;
      case ACL_MDL_LOAD_TYPE_SIZET: {
        size_t v;
        std::memcpy(&v, attrValue, sizeof v);
        if (v == ACL_MDL_LOAD_FROM_FILE_WITH_Q || v == ACL_MDL_LOAD_FROM_MEM_WITH_Q)
          return Errorf(code::kApiNotSupport, "load type %zu: queue-fed models are not supported by OpenACL; use "
                                              "ACL_MDL_LOAD_FROM_FILE (1) .. ACL_MDL_LOAD_FROM_MEM_WITH_MEM (4)",
                        v);
        if (v < ACL_MDL_LOAD_FROM_FILE || v > ACL_MDL_LOAD_FROM_MEM_WITH_MEM)
          return Errorf(code::kInvalidParam, "load type %zu is not one of ACL_MDL_LOAD_FROM_FILE (1) .. "
                                             "ACL_MDL_LOAD_FROM_MEM_WITH_MEM (4)",
                        v);
        handle->load_type = v;
        handle->has_load_type = true;
        break;
      }
      case ACL_MDL_PATH_PTR: {
        const char* p;
        std::memcpy(&p, attrValue, sizeof p);
        if (!p)
          return Errorf(code::kInvalidParam, "ACL_MDL_PATH_PTR: the path pointer is NULL; pass the address of a "
                                             "char* holding the model path");
        handle->path = p;  // copied now: the caller's string may go away before the load
        handle->has_path = true;
        break;
      }
      case ACL_MDL_MEM_ADDR_PTR:
        std::memcpy(&handle->mem, attrValue, sizeof(void*));
        break;
      case ACL_MDL_MEM_SIZET:
        std::memcpy(&handle->mem_size, attrValue, sizeof(size_t));
        handle->has_mem_size = true;
        break;
      case ACL_MDL_WEIGHT_ADDR_PTR:
        std::memcpy(&handle->weight, attrValue, sizeof(void*));
        break;
      case ACL_MDL_WEIGHT_SIZET:
        std::memcpy(&handle->weight_size, attrValue, sizeof(size_t));
        break;
      case ACL_MDL_WORKSPACE_ADDR_PTR:
        std::memcpy(&handle->work, attrValue, sizeof(void*));
        break;
      case ACL_MDL_WORKSPACE_SIZET:
        std::memcpy(&handle->work_size, attrValue, sizeof(size_t));
        break;
      case ACL_MDL_WORKSPACE_MEM_OPTIMIZE:
        break;  // accepted: inputs/outputs never live in the work arena here
      default:
        break;
    }
    return Status::Ok();
  });
}

aclError aclmdlLoadWithConfig(const aclmdlConfigHandle* handle, uint32_t* modelId) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelId, "modelId"));
    aclmdlConfigHandle h;
    {
      std::lock_guard<std::mutex> lock(g_config_mutex);
      if (!live_configs().count(handle)) return unknown_config(handle);
      h = *handle;
    }
    if (!h.has_load_type)
      return Errorf(code::kInvalidParam, "ACL_MDL_LOAD_TYPE_SIZET is not set; set it to ACL_MDL_LOAD_FROM_FILE (1) .. "
                                         "ACL_MDL_LOAD_FROM_MEM_WITH_MEM (4)");
    const bool from_file = h.load_type == ACL_MDL_LOAD_FROM_FILE || h.load_type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM;
    const bool with_mem =
        h.load_type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM || h.load_type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM;
    if (from_file) {
      if (!h.has_path)
        return Errorf(code::kInvalidParam, "load type %zu reads a file but ACL_MDL_PATH_PTR is not set", h.load_type);
      return load_file(h.path.c_str(), with_mem, h.work, h.work_size, h.weight, h.weight_size, modelId);
    }
    if (!h.mem || !h.has_mem_size)
      return Errorf(code::kInvalidParam,
                    "load type %zu loads from memory but ACL_MDL_MEM_ADDR_PTR and ACL_MDL_MEM_SIZET are not both set",
                    h.load_type);
    return load_mem(h.mem, h.mem_size, with_mem, h.work, h.work_size, h.weight, h.weight_size, modelId);
  });
}

}  // extern "C"
