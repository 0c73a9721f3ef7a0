// acl.mdl: model loading, descriptions, datasets, gears and execution
// (pyacl-api.md §3) over the aclmdl* C functions of acl/acl_mdl.h.
//
// Conventions (§0.2): handles and addresses are ints (`k`), model ids `I`,
// sizes and indices `k` (so a "reserved, pass -1" index wraps to SIZE_MAX);
// outputs come back as `(out..., ret)`; argument errors raise TypeError
// "acl.mdl.<name> args parse failed". Structured outputs are dicts with the C
// field names ("name", "dimCount", "dims", ...); a failed call gives `({}, ret)`.
//
// The GIL is released around every call that can take long or wait: loads and
// size queries (file reads and graph optimisation), unload (waits for the
// model's executions in flight) and both executes. Waiting with the GIL held
// could deadlock against a host callback queued before the work waited for.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "py_methods.h"

namespace openacl::python {
namespace {

// Above this many gears get_input_dynamic_dims answers (None, 100000) without
// calling the library, as pyACL does: the dims array is allocated here.
constexpr unsigned long kMaxDynamicGears = 4096;

aclmdlDesc* as_desc(unsigned long value) { return static_cast<aclmdlDesc*>(to_ptr(value)); }
aclmdlDataset* as_dataset(unsigned long value) { return static_cast<aclmdlDataset*>(to_ptr(value)); }
aclmdlConfigHandle* as_config(unsigned long value) { return static_cast<aclmdlConfigHandle*>(to_ptr(value)); }

// `(model_id, ret)`.
PyObject* id_result(uint32_t model_id, aclError ret) { return Py_BuildValue("(Ii)", model_id, ret); }

// A C string in a fixed array that the library may have filled to the brim:
// never read past the array.
PyObject* fixed_str(const char* text, size_t capacity) {
  return PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(strnlen(text, capacity)), "replace");
}

// Sets d[key] = value and drops the reference to value; false (exception set)
// if value is NULL or the store fails.
bool put(PyObject* dict, const char* key, PyObject* value) {
  if (value == nullptr) return false;
  const int rc = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return rc == 0;
}

// [make(0), ..., make(count - 1)]; NULL (exception set) if any item is NULL.
template <class Make>
PyObject* build_list(size_t count, Make&& make) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(count));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < count; ++i) {
    PyObject* item = make(i);
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}

// {"name": str, "dimCount": int, "dims": [int, ...]}. dimCount is clamped to
// the array so that a bad count from the library cannot read out of bounds.
PyObject* io_dims_dict(const aclmdlIODims& dims) {
  const size_t count = dims.dimCount < ACL_MAX_DIM_CNT ? dims.dimCount : ACL_MAX_DIM_CNT;
  PyObject* list = build_list(count, [&](size_t i) { return PyLong_FromLongLong(dims.dims[i]); });
  if (list == nullptr) return nullptr;
  PyObject* dict = PyDict_New();
  if (dict == nullptr) {
    Py_DECREF(list);
    return nullptr;
  }
  if (!put(dict, "name", fixed_str(dims.name, ACL_MAX_TENSOR_NAME_LEN)) ||
      !put(dict, "dimCount", PyLong_FromSize_t(count)) || !put(dict, "dims", list)) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict;
}

// `(dict, ret)` with `{}` in place of the dict when ret is not success.
// Steals `dict` (may be NULL only on success, meaning building it failed).
PyObject* dict_result(PyObject* dict, aclError ret) {
  if (ret != ACL_SUCCESS) {
    Py_XDECREF(dict);
    dict = PyDict_New();
  }
  if (dict == nullptr) return nullptr;
  PyObject* result = Py_BuildValue("(Oi)", dict, ret);
  Py_DECREF(dict);
  return result;
}

// ---- config handles: strings kept alive for the C side ----
//
// aclmdlSetConfigOpt stores a path attribute by pointer. The Python str the
// caller passed may die right after the call, so a copy owned here is what the
// handle points to, until the attribute is set again or the handle destroyed.
// shared_ptr: load_with_config holds its own references while it runs without
// the GIL, so a concurrent set_config_opt cannot free a path being read. The
// map itself is only touched with the GIL held.
using KeptStrings = std::map<int, std::shared_ptr<const std::string>>;
std::unordered_map<const aclmdlConfigHandle*, KeptStrings>& kept_strings() {
  static auto* map = new std::unordered_map<const aclmdlConfigHandle*, KeptStrings>();  // never destroyed: used at exit
  return *map;
}

bool is_path_attr(int attr) { return attr == ACL_MDL_PATH_PTR || attr == ACL_MDL_WEIGHT_PATH_PTR; }
bool is_address_attr(int attr) {
  return attr == ACL_MDL_MEM_ADDR_PTR || attr == ACL_MDL_WEIGHT_ADDR_PTR || attr == ACL_MDL_WORKSPACE_ADDR_PTR ||
         attr == ACL_MDL_INPUTQ_ADDR_PTR || attr == ACL_MDL_OUTPUTQ_ADDR_PTR;
}

