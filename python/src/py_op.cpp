// acl.op: single operators (spec §4.4). Handles (attr, descs, buffers, op
// handles, streams) are ints; lists of descs and buffers are Python lists
// (anything else: TypeError "argument 2, 3, 4, or 5 is not list"); counts
// passed to C are the lengths of the buffer lists, and a desc list shorter
// than its buffer list is padded with NULL descs, which the library refuses
// with a code. The GIL is released while an op compiles or is queued.
//
// Extensions (C-only in pyACL, same argument order minus counts):
// compile, compile_and_execute, compile_and_execute_v2, set_compile_flag.
#include <climits>
#include <string>
#include <vector>

#include "acl/acl_op_compiler.h"
#include "py_methods.h"

namespace openacl::python {
namespace {

aclopAttr* as_attr(unsigned long v) { return static_cast<aclopAttr*>(to_ptr(v)); }

// Owned reference, released at scope end.
class Owned {
 public:
  explicit Owned(PyObject* o) : o_(o) {}
  ~Owned() { Py_XDECREF(o_); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  PyObject* get() const { return o_; }

 private:
  PyObject* o_;
};

// A list, or a numpy array (anything with tolist()) turned into one. New
// reference, or nullptr with TypeError `not_list`.
PyObject* as_list(PyObject* obj, const char* not_list, bool allow_array) {
  if (PyList_Check(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  if (allow_array && !PyTuple_Check(obj) && PyObject_HasAttrString(obj, "tolist") &&
      PyObject_HasAttrString(obj, "dtype")) {
    PyObject* list = PyObject_CallMethod(obj, "tolist", nullptr);
    if (list && PyList_Check(list)) return list;
    Py_XDECREF(list);
    PyErr_Clear();
  }
  PyErr_SetString(PyExc_TypeError, not_list);
  return nullptr;
}

bool check_len(Py_ssize_t n) {
  if (n > INT_MAX) {
    PyErr_SetString(PyExc_ValueError, "list is too long");
    return false;
  }
  return true;
}

// Items of a list as C `unsigned long` handles (0: NULL).
template <class T>
bool read_handles(PyObject* list, std::vector<T*>* out) {
  const Py_ssize_t n = PyList_GET_SIZE(list);
  if (!check_len(n)) return false;
  out->clear();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);
    const unsigned long v = PyLong_Check(item) ? PyLong_AsUnsignedLongMask(item) : 0;
    if (!PyLong_Check(item) || PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "PyLong_AsLong failed");
      return false;
    }
    out->push_back(static_cast<T*>(to_ptr(v)));
  }
  return true;
}

bool read_ints(PyObject* list, std::vector<int64_t>* out) {
  const Py_ssize_t n = PyList_GET_SIZE(list);
  if (!check_len(n)) return false;
  out->clear();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);
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

// Descs padded with NULL up to `count` (the buffers' count).
template <class T>
void pad(std::vector<T*>* v, size_t count) {
  if (v->size() < count) v->resize(count, nullptr);
}

constexpr const char* kNotList = "argument 2, 3, 4, or 5 is not list";

// ---- models ----

PyObject* set_model_dir(PyObject*, PyObject* args) {
  const char* dir = nullptr;
  if (!parse_args(args, "acl.op.set_model_dir", "s", &dir)) return nullptr;
  return code_result_nogil([&] { return aclopSetModelDir(dir); });
}

PyObject* load(PyObject*, PyObject* args) {
  unsigned long model = 0, size = 0;
  if (!parse_args(args, "acl.op.load", "kk", &model, &size)) return nullptr;
  return code_result_nogil([&] { return aclopLoad(to_ptr(model), size); });
}

// ---- attributes ----

PyObject* create_attr(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.op.create_attr")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclopCreateAttr()));
}

PyObject* destroy_attr(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  if (!parse_args(args, "acl.op.destroy_attr", "k", &attr)) return nullptr;
  aclopDestroyAttr(as_attr(attr));
  Py_RETURN_NONE;
}

PyObject* set_attr_bool(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  unsigned char value = 0;
  if (!parse_args(args, "acl.op.set_attr_bool", "ksb", &attr, &name, &value)) return nullptr;
  return code_result(aclopSetAttrBool(as_attr(attr), name, value));
}

PyObject* set_attr_int(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  long long value = 0;
  if (!parse_args(args, "acl.op.set_attr_int", "ksL", &attr, &name, &value)) return nullptr;
  return code_result(aclopSetAttrInt(as_attr(attr), name, value));
}

PyObject* set_attr_float(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  float value = 0;
  if (!parse_args(args, "acl.op.set_attr_float", "ksf", &attr, &name, &value)) return nullptr;
  return code_result(aclopSetAttrFloat(as_attr(attr), name, value));
}

PyObject* set_attr_string(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char *name = nullptr, *value = nullptr;
  if (!parse_args(args, "acl.op.set_attr_string", "kss", &attr, &name, &value)) return nullptr;
  return code_result(aclopSetAttrString(as_attr(attr), name, value));
}

PyObject* set_attr_data_type(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  int value = 0;
  if (!parse_args(args, "acl.op.set_attr_data_type", "ksi", &attr, &name, &value)) return nullptr;
  const aclError ret = aclopSetAttrDataType(as_attr(attr), name, static_cast<aclDataType>(value));
  return Py_BuildValue("(ki)", attr, ret);  // pyACL returns (attr, ret) here
}

PyObject* set_attr_list_data_type(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_data_type", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", false));
  if (!list.get()) return nullptr;
  std::vector<int64_t> ints;
  if (!read_ints(list.get(), &ints)) return nullptr;
  std::vector<aclDataType> types;
  for (int64_t v : ints) types.push_back(static_cast<aclDataType>(v));
  const aclError ret =
      aclopSetAttrListDataType(as_attr(attr), name, static_cast<int>(types.size()), types.data());
  return Py_BuildValue("(ki)", attr, ret);
}

