// Top-level acl.* tensor-descriptor functions (spec §4.3): create/destroy,
// getters, shape/format setters (origin and storage), ranges, name, const
// data, placement, address. Lists of dims are Python lists only (pyACL's
// check: a tuple is refused with TypeError "argument 2 is not list").
#include <climits>
#include <vector>

#include "py_methods.h"

namespace openacl::python {
namespace {

aclTensorDesc* as_desc(unsigned long value) { return static_cast<aclTensorDesc*>(to_ptr(value)); }

// Reads a list of ints into `out`. Not a list: TypeError `not_list`; an item
// that is not an int in int64 range: ValueError "PyLong_AsLong failed".
bool read_int_list(PyObject* list, const char* not_list, std::vector<int64_t>* out) {
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, not_list);
    return false;
  }
  const Py_ssize_t n = PyList_GET_SIZE(list);
  if (n > INT_MAX) {
    PyErr_SetString(PyExc_ValueError, "list is too long");
    return false;
  }
  out->clear();
  out->reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);  // borrowed
    const long long v = PyLong_Check(item) ? PyLong_AsLongLong(item) : -1;
    if (!PyLong_Check(item) || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "PyLong_AsLong failed");
      return false;
    }
    out->push_back(v);
  }
  return true;
}

// [[lo, hi], ...]: a list of 2-int lists.
bool read_pairs(PyObject* list, const char* not_list, const char* name, std::vector<int64_t>* flat) {
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, not_list);
    return false;
  }
  flat->clear();
  const Py_ssize_t n = PyList_GET_SIZE(list);
  for (Py_ssize_t i = 0; i < n; ++i) {
    std::vector<int64_t> pair;
    if (!read_int_list(PyList_GET_ITEM(list, i), not_list, &pair)) return false;
    if (pair.size() != 2) {
      PyErr_Format(PyExc_ValueError, "%s: item %zd has %zu value(s); each item is a list [min, max] of 2 ints", name,
                   i, pair.size());
      return false;
    }
    flat->insert(flat->end(), pair.begin(), pair.end());
  }
  return true;
}

PyObject* create_tensor_desc(PyObject*, PyObject* args) {
  int dtype = 0, format = 0;
  PyObject* dims_obj = nullptr;
  if (!parse_args(args, "acl.create_tensor_desc", "iOi", &dtype, &dims_obj, &format)) return nullptr;
  std::vector<int64_t> dims;
  if (!read_int_list(dims_obj, "argument 2 is not list", &dims)) return nullptr;
  aclTensorDesc* d = aclCreateTensorDesc(static_cast<aclDataType>(dtype), static_cast<int>(dims.size()),
                                         dims.empty() ? nullptr : dims.data(), static_cast<aclFormat>(format));
  return PyLong_FromUnsignedLong(from_ptr(d));
}

PyObject* destroy_tensor_desc(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.destroy_tensor_desc", "k", &desc)) return nullptr;
  aclDestroyTensorDesc(as_desc(desc));
  Py_RETURN_NONE;
}

PyObject* get_tensor_desc_type(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_type", "k", &desc)) return nullptr;
  return PyLong_FromLong(aclGetTensorDescType(as_desc(desc)));
}

PyObject* get_tensor_desc_format(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_format", "k", &desc)) return nullptr;
  return PyLong_FromLong(aclGetTensorDescFormat(as_desc(desc)));
}

PyObject* get_tensor_desc_size(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_size", "k", &desc)) return nullptr;
  return PyLong_FromSize_t(aclGetTensorDescSize(as_desc(desc)));
}

PyObject* get_tensor_desc_element_count(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_element_count", "k", &desc)) return nullptr;
  return PyLong_FromSize_t(aclGetTensorDescElementCount(as_desc(desc)));
}

PyObject* get_tensor_desc_num_dims(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_num_dims", "k", &desc)) return nullptr;
  return PyLong_FromSize_t(aclGetTensorDescNumDims(as_desc(desc)));
}