// ---- load / unload / query ----

PyObject* load_from_file(PyObject*, PyObject* args) {
  const char* path = nullptr;
  if (!parse_args(args, "acl.mdl.load_from_file", "s", &path)) return nullptr;
  uint32_t model_id = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlLoadFromFile(path, &model_id);
  }
  return id_result(model_id, ret);
}

PyObject* load_from_mem(PyObject*, PyObject* args) {
  unsigned long model = 0, size = 0;
  if (!parse_args(args, "acl.mdl.load_from_mem", "kk", &model, &size)) return nullptr;
  uint32_t model_id = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlLoadFromMem(to_ptr(model), size, &model_id);
  }
  return id_result(model_id, ret);
}

PyObject* load_from_file_with_mem(PyObject*, PyObject* args) {
  const char* path = nullptr;
  unsigned long work = 0, work_size = 0, weight = 0, weight_size = 0;
  if (!parse_args(args, "acl.mdl.load_from_file_with_mem", "skkkk", &path, &work, &work_size, &weight,
                  &weight_size)) {
    return nullptr;
  }
  uint32_t model_id = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlLoadFromFileWithMem(path, &model_id, to_ptr(work), work_size, to_ptr(weight), weight_size);
  }
  return id_result(model_id, ret);
}

PyObject* load_from_mem_with_mem(PyObject*, PyObject* args) {
  unsigned long model = 0, size = 0, work = 0, work_size = 0, weight = 0, weight_size = 0;
  if (!parse_args(args, "acl.mdl.load_from_mem_with_mem", "kkkkkk", &model, &size, &work, &work_size, &weight,
                  &weight_size)) {
    return nullptr;
  }
  uint32_t model_id = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlLoadFromMemWithMem(to_ptr(model), size, &model_id, to_ptr(work), work_size, to_ptr(weight),
                                   weight_size);
  }
  return id_result(model_id, ret);
}

PyObject* unload(PyObject*, PyObject* args) {
  unsigned int model_id = 0;
  if (!parse_args(args, "acl.mdl.unload", "I", &model_id)) return nullptr;
  return code_result_nogil([&] { return aclmdlUnload(model_id); });
}

PyObject* sizes_result(size_t work, size_t weight, aclError ret) {
  return Py_BuildValue("(kki)", static_cast<unsigned long>(work), static_cast<unsigned long>(weight), ret);
}

PyObject* query_size(PyObject*, PyObject* args) {
  const char* path = nullptr;
  if (!parse_args(args, "acl.mdl.query_size", "s", &path)) return nullptr;
  size_t work = 0, weight = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlQuerySize(path, &work, &weight);
  }
  return sizes_result(work, weight, ret);
}

PyObject* query_size_from_mem(PyObject*, PyObject* args) {
  unsigned long model = 0, size = 0;
  if (!parse_args(args, "acl.mdl.query_size_from_mem", "kk", &model, &size)) return nullptr;
  size_t work = 0, weight = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlQuerySizeFromMem(to_ptr(model), size, &work, &weight);
  }
  return sizes_result(work, weight, ret);
}

PyObject* create_config_handle(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.mdl.create_config_handle")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclmdlCreateConfigHandle()));
}

PyObject* destroy_config_handle(PyObject*, PyObject* args) {
  unsigned long handle = 0;
  if (!parse_args(args, "acl.mdl.destroy_config_handle", "k", &handle)) return nullptr;
  const aclError ret = aclmdlDestroyConfigHandle(as_config(handle));
  // Only once the handle is gone: a failed destroy leaves it (and what it
  // points to) in use.
  if (ret == ACL_SUCCESS) kept_strings().erase(as_config(handle));
  return code_result(ret);
}