PyObject* set_attr_list_bool(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_bool", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", true));
  if (!list.get()) return nullptr;
  std::vector<int64_t> ints;
  // numpy bool arrays give True/False, which are ints too.
  if (!read_ints(list.get(), &ints)) return nullptr;
  std::vector<uint8_t> bytes;
  for (int64_t v : ints) bytes.push_back(static_cast<uint8_t>(v));
  return code_result(aclopSetAttrListBool(as_attr(attr), name, static_cast<int>(bytes.size()), bytes.data()));
}

PyObject* set_attr_list_int(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_int", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", true));
  if (!list.get()) return nullptr;
  std::vector<int64_t> ints;
  if (!read_ints(list.get(), &ints)) return nullptr;
  return code_result(aclopSetAttrListInt(as_attr(attr), name, static_cast<int>(ints.size()), ints.data()));
}

PyObject* set_attr_list_float(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_float", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", true));
  if (!list.get()) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(list.get());
  if (!check_len(n)) return nullptr;
  std::vector<float> floats;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const double v = PyFloat_AsDouble(PyList_GET_ITEM(list.get(), i));
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "PyFloat_AsDouble failed");
      return nullptr;
    }
    floats.push_back(static_cast<float>(v));
  }
  return code_result(aclopSetAttrListFloat(as_attr(attr), name, static_cast<int>(floats.size()), floats.data()));
}

PyObject* set_attr_list_string(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_string", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", false));
  if (!list.get()) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(list.get());
  if (!check_len(n)) return nullptr;
  std::vector<const char*> strings;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(list.get(), i);
    const char* s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : nullptr;  // owned by the list's item
    if (!s) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "list item is not a str");
      return nullptr;
    }
    strings.push_back(s);
  }
  return code_result(aclopSetAttrListString(as_attr(attr), name, static_cast<int>(strings.size()), strings.data()));
}

PyObject* set_attr_list_list_int(PyObject*, PyObject* args) {
  unsigned long attr = 0;
  const char* name = nullptr;
  PyObject* values = nullptr;
  if (!parse_args(args, "acl.op.set_attr_list_list_int", "ksO", &attr, &name, &values)) return nullptr;
  Owned list(as_list(values, "argument 3 is not list", false));
  if (!list.get()) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(list.get());
  if (!check_len(n)) return nullptr;
  std::vector<std::vector<int64_t>> lists(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    Owned inner(as_list(PyList_GET_ITEM(list.get(), i), "argument 3 is not list", true));
    if (!inner.get() || !read_ints(inner.get(), &lists[static_cast<size_t>(i)])) return nullptr;
  }
  std::vector<int> counts;
  std::vector<const int64_t*> ptrs;
  for (const auto& l : lists) {
    counts.push_back(static_cast<int>(l.size()));
    ptrs.push_back(l.data());
  }
  return code_result(
      aclopSetAttrListListInt(as_attr(attr), name, static_cast<int>(lists.size()), counts.data(), ptrs.data()));
}