PyObject* get_tensor_desc_dim(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.get_tensor_desc_dim", "kk", &desc, &index)) return nullptr;
  return PyLong_FromLongLong(aclGetTensorDescDim(as_desc(desc), index));
}

PyObject* get_tensor_desc_dim_v2(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.get_tensor_desc_dim_v2", "kk", &desc, &index)) return nullptr;
  int64_t dim = 0;
  const aclError ret = aclGetTensorDescDimV2(as_desc(desc), index, &dim);
  return Py_BuildValue("(Li)", static_cast<long long>(ret == ACL_SUCCESS ? dim : 0), ret);
}

// (list of n ints: [min, max] then zeros, ret); (None, ret) on failure.
PyObject* get_tensor_desc_dim_range(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0, n = 0;
  if (!parse_args(args, "acl.get_tensor_desc_dim_range", "kkk", &desc, &index, &n)) return nullptr;
  if (n > 4096) return Py_BuildValue("(Oi)", Py_None, ACL_ERROR_INVALID_PARAM);
  std::vector<int64_t> range(n, 0);
  const aclError ret = aclGetTensorDescDimRange(as_desc(desc), index, n, n ? range.data() : nullptr);
  if (ret != ACL_SUCCESS) return Py_BuildValue("(Oi)", Py_None, ret);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (!list) return nullptr;
  for (size_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(range[i]);
    if (!v) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
  }
  return Py_BuildValue("(Ni)", list, ret);
}

PyObject* get_tensor_desc_name(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_name", "k", &desc)) return nullptr;
  return str_or_none(aclGetTensorDescName(as_desc(desc)));
}

PyObject* set_tensor_desc_name(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  const char* name = nullptr;
  if (!parse_args(args, "acl.set_tensor_desc_name", "kz", &desc, &name)) return nullptr;
  aclSetTensorDescName(as_desc(desc), name);
  Py_RETURN_NONE;
}

PyObject* trans_tensor_desc_format(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  int format = 0;
  if (!parse_args(args, "acl.trans_tensor_desc_format", "ki", &desc, &format)) return nullptr;
  aclTensorDesc* out = nullptr;
  const aclError ret = aclTransTensorDescFormat(as_desc(desc), static_cast<aclFormat>(format), &out);
  return ptr_result(ret == ACL_SUCCESS ? out : nullptr, ret);
}

template <aclError (*Set)(aclTensorDesc*, int, const int64_t*)>
PyObject* set_shape(PyObject* args, const char* name) {
  unsigned long desc = 0;
  PyObject* dims_obj = nullptr;
  if (!parse_args(args, name, "kO", &desc, &dims_obj)) return nullptr;
  std::vector<int64_t> dims;
  if (!read_int_list(dims_obj, "argument 2 is not list", &dims)) return nullptr;
  static const int64_t kNone = 0;  // a valid pointer for an empty shape (scalar)
  return code_result(Set(as_desc(desc), static_cast<int>(dims.size()), dims.empty() ? &kNone : dims.data()));
}

PyObject* set_tensor_shape(PyObject*, PyObject* args) {
  return set_shape<aclSetTensorShape>(args, "acl.set_tensor_shape");
}
PyObject* set_tensor_storage_shape(PyObject*, PyObject* args) {
  return set_shape<aclSetTensorStorageShape>(args, "acl.set_tensor_storage_shape");
}
PyObject* set_tensor_origin_shape(PyObject*, PyObject* args) {
  return set_shape<aclSetTensorOriginShape>(args, "acl.set_tensor_origin_shape");
}

template <aclError (*Set)(aclTensorDesc*, aclFormat)>
PyObject* set_format(PyObject* args, const char* name) {
  unsigned long desc = 0;
  int format = 0;
  if (!parse_args(args, name, "ki", &desc, &format)) return nullptr;
  return code_result(Set(as_desc(desc), static_cast<aclFormat>(format)));
}