// value by attribute (§3.2): PRIORITY int32; the path attributes a str (kept
// alive here) or an int address; the address attributes an int address;
// everything else, unknown attributes included, uint64. The library checks
// attr and the value itself.
PyObject* set_config_opt(PyObject*, PyObject* args) {
  static const char* const kName = "acl.mdl.set_config_opt";
  unsigned long handle = 0;
  int attr = 0;
  PyObject* value = nullptr;
  if (!parse_args(args, kName, "kiO", &handle, &attr, &value)) return nullptr;
  aclmdlConfigHandle* config = as_config(handle);
  const auto bad_value = [&]() -> PyObject* {
    PyErr_Format(PyExc_TypeError, "%s args parse failed", kName);
    return nullptr;
  };

  if (is_path_attr(attr) && PyUnicode_Check(value)) {
    Py_ssize_t length = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(value, &length);
    if (utf8 == nullptr) return bad_value();
    if (std::strlen(utf8) != static_cast<size_t>(length)) return bad_value();  // embedded NUL
    auto kept = std::make_shared<const std::string>(utf8, static_cast<size_t>(length));
    const char* text = kept->c_str();
    const aclError ret = aclmdlSetConfigOpt(config, static_cast<aclmdlConfigAttr>(attr), &text, sizeof(text));
    // On failure the handle still points at the previous copy, if any.
    if (ret == ACL_SUCCESS) kept_strings()[config][attr] = std::move(kept);
    return code_result(ret);
  }
  if (!PyLong_Check(value)) return bad_value();

  aclError ret;
  if (attr == ACL_MDL_PRIORITY_INT32) {
    int overflow = 0;
    const long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0 || number < INT32_MIN || number > INT32_MAX) return bad_value();
    const int32_t priority = static_cast<int32_t>(number);
    ret = aclmdlSetConfigOpt(config, static_cast<aclmdlConfigAttr>(attr), &priority, sizeof(priority));
  } else {
    // `k` semantics: negative numbers wrap modulo 2^64 (so -1 is SIZE_MAX).
    const unsigned long long number = PyLong_AsUnsignedLongLongMask(value);
    if (number == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return bad_value();
    if (is_path_attr(attr) || is_address_attr(attr)) {
      const void* address = to_ptr(static_cast<unsigned long>(number));
      ret = aclmdlSetConfigOpt(config, static_cast<aclmdlConfigAttr>(attr), &address, sizeof(address));
    } else {
      const uint64_t plain = number;
      ret = aclmdlSetConfigOpt(config, static_cast<aclmdlConfigAttr>(attr), &plain, sizeof(plain));
    }
  }
  // An address replaces a path the handle may have pointed to: the old copy
  // is no longer referenced by the library.
  if (ret == ACL_SUCCESS && is_path_attr(attr)) {
    auto it = kept_strings().find(config);
    if (it != kept_strings().end()) it->second.erase(attr);
  }
  return code_result(ret);
}

PyObject* load_with_config(PyObject*, PyObject* args) {
  unsigned long handle = 0;
  if (!parse_args(args, "acl.mdl.load_with_config", "k", &handle)) return nullptr;
  KeptStrings in_use;  // references for the duration of the load (see kept_strings)
  if (auto it = kept_strings().find(as_config(handle)); it != kept_strings().end()) in_use = it->second;
  uint32_t model_id = 0;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclmdlLoadWithConfig(as_config(handle), &model_id);
  }
  return id_result(model_id, ret);
}

// ---- description ----

PyObject* create_desc(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.mdl.create_desc")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclmdlCreateDesc()));
}

PyObject* destroy_desc(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.mdl.destroy_desc", "k", &desc)) return nullptr;
  return code_result(aclmdlDestroyDesc(as_desc(desc)));
}

PyObject* get_desc(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  unsigned int model_id = 0;
  if (!parse_args(args, "acl.mdl.get_desc", "kI", &desc, &model_id)) return nullptr;
  return code_result(aclmdlGetDesc(as_desc(desc), model_id));
}

PyObject* get_desc_from_file(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  const char* path = nullptr;
  if (!parse_args(args, "acl.mdl.get_desc_from_file", "ks", &desc, &path)) return nullptr;
  return code_result_nogil([&] { return aclmdlGetDescFromFile(as_desc(desc), path); });
}

PyObject* get_desc_from_mem(PyObject*, PyObject* args) {
  unsigned long desc = 0, model = 0, size = 0;
  if (!parse_args(args, "acl.mdl.get_desc_from_mem", "kkk", &desc, &model, &size)) return nullptr;
  return code_result_nogil([&] { return aclmdlGetDescFromMem(as_desc(desc), to_ptr(model), size); });
}

PyObject* get_num_inputs(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.mdl.get_num_inputs", "k", &desc)) return nullptr;
  return PyLong_FromSize_t(aclmdlGetNumInputs(as_desc(desc)));
}

PyObject* get_num_outputs(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.mdl.get_num_outputs", "k", &desc)) return nullptr;
  return PyLong_FromSize_t(aclmdlGetNumOutputs(as_desc(desc)));
}

using SizeByIndexFn = size_t (*)(aclmdlDesc*, size_t);

PyObject* size_by_index(SizeByIndexFn fn, const char* name, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, name, "kk", &desc, &index)) return nullptr;
  return PyLong_FromSize_t(fn(as_desc(desc), index));
}

PyObject* get_input_size_by_index(PyObject*, PyObject* args) {
  return size_by_index(aclmdlGetInputSizeByIndex, "acl.mdl.get_input_size_by_index", args);
}

PyObject* get_output_size_by_index(PyObject*, PyObject* args) {
  return size_by_index(aclmdlGetOutputSizeByIndex, "acl.mdl.get_output_size_by_index", args);
}

using DimsFn = aclError (*)(const aclmdlDesc*, size_t, aclmdlIODims*);