// ---- execution ----

// The lists of an execute call: descs and buffers.
struct IoLists {
  std::vector<aclTensorDesc*> in_descs, out_descs;
  std::vector<aclDataBuffer*> in_bufs, out_bufs;
};

bool read_io(PyObject* in_descs, PyObject* in_bufs, PyObject* out_descs, PyObject* out_bufs, IoLists* io) {
  if (!PyList_Check(in_descs) || !PyList_Check(in_bufs) || !PyList_Check(out_descs) || !PyList_Check(out_bufs)) {
    PyErr_SetString(PyExc_TypeError, kNotList);
    return false;
  }
  if (!read_handles(in_descs, &io->in_descs) || !read_handles(in_bufs, &io->in_bufs) ||
      !read_handles(out_descs, &io->out_descs) || !read_handles(out_bufs, &io->out_bufs))
    return false;
  pad(&io->in_descs, io->in_bufs.size());
  pad(&io->out_descs, io->out_bufs.size());
  return true;
}

template <class Call>
PyObject* execute_like(PyObject* args, const char* name, Call&& call) {
  const char* type = nullptr;
  PyObject *in_descs = nullptr, *in_bufs = nullptr, *out_descs = nullptr, *out_bufs = nullptr;
  unsigned long attr = 0, stream = 0;
  if (!parse_args(args, name, "sOOOOkk", &type, &in_descs, &in_bufs, &out_descs, &out_bufs, &attr, &stream))
    return nullptr;
  IoLists io;
  if (!read_io(in_descs, in_bufs, out_descs, out_bufs, &io)) return nullptr;
  return code_result_nogil([&] { return call(type, io, as_attr(attr), to_ptr(stream)); });
}

PyObject* execute(PyObject*, PyObject* args) {
  return execute_like(args, "acl.op.execute", [](const char* type, IoLists& io, aclopAttr* attr, void* stream) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return aclopExecute(type, static_cast<int>(io.in_bufs.size()), io.in_descs.data(), io.in_bufs.data(),
                        static_cast<int>(io.out_bufs.size()), io.out_descs.data(), io.out_bufs.data(), attr, stream);
#pragma GCC diagnostic pop
  });
}

PyObject* execute_v2(PyObject*, PyObject* args) {
  return execute_like(args, "acl.op.execute_v2", [](const char* type, IoLists& io, aclopAttr* attr, void* stream) {
    return aclopExecuteV2(type, static_cast<int>(io.in_bufs.size()), io.in_descs.data(), io.in_bufs.data(),
                          static_cast<int>(io.out_bufs.size()), io.out_descs.data(), io.out_bufs.data(), attr,
                          stream);
  });
}

PyObject* create_handle(PyObject*, PyObject* args) {
  const char* type = nullptr;
  PyObject *in_descs = nullptr, *out_descs = nullptr;
  unsigned long attr = 0;
  if (!parse_args(args, "acl.op.create_handle", "sOOk", &type, &in_descs, &out_descs, &attr)) return nullptr;
  if (!PyList_Check(in_descs) || !PyList_Check(out_descs)) {
    PyErr_SetString(PyExc_TypeError, "argument 2 or 3 is not list");
    return nullptr;
  }
  std::vector<aclTensorDesc*> ins, outs;
  if (!read_handles(in_descs, &ins) || !read_handles(out_descs, &outs)) return nullptr;
  aclopHandle* handle = nullptr;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclopCreateHandle(type, static_cast<int>(ins.size()), ins.data(), static_cast<int>(outs.size()),
                            outs.data(), as_attr(attr), &handle);
  }
  return ptr_result(handle, ret);
}

PyObject* destroy_handle(PyObject*, PyObject* args) {
  unsigned long handle = 0;
  if (!parse_args(args, "acl.op.destroy_handle", "k", &handle)) return nullptr;
  aclopDestroyHandle(static_cast<aclopHandle*>(to_ptr(handle)));
  Py_RETURN_NONE;
}