PyObject* set_tensor_format(PyObject*, PyObject* args) {
  return set_format<aclSetTensorFormat>(args, "acl.set_tensor_format");
}
PyObject* set_tensor_storage_format(PyObject*, PyObject* args) {
  return set_format<aclSetTensorStorageFormat>(args, "acl.set_tensor_storage_format");
}
PyObject* set_tensor_origin_format(PyObject*, PyObject* args) {
  return set_format<aclSetTensorOriginFormat>(args, "acl.set_tensor_origin_format");
}

PyObject* set_tensor_shape_range(PyObject*, PyObject* args) {
  static const char* const kName = "acl.set_tensor_shape_range";
  unsigned long desc = 0;
  PyObject* ranges = nullptr;
  if (!parse_args(args, kName, "kO", &desc, &ranges)) return nullptr;
  std::vector<int64_t> flat;
  if (!read_pairs(ranges, "argument 2 is not list", kName, &flat)) return nullptr;
  return code_result(aclSetTensorShapeRange(as_desc(desc), flat.size() / 2,
                                            reinterpret_cast<int64_t(*)[ACL_TENSOR_SHAPE_RANGE_NUM]>(flat.data())));
}

PyObject* set_tensor_value_range(PyObject*, PyObject* args) {
  static const char* const kName = "acl.set_tensor_value_range";
  unsigned long desc = 0;
  PyObject* ranges = nullptr;
  if (!parse_args(args, kName, "kO", &desc, &ranges)) return nullptr;
  std::vector<int64_t> flat;
  if (!read_pairs(ranges, "int64_t argument is not list", kName, &flat)) return nullptr;
  return code_result(aclSetTensorValueRange(as_desc(desc), flat.size() / 2,
                                            reinterpret_cast<int64_t(*)[ACL_TENSOR_VALUE_RANGE_NUM]>(flat.data())));
}

PyObject* set_tensor_dynamic_input(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  const char* name = nullptr;
  if (!parse_args(args, "acl.set_tensor_dynamic_input", "ks", &desc, &name)) return nullptr;
  return code_result(aclSetTensorDynamicInput(as_desc(desc), name));
}

PyObject* set_tensor_const(PyObject*, PyObject* args) {
  unsigned long desc = 0, data = 0, length = 0;
  if (!parse_args(args, "acl.set_tensor_const", "kkk", &desc, &data, &length)) return nullptr;
  return code_result(aclSetTensorConst(as_desc(desc), to_ptr(data), length));
}

PyObject* set_tensor_place_ment(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  int mem_type = 0;
  if (!parse_args(args, "acl.set_tensor_place_ment", "ki", &desc, &mem_type)) return nullptr;
  return code_result(aclSetTensorPlaceMent(as_desc(desc), static_cast<aclMemType>(mem_type)));
}

PyObject* get_tensor_desc_by_index(PyObject*, PyObject* args) {
  unsigned long desc = 0, index = 0;
  if (!parse_args(args, "acl.get_tensor_desc_by_index", "kk", &desc, &index)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclGetTensorDescByIndex(as_desc(desc), index)));
}

PyObject* get_tensor_desc_address(PyObject*, PyObject* args) {
  unsigned long desc = 0;
  if (!parse_args(args, "acl.get_tensor_desc_address", "k", &desc)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclGetTensorDescAddress(as_desc(desc))));
}

}  // namespace