PyObject* dims_by_index(DimsFn fn, const char* name, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, name, "kk", &desc, &index)) return nullptr;
  aclmdlIODims dims{};
  const aclError ret = fn(as_desc(desc), index, &dims);
  return dict_result(ret == ACL_SUCCESS ? io_dims_dict(dims) : nullptr, ret);
}

PyObject* get_input_dims(PyObject*, PyObject* args) {
  return dims_by_index(aclmdlGetInputDims, "acl.mdl.get_input_dims", args);
}

PyObject* get_input_dims_v2(PyObject*, PyObject* args) {
  return dims_by_index(aclmdlGetInputDimsV2, "acl.mdl.get_input_dims_v2", args);
}

PyObject* get_output_dims(PyObject*, PyObject* args) {
  return dims_by_index(aclmdlGetOutputDims, "acl.mdl.get_output_dims", args);
}

PyObject* get_cur_output_dims(PyObject*, PyObject* args) {
  return dims_by_index(aclmdlGetCurOutputDims, "acl.mdl.get_cur_output_dims", args);
}

// [[a, b], ...] from `count` pairs.
template <class T>
PyObject* pair_list(const T (*pairs)[2], size_t count) {
  return build_list(count, [&](size_t i) {
    if constexpr (std::is_signed_v<T>)
      return Py_BuildValue("[LL]", static_cast<long long>(pairs[i][0]), static_cast<long long>(pairs[i][1]));
    else
      return Py_BuildValue("[KK]", static_cast<unsigned long long>(pairs[i][0]),
                           static_cast<unsigned long long>(pairs[i][1]));
  });
}

PyObject* get_input_dims_range(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.mdl.get_input_dims_range", "kk", &desc, &index)) return nullptr;
  aclmdlIODimsRange range{};
  const aclError ret = aclmdlGetInputDimsRange(as_desc(desc), index, &range);
  if (ret != ACL_SUCCESS) return dict_result(nullptr, ret);
  const size_t count = range.rangeCount < ACL_MAX_DIM_CNT ? range.rangeCount : ACL_MAX_DIM_CNT;
  PyObject* dict = PyDict_New();
  if (dict == nullptr) return nullptr;
  if (!put(dict, "rangeCount", PyLong_FromSize_t(count)) || !put(dict, "range", pair_list(range.range, count))) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict_result(dict, ret);
}

using NameByIndexFn = const char* (*)(const aclmdlDesc*, size_t);

PyObject* name_by_index(NameByIndexFn fn, const char* name, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, name, "kk", &desc, &index)) return nullptr;
  return str_or_none(fn(as_desc(desc), index));
}

PyObject* get_input_name_by_index(PyObject*, PyObject* args) {
  return name_by_index(aclmdlGetInputNameByIndex, "acl.mdl.get_input_name_by_index", args);
}

PyObject* get_output_name_by_index(PyObject*, PyObject* args) {
  return name_by_index(aclmdlGetOutputNameByIndex, "acl.mdl.get_output_name_by_index", args);
}

PyObject* get_tensor_real_name(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  const char* name = nullptr;
  if (!parse_args(args, "acl.mdl.get_tensor_real_name", "ks", &desc, &name)) return nullptr;
  return str_or_none(aclmdlGetTensorRealName(as_desc(desc), name));
}

using IndexByNameFn = aclError (*)(const aclmdlDesc*, const char*, size_t*);

PyObject* index_by_name(IndexByNameFn fn, const char* name, PyObject* args) {
  unsigned long desc = 0;
  const char* tensor = nullptr;
  if (!parse_args(args, name, "ks", &desc, &tensor)) return nullptr;
  size_t index = 0;
  const aclError ret = fn(as_desc(desc), tensor, &index);
  return Py_BuildValue("(ki)", static_cast<unsigned long>(index), ret);
}

PyObject* get_input_index_by_name(PyObject*, PyObject* args) {
  return index_by_name(aclmdlGetInputIndexByName, "acl.mdl.get_input_index_by_name", args);
}

PyObject* get_output_index_by_name(PyObject*, PyObject* args) {
  return index_by_name(aclmdlGetOutputIndexByName, "acl.mdl.get_output_index_by_name", args);
}

// Format and data type getters return the enum value bare.
template <class Enum>
PyObject* enum_by_index(Enum (*fn)(const aclmdlDesc*, size_t), const char* name, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, name, "kk", &desc, &index)) return nullptr;
  return PyLong_FromLong(static_cast<long>(fn(as_desc(desc), index)));
}

PyObject* get_input_format(PyObject*, PyObject* args) {
  return enum_by_index(aclmdlGetInputFormat, "acl.mdl.get_input_format", args);
}

PyObject* get_output_format(PyObject*, PyObject* args) {
  return enum_by_index(aclmdlGetOutputFormat, "acl.mdl.get_output_format", args);
}

PyObject* get_input_data_type(PyObject*, PyObject* args) {
  return enum_by_index(aclmdlGetInputDataType, "acl.mdl.get_input_data_type", args);
}