PyObject* execute_with_handle(PyObject*, PyObject* args) {
  unsigned long handle = 0, stream = 0;
  PyObject *in_bufs = nullptr, *out_bufs = nullptr;
  if (!parse_args(args, "acl.op.execute_with_handle", "kOOk", &handle, &in_bufs, &out_bufs, &stream)) return nullptr;
  if (!PyList_Check(in_bufs) || !PyList_Check(out_bufs)) {
    PyErr_SetString(PyExc_TypeError, "argument 2 or 3 is not list");
    return nullptr;
  }
  std::vector<aclDataBuffer*> ins, outs;
  if (!read_handles(in_bufs, &ins) || !read_handles(out_bufs, &outs)) return nullptr;
  return code_result_nogil([&] {
    return aclopExecWithHandle(static_cast<aclopHandle*>(to_ptr(handle)), static_cast<int>(ins.size()), ins.data(),
                               static_cast<int>(outs.size()), outs.data(), to_ptr(stream));
  });
}

PyObject* cast(PyObject*, PyObject* args) {
  unsigned long src_desc = 0, src_buf = 0, dst_desc = 0, dst_buf = 0, stream = 0;
  unsigned char truncate = 0;
  if (!parse_args(args, "acl.op.cast", "kkkkbk", &src_desc, &src_buf, &dst_desc, &dst_buf, &truncate, &stream))
    return nullptr;
  return code_result_nogil([&] {
    return aclopCast(static_cast<aclTensorDesc*>(to_ptr(src_desc)), static_cast<aclDataBuffer*>(to_ptr(src_buf)),
                     static_cast<aclTensorDesc*>(to_ptr(dst_desc)), static_cast<aclDataBuffer*>(to_ptr(dst_buf)),
                     truncate, to_ptr(stream));
  });
}

PyObject* create_handle_for_cast(PyObject*, PyObject* args) {
  unsigned long src_desc = 0, dst_desc = 0;
  unsigned char truncate = 0;
  if (!parse_args(args, "acl.op.create_handle_for_cast", "kkb", &src_desc, &dst_desc, &truncate)) return nullptr;
  aclopHandle* handle = nullptr;
  aclError ret;
  {
    GilRelease nogil;
    ret = aclopCreateHandleForCast(static_cast<aclTensorDesc*>(to_ptr(src_desc)),
                                   static_cast<aclTensorDesc*>(to_ptr(dst_desc)), truncate, &handle);
  }
  return ptr_result(handle, ret);
}

PyObject* infer_shape(PyObject*, PyObject* args) {
  const char* type = nullptr;
  PyObject *in_descs = nullptr, *in_bufs = nullptr, *out_descs = nullptr;
  int num_outputs = 0;
  unsigned long attr = 0;
  if (!parse_args(args, "acl.op.infer_shape", "sOOiOk", &type, &in_descs, &in_bufs, &num_outputs, &out_descs, &attr))
    return nullptr;
  if (!PyList_Check(in_descs) || !PyList_Check(in_bufs) || !PyList_Check(out_descs)) {
    PyErr_SetString(PyExc_TypeError, "argument 2, 3, or 5 is not list");
    return nullptr;
  }
  std::vector<aclTensorDesc*> ins, outs;
  std::vector<aclDataBuffer*> bufs;
  if (!read_handles(in_descs, &ins) || !read_handles(in_bufs, &bufs) || !read_handles(out_descs, &outs))
    return nullptr;
  // C reads num_outputs descs and len(in_descs) inputs: pad what is short.
  pad(&bufs, ins.size());
  if (num_outputs > 0) pad(&outs, static_cast<size_t>(num_outputs));
  return code_result_nogil([&] {
    return aclopInferShape(type, static_cast<int>(ins.size()), ins.data(), bufs.data(), num_outputs, outs.data(),
                           as_attr(attr));
  });
}

PyObject* update_params(PyObject*, PyObject* args) {
  const char* type = nullptr;
  PyObject *in_descs = nullptr, *out_descs = nullptr;
  unsigned long attr = 0;
  if (!parse_args(args, "acl.op.update_params", "sOOk", &type, &in_descs, &out_descs, &attr)) return nullptr;
  if (!PyList_Check(in_descs) || !PyList_Check(out_descs)) {
    PyErr_SetString(PyExc_TypeError, "argument 2 or 3 is not list");
    return nullptr;
  }
  std::vector<aclTensorDesc*> ins, outs;
  if (!read_handles(in_descs, &ins) || !read_handles(out_descs, &outs)) return nullptr;
  return code_result_nogil([&] {
    return aclopUpdateParams(type, static_cast<int>(ins.size()), ins.data(), static_cast<int>(outs.size()),
                             outs.data(), as_attr(attr));
  });
}