PyMethodDef kTensorDescMethods[] = {
    {"create_tensor_desc", create_tensor_desc, METH_VARARGS,
     "create_tensor_desc(dtype, dims: list, format) -> desc (0 on failure)"},
    {"destroy_tensor_desc", destroy_tensor_desc, METH_VARARGS, "destroy_tensor_desc(desc) -> None"},
    {"get_tensor_desc_type", get_tensor_desc_type, METH_VARARGS, "get_tensor_desc_type(desc) -> dtype"},
    {"get_tensor_desc_format", get_tensor_desc_format, METH_VARARGS, "get_tensor_desc_format(desc) -> format"},
    {"get_tensor_desc_size", get_tensor_desc_size, METH_VARARGS, "get_tensor_desc_size(desc) -> bytes"},
    {"get_tensor_desc_element_count", get_tensor_desc_element_count, METH_VARARGS,
     "get_tensor_desc_element_count(desc) -> int"},
    {"get_tensor_desc_num_dims", get_tensor_desc_num_dims, METH_VARARGS, "get_tensor_desc_num_dims(desc) -> int"},
    {"get_tensor_desc_dim", get_tensor_desc_dim, METH_VARARGS, "get_tensor_desc_dim(desc, i) -> dim (-1 on error)"},
    {"get_tensor_desc_dim_v2", get_tensor_desc_dim_v2, METH_VARARGS, "get_tensor_desc_dim_v2(desc, i) -> (dim, ret)"},
    {"get_tensor_desc_dim_range", get_tensor_desc_dim_range, METH_VARARGS,
     "get_tensor_desc_dim_range(desc, i, n) -> ([min, max, 0...], ret) or (None, ret)"},
    {"get_tensor_desc_name", get_tensor_desc_name, METH_VARARGS, "get_tensor_desc_name(desc) -> str"},
    {"set_tensor_desc_name", set_tensor_desc_name, METH_VARARGS, "set_tensor_desc_name(desc, name) -> None"},
    {"trans_tensor_desc_format", trans_tensor_desc_format, METH_VARARGS,
     "trans_tensor_desc_format(desc, dst_format) -> (new_desc, ret)"},
    {"set_tensor_shape", set_tensor_shape, METH_VARARGS, "set_tensor_shape(desc, dims: list) -> ret (storage shape)"},
    {"set_tensor_storage_shape", set_tensor_storage_shape, METH_VARARGS,
     "set_tensor_storage_shape(desc, dims: list) -> ret"},
    {"set_tensor_origin_shape", set_tensor_origin_shape, METH_VARARGS,
     "set_tensor_origin_shape(desc, dims: list) -> ret (the shape the getters report)"},
    {"set_tensor_format", set_tensor_format, METH_VARARGS, "set_tensor_format(desc, format) -> ret (storage format)"},
    {"set_tensor_storage_format", set_tensor_storage_format, METH_VARARGS,
     "set_tensor_storage_format(desc, format) -> ret"},
    {"set_tensor_origin_format", set_tensor_origin_format, METH_VARARGS,
     "set_tensor_origin_format(desc, format) -> ret (the format get_tensor_desc_format reports)"},
    {"set_tensor_shape_range", set_tensor_shape_range, METH_VARARGS,
     "set_tensor_shape_range(desc, [[min, max], ...]) -> ret"},
    {"set_tensor_value_range", set_tensor_value_range, METH_VARARGS,
     "set_tensor_value_range(desc, [[lo, hi], ...]) -> ret"},
    {"set_tensor_dynamic_input", set_tensor_dynamic_input, METH_VARARGS,
     "set_tensor_dynamic_input(desc, name) -> ret"},
    {"set_tensor_const", set_tensor_const, METH_VARARGS, "set_tensor_const(desc, data_ptr, length) -> ret (copied)"},
    {"set_tensor_place_ment", set_tensor_place_ment, METH_VARARGS, "set_tensor_place_ment(desc, mem_type) -> ret"},
    {"get_tensor_desc_by_index", get_tensor_desc_by_index, METH_VARARGS,
     "get_tensor_desc_by_index(desc_array, i) -> desc"},
    {"get_tensor_desc_address", get_tensor_desc_address, METH_VARARGS, "get_tensor_desc_address(desc) -> ptr"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