PyObject* get_output_data_type(PyObject*, PyObject* args) {
  return enum_by_index(aclmdlGetOutputDataType, "acl.mdl.get_output_data_type", args);
}

PyObject* get_dynamic_batch(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.mdl.get_dynamic_batch", "k", &desc)) return nullptr;
  aclmdlBatch batch{};
  const aclError ret = aclmdlGetDynamicBatch(as_desc(desc), &batch);
  if (ret != ACL_SUCCESS) return dict_result(nullptr, ret);
  const size_t count = batch.batchCount < ACL_MAX_BATCH_NUM ? batch.batchCount : ACL_MAX_BATCH_NUM;
  PyObject* list = build_list(count, [&](size_t i) { return PyLong_FromUnsignedLongLong(batch.batch[i]); });
  if (list == nullptr) return nullptr;
  PyObject* dict = PyDict_New();
  if (dict == nullptr) {
    Py_DECREF(list);
    return nullptr;
  }
  if (!put(dict, "batchCount", PyLong_FromSize_t(count)) || !put(dict, "batch", list)) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict_result(dict, ret);
}

PyObject* get_dynamic_hw(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.mdl.get_dynamic_hw", "kk", &desc, &index)) return nullptr;
  aclmdlHW hw{};
  const aclError ret = aclmdlGetDynamicHW(as_desc(desc), index, &hw);
  if (ret != ACL_SUCCESS) return dict_result(nullptr, ret);
  const size_t count = hw.hwCount < ACL_MAX_HW_NUM ? hw.hwCount : ACL_MAX_HW_NUM;
  PyObject* dict = PyDict_New();
  if (dict == nullptr) return nullptr;
  if (!put(dict, "hwCount", PyLong_FromSize_t(count)) || !put(dict, "hw", pair_list(hw.hw, count))) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict_result(dict, ret);
}

PyObject* get_input_dynamic_gear_count(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.mdl.get_input_dynamic_gear_count", "kk", &desc, &index)) return nullptr;
  size_t count = 0;
  const aclError ret = aclmdlGetInputDynamicGearCount(as_desc(desc), index, &count);
  return Py_BuildValue("(ki)", static_cast<unsigned long>(count), ret);
}

// -> ([dims_dict per gear], ret); ([], ret) on failure.
PyObject* get_input_dynamic_dims(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0, gear_count = 0;
  if (!parse_args(args, "acl.mdl.get_input_dynamic_dims", "kkk", &desc, &index, &gear_count)) return nullptr;
  if (gear_count > kMaxDynamicGears) return Py_BuildValue("(Oi)", Py_None, ACL_ERROR_INVALID_PARAM);
  std::vector<aclmdlIODims> gears(gear_count);
  const aclError ret = aclmdlGetInputDynamicDims(as_desc(desc), index, gears.data(), gear_count);
  const size_t built = ret == ACL_SUCCESS ? gear_count : 0;
  PyObject* list = build_list(built, [&](size_t i) { return io_dims_dict(gears[i]); });
  if (list == nullptr) return nullptr;
  PyObject* result = Py_BuildValue("(Oi)", list, ret);
  Py_DECREF(list);
  return result;
}

// ---- datasets ----

PyObject* create_dataset(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.mdl.create_dataset")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclmdlCreateDataset()));
}

PyObject* destroy_dataset(PyObject*, PyObject* args) {
  unsigned long dataset = 0;
  if (!parse_args(args, "acl.mdl.destroy_dataset", "k", &dataset)) return nullptr;
  return code_result(aclmdlDestroyDataset(as_dataset(dataset)));
}

// -> (dataset, ret): pyACL echoes the dataset back.
PyObject* add_dataset_buffer(PyObject*, PyObject* args) {
  unsigned long dataset = 0, buffer = 0;
  if (!parse_args(args, "acl.mdl.add_dataset_buffer", "kk", &dataset, &buffer)) return nullptr;
  const aclError ret = aclmdlAddDatasetBuffer(as_dataset(dataset), static_cast<aclDataBuffer*>(to_ptr(buffer)));
  return Py_BuildValue("(ki)", dataset, ret);
}

PyObject* get_dataset_num_buffers(PyObject*, PyObject* args) {
  unsigned long dataset = 0;
  if (!parse_args(args, "acl.mdl.get_dataset_num_buffers", "k", &dataset)) return nullptr;
  return PyLong_FromSize_t(aclmdlGetDatasetNumBuffers(as_dataset(dataset)));
}

PyObject* get_dataset_buffer(PyObject*, PyObject* args) {
  unsigned long dataset = 0, index = 0;
  if (!parse_args(args, "acl.mdl.get_dataset_buffer", "kk", &dataset, &index)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclmdlGetDatasetBuffer(as_dataset(dataset), index)));
}