PyObject* set_max_op_queue_num(PyObject*, PyObject* args) {
  unsigned long long n = 0;
  if (!parse_args(args, "acl.op.set_max_op_queue_num", "K", &n)) return nullptr;
  return code_result(aclopSetMaxOpQueueNum(n));
}

// ---- custom kernels: the library answers ACL_ERROR_API_NOT_SUPPORT ----

// Never called (registration is refused); stands for the Python callable.
aclError compile_func_stub(int, const aclTensorDesc* const[], int, const aclTensorDesc* const[], const aclopAttr*,
                           aclopKernelDesc*) {
  return ACL_ERROR_API_NOT_SUPPORT;
}

PyObject* register_compile_func(PyObject*, PyObject* args) {
  const char* type = nullptr;
  PyObject* fn = nullptr;
  if (!parse_args(args, "acl.op.register_compile_func", "sO", &type, &fn)) return nullptr;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "parameter must be callable");
    return nullptr;
  }
  return code_result(aclopRegisterCompileFunc(type, compile_func_stub));
}

PyObject* unregister_compile_func(PyObject*, PyObject* args) {
  const char* type = nullptr;
  if (!parse_args(args, "acl.op.unregister_compile_func", "s", &type)) return nullptr;
  return code_result(aclopUnregisterCompileFunc(type));
}

PyObject* create_kernel(PyObject*, PyObject* args) {
  const char *type = nullptr, *kernel_id = nullptr, *kernel_name = nullptr;
  unsigned long bin = 0;
  int bin_size = 0, engine = 0, dealloc_flag = 0;
  if (!parse_args(args, "acl.op.create_kernel", "ssskiii", &type, &kernel_id, &kernel_name, &bin, &bin_size, &engine,
                  &dealloc_flag))
    return nullptr;
  // The kernel is refused, so the library never takes ownership of bin:
  // no deallocator is passed whatever deallocator_flag says.
  return code_result(aclopCreateKernel(type, kernel_id, kernel_name, to_ptr(bin), bin_size,
                                       static_cast<aclopEngineType>(engine), nullptr));
}

PyObject* set_kernel_args(PyObject*, PyObject* args) {
  unsigned long desc = 0, ptr = 0;
  const char* kernel_id = nullptr;
  unsigned int block_dim = 0, size = 0;
  if (!parse_args(args, "acl.op.set_kernel_args", "ksIkI", &desc, &kernel_id, &block_dim, &ptr, &size)) return nullptr;
  return code_result(
      aclopSetKernelArgs(static_cast<aclopKernelDesc*>(to_ptr(desc)), kernel_id, block_dim, to_ptr(ptr), size));
}

PyObject* set_kernel_workspace_sizes(PyObject*, PyObject* args) {
  unsigned long desc = 0, ptr = 0;
  int num = 0;
  if (!parse_args(args, "acl.op.set_kernel_workspace_sizes", "kik", &desc, &num, &ptr)) return nullptr;
  return code_result(aclopSetKernelWorkspaceSizes(static_cast<aclopKernelDesc*>(to_ptr(desc)), num,
                                                  static_cast<size_t*>(to_ptr(ptr))));
}

PyObject* start_dump_args(PyObject*, PyObject* args) {
  unsigned int type = 0;
  const char* path = nullptr;
  if (!parse_args(args, "acl.op.start_dump_args", "Is", &type, &path)) return nullptr;
  return code_result(aclopStartDumpArgs(type, path));
}

PyObject* stop_dump_args(PyObject*, PyObject* args) {
  unsigned int type = 0;
  if (!parse_args(args, "acl.op.stop_dump_args", "I", &type)) return nullptr;
  return code_result(aclopStopDumpArgs(type));
}

// ---- extensions: the C-only compile functions ----

PyObject* compile(PyObject*, PyObject* args) {
  const char *type = nullptr, *path = nullptr;
  PyObject *in_descs = nullptr, *out_descs = nullptr;
  unsigned long attr = 0;
  int engine = 0, flag = 0;
  if (!parse_args(args, "acl.op.compile", "sOOkiiz", &type, &in_descs, &out_descs, &attr, &engine, &flag, &path))
    return nullptr;
  if (!PyList_Check(in_descs) || !PyList_Check(out_descs)) {
    PyErr_SetString(PyExc_TypeError, "argument 2 or 3 is not list");
    return nullptr;
  }
  std::vector<aclTensorDesc*> ins, outs;
  if (!read_handles(in_descs, &ins) || !read_handles(out_descs, &outs)) return nullptr;
  return code_result_nogil([&] {
    return aclopCompile(type, static_cast<int>(ins.size()), ins.data(), static_cast<int>(outs.size()), outs.data(),
                        as_attr(attr), static_cast<aclopEngineType>(engine), static_cast<aclopCompileType>(flag),
                        path);
  });
}

template <class Call>
PyObject* compile_and_execute_like(PyObject* args, const char* name, Call&& call) {
  const char *type = nullptr, *path = nullptr;
  PyObject *in_descs = nullptr, *in_bufs = nullptr, *out_descs = nullptr, *out_bufs = nullptr;
  unsigned long attr = 0, stream = 0;
  int engine = 0, flag = 0;
  if (!parse_args(args, name, "sOOOOkiizk", &type, &in_descs, &in_bufs, &out_descs, &out_bufs, &attr, &engine, &flag,
                  &path, &stream))
    return nullptr;
  IoLists io;
  if (!read_io(in_descs, in_bufs, out_descs, out_bufs, &io)) return nullptr;
  return code_result_nogil([&] {
    return call(type, io, as_attr(attr), static_cast<aclopEngineType>(engine), static_cast<aclopCompileType>(flag),
                path, to_ptr(stream));
  });
}

PyObject* compile_and_execute(PyObject*, PyObject* args) {
  return compile_and_execute_like(args, "acl.op.compile_and_execute",
                                  [](const char* type, IoLists& io, aclopAttr* attr, aclopEngineType e,
                                     aclopCompileType f, const char* path, void* stream) {
                                    return aclopCompileAndExecute(
                                        type, static_cast<int>(io.in_bufs.size()), io.in_descs.data(),
                                        io.in_bufs.data(), static_cast<int>(io.out_bufs.size()), io.out_descs.data(),
                                        io.out_bufs.data(), attr, e, f, path, stream);
                                  });
}

PyObject* compile_and_execute_v2(PyObject*, PyObject* args) {
  return compile_and_execute_like(args, "acl.op.compile_and_execute_v2",
                                  [](const char* type, IoLists& io, aclopAttr* attr, aclopEngineType e,
                                     aclopCompileType f, const char* path, void* stream) {
                                    return aclopCompileAndExecuteV2(
                                        type, static_cast<int>(io.in_bufs.size()), io.in_descs.data(),
                                        io.in_bufs.data(), static_cast<int>(io.out_bufs.size()), io.out_descs.data(),
                                        io.out_bufs.data(), attr, e, f, path, stream);
                                  });
}

PyObject* set_compile_flag(PyObject*, PyObject* args) {
  int flag = 0;
  if (!parse_args(args, "acl.op.set_compile_flag", "i", &flag)) return nullptr;
  return code_result(aclopSetCompileFlag(static_cast<aclOpCompileFlag>(flag)));
}

}  // namespace