// Attaches a copy of tensor_desc to index i; returns (dataset, ret) like
// add_dataset_buffer (pyACL's 2-tuple).
PyObject* set_dataset_tensor_desc(PyObject*, PyObject* args) {
  unsigned long dataset = 0, desc = 0, index = 0;
  if (!parse_args(args, "acl.mdl.set_dataset_tensor_desc", "kkk", &dataset, &desc, &index)) return nullptr;
  const aclError ret =
      aclmdlSetDatasetTensorDesc(as_dataset(dataset), static_cast<aclTensorDesc*>(to_ptr(desc)), index);
  return Py_BuildValue("(ki)", dataset, ret);
}

// The dataset's desc at i (0 if none); owned by the dataset.
PyObject* get_dataset_tensor_desc(PyObject*, PyObject* args) {
  unsigned long dataset = 0, index = 0;
  if (!parse_args(args, "acl.mdl.get_dataset_tensor_desc", "kk", &dataset, &index)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclmdlGetDatasetTensorDesc(as_dataset(dataset), index)));
}

// ---- gears ----

PyObject* set_dynamic_batch_size(PyObject*, PyObject* args) {
  unsigned int model_id = 0;
  unsigned long dataset = 0, index = 0, batch = 0;
  if (!parse_args(args, "acl.mdl.set_dynamic_batch_size", "Ikkk", &model_id, &dataset, &index, &batch)) {
    return nullptr;
  }
  return code_result(aclmdlSetDynamicBatchSize(model_id, as_dataset(dataset), index, batch));
}

PyObject* set_dynamic_hw_size(PyObject*, PyObject* args) {
  unsigned int model_id = 0;
  unsigned long dataset = 0, index = 0, height = 0, width = 0;
  if (!parse_args(args, "acl.mdl.set_dynamic_hw_size", "Ikkkk", &model_id, &dataset, &index, &height, &width)) {
    return nullptr;
  }
  return code_result(aclmdlSetDynamicHWSize(model_id, as_dataset(dataset), index, height, width));
}

// dims_dict: {"dimCount": n, "dims": [...], "name": optional str}. Without
// "dimCount" the length of "dims" is used. Bad contents raise ValueError (a
// dict that is not one raises TypeError "argument 4 is not dict").
PyObject* set_input_dynamic_dims(PyObject*, PyObject* args) {
  static const char* const kName = "acl.mdl.set_input_dynamic_dims";
  unsigned int model_id = 0;
  unsigned long dataset = 0, index = 0;
  PyObject* spec = nullptr;
  if (!parse_args(args, kName, "IkkO", &model_id, &dataset, &index, &spec)) return nullptr;
  if (!PyDict_Check(spec)) {
    PyErr_SetString(PyExc_TypeError, "argument 4 is not dict");
    return nullptr;
  }
  aclmdlIODims dims{};
  PyObject* name = PyDict_GetItemString(spec, "name");  // borrowed
  if (name != nullptr && name != Py_None) {
    Py_ssize_t length = 0;
    const char* utf8 = PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, &length) : nullptr;
    if (utf8 == nullptr || length >= ACL_MAX_TENSOR_NAME_LEN) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "%s: \"name\" must be a str of at most %d bytes", kName,
                   ACL_MAX_TENSOR_NAME_LEN - 1);
      return nullptr;
    }
    std::memcpy(dims.name, utf8, static_cast<size_t>(length));
  }
  PyObject* values = PyDict_GetItemString(spec, "dims");  // borrowed
  if (values == nullptr || !PyList_Check(values)) {
    PyErr_Format(PyExc_ValueError, "%s: \"dims\" must be a list of ints", kName);
    return nullptr;
  }
  const Py_ssize_t listed = PyList_GET_SIZE(values);
  Py_ssize_t count = listed;
  if (PyObject* given = PyDict_GetItemString(spec, "dimCount"); given != nullptr) {
    count = PyLong_Check(given) ? PyLong_AsSsize_t(given) : -1;
    if (count == -1 && PyErr_Occurred()) PyErr_Clear();
    if (count < 0 || count > listed) {
      PyErr_Format(PyExc_ValueError, "%s: \"dimCount\" must be an int between 0 and len(dims) = %zd", kName,
                   listed);
      return nullptr;
    }
  }
  if (count > ACL_MAX_DIM_CNT) {
    PyErr_Format(PyExc_ValueError, "%s: %zd dims, at most %d", kName, count, ACL_MAX_DIM_CNT);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    const long long value = PyLong_AsLongLong(PyList_GET_ITEM(values, i));
    if (value == -1 && PyErr_Occurred()) {
      PyErr_SetString(PyExc_ValueError, "PyLong_AsLong failed");
      return nullptr;
    }
    dims.dims[i] = value;
  }
  dims.dimCount = static_cast<size_t>(count);
  return code_result(aclmdlSetInputDynamicDims(model_id, as_dataset(dataset), index, &dims));
}

// ---- execution ----