PyMethodDef kOpMethods[] = {
    {"set_model_dir", set_model_dir, METH_VARARGS, "set_model_dir(dir) -> ret"},
    {"load", load, METH_VARARGS, "load(model_ptr, model_size) -> ret"},
    {"create_attr", create_attr, METH_VARARGS, "create_attr() -> attr"},
    {"destroy_attr", destroy_attr, METH_VARARGS, "destroy_attr(attr) -> None"},
    {"set_attr_bool", set_attr_bool, METH_VARARGS, "set_attr_bool(attr, name, value) -> ret"},
    {"set_attr_int", set_attr_int, METH_VARARGS, "set_attr_int(attr, name, value) -> ret"},
    {"set_attr_float", set_attr_float, METH_VARARGS, "set_attr_float(attr, name, value) -> ret"},
    {"set_attr_string", set_attr_string, METH_VARARGS, "set_attr_string(attr, name, value) -> ret"},
    {"set_attr_data_type", set_attr_data_type, METH_VARARGS, "set_attr_data_type(attr, name, dtype) -> (attr, ret)"},
    {"set_attr_list_data_type", set_attr_list_data_type, METH_VARARGS,
     "set_attr_list_data_type(attr, name, [dtypes]) -> (attr, ret)"},
    {"set_attr_list_bool", set_attr_list_bool, METH_VARARGS, "set_attr_list_bool(attr, name, values) -> ret"},
    {"set_attr_list_int", set_attr_list_int, METH_VARARGS, "set_attr_list_int(attr, name, values) -> ret"},
    {"set_attr_list_float", set_attr_list_float, METH_VARARGS, "set_attr_list_float(attr, name, values) -> ret"},
    {"set_attr_list_string", set_attr_list_string, METH_VARARGS, "set_attr_list_string(attr, name, [str]) -> ret"},
    {"set_attr_list_list_int", set_attr_list_list_int, METH_VARARGS,
     "set_attr_list_list_int(attr, name, [[int], ...]) -> ret"},
    {"execute", execute, METH_VARARGS,
     "execute(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream) -> ret"},
    {"execute_v2", execute_v2, METH_VARARGS,
     "execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream) -> ret"},
    {"create_handle", create_handle, METH_VARARGS, "create_handle(op_type, in_descs, out_descs, attr) -> (handle, ret)"},
    {"destroy_handle", destroy_handle, METH_VARARGS, "destroy_handle(handle) -> None"},
    {"execute_with_handle", execute_with_handle, METH_VARARGS,
     "execute_with_handle(handle, in_bufs, out_bufs, stream) -> ret"},
    {"cast", cast, METH_VARARGS, "cast(src_desc, src_buf, dst_desc, dst_buf, truncate, stream) -> ret"},
    {"create_handle_for_cast", create_handle_for_cast, METH_VARARGS,
     "create_handle_for_cast(src_desc, dst_desc, truncate) -> (handle, ret)"},
    {"infer_shape", infer_shape, METH_VARARGS,
     "infer_shape(op_type, in_descs, in_bufs, num_outputs, out_descs, attr) -> ret"},
    {"update_params", update_params, METH_VARARGS, "update_params(op_type, in_descs, out_descs, attr) -> ret"},
    {"set_max_op_queue_num", set_max_op_queue_num, METH_VARARGS, "set_max_op_queue_num(n) -> ret"},
    {"register_compile_func", register_compile_func, METH_VARARGS, "register_compile_func(op_type, fn) -> ret"},
    {"unregister_compile_func", unregister_compile_func, METH_VARARGS, "unregister_compile_func(op_type) -> ret"},
    {"create_kernel", create_kernel, METH_VARARGS,
     "create_kernel(op_type, kernel_id, kernel_name, bin_ptr, bin_size, engine_type, deallocator_flag) -> ret"},
    {"set_kernel_args", set_kernel_args, METH_VARARGS,
     "set_kernel_args(kernel_desc, kernel_id, block_dim, args_ptr, arg_size) -> ret"},
    {"set_kernel_workspace_sizes", set_kernel_workspace_sizes, METH_VARARGS,
     "set_kernel_workspace_sizes(kernel_desc, num, sizes_ptr) -> ret"},
    {"start_dump_args", start_dump_args, METH_VARARGS, "start_dump_args(dump_type, path) -> ret"},
    {"stop_dump_args", stop_dump_args, METH_VARARGS, "stop_dump_args(dump_type) -> ret"},
    {"compile", compile, METH_VARARGS,
     "compile(op_type, in_descs, out_descs, attr, engine_type, compile_flag, op_path) -> ret (extension)"},
    {"compile_and_execute", compile_and_execute, METH_VARARGS,
     "compile_and_execute(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, engine_type, compile_flag, op_path, "
     "stream) -> ret (extension)"},
    {"compile_and_execute_v2", compile_and_execute_v2, METH_VARARGS,
     "compile_and_execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, engine_type, compile_flag, "
     "op_path, stream) -> ret (extension)"},
    {"set_compile_flag", set_compile_flag, METH_VARARGS, "set_compile_flag(flag) -> ret (extension)"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