PyObject* execute(PyObject*, PyObject* args) {
  unsigned int model_id = 0;
  unsigned long input = 0, output = 0;
  if (!parse_args(args, "acl.mdl.execute", "Ikk", &model_id, &input, &output)) return nullptr;
  return code_result_nogil([&] { return aclmdlExecute(model_id, as_dataset(input), as_dataset(output)); });
}

PyObject* execute_async(PyObject*, PyObject* args) {
  unsigned int model_id = 0;
  unsigned long input = 0, output = 0, stream = 0;
  if (!parse_args(args, "acl.mdl.execute_async", "Ikkk", &model_id, &input, &output, &stream)) return nullptr;
  // Queueing may wait for room on the stream, behind a callback needing the GIL.
  return code_result_nogil(
      [&] { return aclmdlExecuteAsync(model_id, as_dataset(input), as_dataset(output), to_ptr(stream)); });
}

}  // namespace

// ---- model dump (§3.8) ----

PyObject* init_dump(PyObject*, PyObject* args) {
  if (!parse_args(args, "acl.mdl.init_dump", "")) return nullptr;
  return code_result(aclmdlInitDump());
}

// `set_dump([json_path])`: without a path the C call gets NULL (100000).
PyObject* set_dump(PyObject*, PyObject* args) {
  const char* path = nullptr;
  if (!parse_args(args, "acl.mdl.set_dump", "|s", &path)) return nullptr;
  return code_result(aclmdlSetDump(path));
}

PyObject* finalize_dump(PyObject*, PyObject* args) {
  if (!parse_args(args, "acl.mdl.finalize_dump", "")) return nullptr;
  return code_result(aclmdlFinalizeDump());
}

PyMethodDef kMdlMethods[] = {
    {"load_from_file", load_from_file, METH_VARARGS, "load_from_file(path) -> (model_id, ret)"},
    {"load_from_mem", load_from_mem, METH_VARARGS, "load_from_mem(model_ptr, model_size) -> (model_id, ret)"},
    {"load_from_file_with_mem", load_from_file_with_mem, METH_VARARGS,
     "load_from_file_with_mem(path, work_ptr, work_size, weight_ptr, weight_size) -> (model_id, ret)"},
    {"load_from_mem_with_mem", load_from_mem_with_mem, METH_VARARGS,
     "load_from_mem_with_mem(model_ptr, model_size, work_ptr, work_size, weight_ptr, weight_size) -> (model_id, ret)"},
    {"unload", unload, METH_VARARGS, "unload(model_id) -> ret"},
    {"query_size", query_size, METH_VARARGS, "query_size(path) -> (work_size, weight_size, ret)"},
    {"query_size_from_mem", query_size_from_mem, METH_VARARGS,
     "query_size_from_mem(model_ptr, model_size) -> (work_size, weight_size, ret)"},
    {"create_config_handle", create_config_handle, METH_VARARGS, "create_config_handle() -> handle (0 on failure)"},
    {"destroy_config_handle", destroy_config_handle, METH_VARARGS, "destroy_config_handle(handle) -> ret"},
    {"set_config_opt", set_config_opt, METH_VARARGS,
     "set_config_opt(handle, attr, value) -> ret; value: str for path attributes, else int"},
    {"load_with_config", load_with_config, METH_VARARGS, "load_with_config(handle) -> (model_id, ret)"},
    {"create_desc", create_desc, METH_VARARGS, "create_desc() -> desc (0 on failure)"},
    {"destroy_desc", destroy_desc, METH_VARARGS, "destroy_desc(desc) -> ret"},
    {"get_desc", get_desc, METH_VARARGS, "get_desc(desc, model_id) -> ret"},
    {"get_desc_from_file", get_desc_from_file, METH_VARARGS, "get_desc_from_file(desc, path) -> ret"},
    {"get_desc_from_mem", get_desc_from_mem, METH_VARARGS, "get_desc_from_mem(desc, model_ptr, model_size) -> ret"},
    {"get_num_inputs", get_num_inputs, METH_VARARGS, "get_num_inputs(desc) -> int"},
    {"get_num_outputs", get_num_outputs, METH_VARARGS, "get_num_outputs(desc) -> int"},
    {"get_input_size_by_index", get_input_size_by_index, METH_VARARGS, "get_input_size_by_index(desc, i) -> bytes"},
    {"get_output_size_by_index", get_output_size_by_index, METH_VARARGS,
     "get_output_size_by_index(desc, i) -> bytes"},
    {"get_input_dims", get_input_dims, METH_VARARGS,
     "get_input_dims(desc, i) -> ({'name', 'dimCount', 'dims'}, ret)"},
    {"get_input_dims_v2", get_input_dims_v2, METH_VARARGS,
     "get_input_dims_v2(desc, i) -> ({'name', 'dimCount', 'dims'}, ret)"},
    {"get_output_dims", get_output_dims, METH_VARARGS,
     "get_output_dims(desc, i) -> ({'name', 'dimCount', 'dims'}, ret)"},
    {"get_cur_output_dims", get_cur_output_dims, METH_VARARGS,
     "get_cur_output_dims(desc, i) -> ({'name', 'dimCount', 'dims'}, ret)"},
    {"get_input_dims_range", get_input_dims_range, METH_VARARGS,
     "get_input_dims_range(desc, i) -> ({'rangeCount', 'range': [[lo, hi], ...]}, ret)"},
    {"get_input_name_by_index", get_input_name_by_index, METH_VARARGS,
     "get_input_name_by_index(desc, i) -> str or None"},
    {"get_output_name_by_index", get_output_name_by_index, METH_VARARGS,
     "get_output_name_by_index(desc, i) -> str or None"},
    {"get_tensor_real_name", get_tensor_real_name, METH_VARARGS, "get_tensor_real_name(desc, name) -> str or None"},
    {"get_input_index_by_name", get_input_index_by_name, METH_VARARGS,
     "get_input_index_by_name(desc, name) -> (index, ret)"},
    {"get_output_index_by_name", get_output_index_by_name, METH_VARARGS,
     "get_output_index_by_name(desc, name) -> (index, ret)"},
    {"get_input_format", get_input_format, METH_VARARGS, "get_input_format(desc, i) -> aclFormat"},
    {"get_output_format", get_output_format, METH_VARARGS, "get_output_format(desc, i) -> aclFormat"},
    {"get_input_data_type", get_input_data_type, METH_VARARGS, "get_input_data_type(desc, i) -> aclDataType"},
    {"get_output_data_type", get_output_data_type, METH_VARARGS, "get_output_data_type(desc, i) -> aclDataType"},
    {"get_dynamic_batch", get_dynamic_batch, METH_VARARGS, "get_dynamic_batch(desc) -> ({'batchCount', 'batch'}, ret)"},
    {"get_dynamic_hw", get_dynamic_hw, METH_VARARGS,
     "get_dynamic_hw(desc, index) -> ({'hwCount', 'hw': [[h, w], ...]}, ret); index reserved, pass -1"},
    {"get_input_dynamic_gear_count", get_input_dynamic_gear_count, METH_VARARGS,
     "get_input_dynamic_gear_count(desc, index) -> (count, ret); index reserved, pass -1"},
    {"get_input_dynamic_dims", get_input_dynamic_dims, METH_VARARGS,
     "get_input_dynamic_dims(desc, index, gear_count) -> ([{'name', 'dimCount', 'dims'}, ...], ret)"},
    {"create_dataset", create_dataset, METH_VARARGS, "create_dataset() -> dataset (0 on failure)"},
    {"destroy_dataset", destroy_dataset, METH_VARARGS, "destroy_dataset(dataset) -> ret; buffers are not destroyed"},
    {"add_dataset_buffer", add_dataset_buffer, METH_VARARGS, "add_dataset_buffer(dataset, buffer) -> (dataset, ret)"},
    {"get_dataset_num_buffers", get_dataset_num_buffers, METH_VARARGS, "get_dataset_num_buffers(dataset) -> int"},
    {"get_dataset_buffer", get_dataset_buffer, METH_VARARGS, "get_dataset_buffer(dataset, i) -> buffer (0 if none)"},
    {"set_dataset_tensor_desc", set_dataset_tensor_desc, METH_VARARGS,
     "set_dataset_tensor_desc(dataset, tensor_desc, i) -> (dataset, ret); the dataset keeps a copy"},
    {"get_dataset_tensor_desc", get_dataset_tensor_desc, METH_VARARGS,
     "get_dataset_tensor_desc(dataset, i) -> tensor_desc (0 if none; owned by the dataset)"},
    {"set_dynamic_batch_size", set_dynamic_batch_size, METH_VARARGS,
     "set_dynamic_batch_size(model_id, dataset, index, batch_size) -> ret"},
    {"set_dynamic_hw_size", set_dynamic_hw_size, METH_VARARGS,
     "set_dynamic_hw_size(model_id, dataset, index, height, width) -> ret"},
    {"set_input_dynamic_dims", set_input_dynamic_dims, METH_VARARGS,
     "set_input_dynamic_dims(model_id, dataset, index, {'dimCount', 'dims', 'name'}) -> ret"},
    {"execute", execute, METH_VARARGS, "execute(model_id, input_dataset, output_dataset) -> ret"},
    {"execute_async", execute_async, METH_VARARGS,
     "execute_async(model_id, input_dataset, output_dataset, stream) -> ret"},
    {"init_dump", init_dump, METH_VARARGS, "init_dump() -> ret"},
    {"set_dump", set_dump, METH_VARARGS, "set_dump(json_path) -> ret; the file holds a \"dump\" section"},
    {"finalize_dump", finalize_dump, METH_VARARGS, "finalize_dump() -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
