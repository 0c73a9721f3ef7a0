// Top-level acl.* functions: init/finalize, version and platform strings,
// application log, fp16 helpers, data type sizes and data buffers.
#include "py_methods.h"

namespace openacl::python {
namespace {

PyObject* init(PyObject*, PyObject* args) {
  // `|s`: the path is optional, None is refused (as in pyACL).
  const char* path = nullptr;
  if (!parse_args(args, "acl.init", "|s", &path)) return nullptr;
  return code_result(aclInit(path));
}

PyObject* finalize(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.finalize")) return nullptr;
  aclError ret;
  {
    GilRelease nogil;  // waits for every stream's pending work
    ret = aclFinalize();
  }
  if (ret == ACL_SUCCESS) release_pending_callbacks();
  return code_result(ret);
}

PyObject* finalize_reference(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.finalize_reference")) return nullptr;
  uint64_t ref_count = 0;
  aclError ret;
  {
    GilRelease nogil;  // the last reference tears down like finalize
    ret = aclFinalizeReference(&ref_count);
  }
  if (ret == ACL_SUCCESS && ref_count == 0) release_pending_callbacks();
  return Py_BuildValue("(Ki)", static_cast<unsigned long long>(ref_count), ret);
}

PyObject* get_version(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.get_version")) return nullptr;
  int32_t major = 0, minor = 0, patch = 0;
  const aclError ret = aclrtGetVersion(&major, &minor, &patch);
  return Py_BuildValue("(iiii)", major, minor, patch, ret);
}

PyObject* get_soc_name(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.get_soc_name")) return nullptr;
  return str_or_none(aclrtGetSocName());
}

PyObject* get_recent_err_msg(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.get_recent_err_msg")) return nullptr;
  return str_or_none(aclGetRecentErrMsg());
}

PyObject* app_log(PyObject*, PyObject* args) {
  int level = 0;
  const char* message = nullptr;
  if (!parse_args(args, "acl.app_log", "is", &level, &message)) return nullptr;
  // aclLogLevel has four values; anything else is clamped rather than handed
  // to the library as an out-of-range enum.
  if (level < ACL_DEBUG) level = ACL_DEBUG;
  if (level > ACL_ERROR) level = ACL_ERROR;

  // Attribute the line to the Python caller, like ACL_APP_LOG does for C.
  // Everything here is borrowed or cached, so it costs a few attribute reads.
  const char* func = "python";
  const char* file = "python";
  int line = 0;
  PyObject* name = nullptr;
  PyObject* filename = nullptr;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed; NULL when called from C
  if (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    line = PyFrame_GetLineNumber(frame);
    name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_name");
    filename = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    Py_DECREF(code);
    const char* s = name != nullptr && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
    if (s != nullptr) func = s;
    s = filename != nullptr && PyUnicode_Check(filename) ? PyUnicode_AsUTF8(filename) : nullptr;
    if (s != nullptr) file = s;
    PyErr_Clear();  // a failed lookup only costs the location
  }
  // The message is data, never a format string.
  aclAppLog(static_cast<aclLogLevel>(level), func, file, static_cast<uint32_t>(line < 0 ? 0 : line), "%s", message);
  Py_XDECREF(name);
  Py_XDECREF(filename);
  Py_RETURN_NONE;
}

PyObject* float16_to_float(PyObject*, PyObject* args) {
  unsigned short bits = 0;  // `H`: masks to 16 bits, like pyACL
  if (!parse_args(args, "acl.float16_to_float", "H", &bits)) return nullptr;
  return PyFloat_FromDouble(static_cast<double>(aclFloat16ToFloat(static_cast<aclFloat16>(bits))));
}

PyObject* float_to_float16(PyObject*, PyObject* args) {
  float value = 0.0f;
  if (!parse_args(args, "acl.float_to_float16", "f", &value)) return nullptr;
  return PyLong_FromUnsignedLong(aclFloatToFloat16(value));
}

PyObject* data_type_size(PyObject*, PyObject* args) {
  int data_type = 0;
  if (!parse_args(args, "acl.data_type_size", "i", &data_type)) return nullptr;
  return PyLong_FromSize_t(aclDataTypeSize(static_cast<aclDataType>(data_type)));
}

PyObject* create_data_buffer(PyObject*, PyObject* args) {
  unsigned long data = 0, size = 0;
  if (!parse_args(args, "acl.create_data_buffer", "kk", &data, &size)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclCreateDataBuffer(to_ptr(data), size)));
}

PyObject* destroy_data_buffer(PyObject*, PyObject* args) {
  unsigned long buffer = 0;
  if (!parse_args(args, "acl.destroy_data_buffer", "k", &buffer)) return nullptr;
  return code_result(aclDestroyDataBuffer(static_cast<const aclDataBuffer*>(to_ptr(buffer))));
}

PyObject* get_data_buffer_addr(PyObject*, PyObject* args) {
  unsigned long buffer = 0;
  if (!parse_args(args, "acl.get_data_buffer_addr", "k", &buffer)) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclGetDataBufferAddr(static_cast<const aclDataBuffer*>(to_ptr(buffer)))));
}

PyObject* get_data_buffer_size(PyObject*, PyObject* args) {
  unsigned long buffer = 0;
  if (!parse_args(args, "acl.get_data_buffer_size", "k", &buffer)) return nullptr;
  // The deprecated 32-bit getter is part of the API we reproduce.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const uint32_t size = aclGetDataBufferSize(static_cast<const aclDataBuffer*>(to_ptr(buffer)));
#pragma GCC diagnostic pop
  return PyLong_FromUnsignedLong(size);
}

PyObject* get_data_buffer_size_v2(PyObject*, PyObject* args) {
  unsigned long buffer = 0;
  if (!parse_args(args, "acl.get_data_buffer_size_v2", "k", &buffer)) return nullptr;
  return PyLong_FromSize_t(aclGetDataBufferSizeV2(static_cast<const aclDataBuffer*>(to_ptr(buffer))));
}

PyObject* update_data_buffer(PyObject*, PyObject* args) {
  unsigned long buffer = 0, data = 0, size = 0;
  if (!parse_args(args, "acl.update_data_buffer", "kkk", &buffer, &data, &size)) return nullptr;
  return code_result(aclUpdateDataBuffer(static_cast<aclDataBuffer*>(to_ptr(buffer)), to_ptr(data), size));
}

}  // namespace

PyMethodDef kAclMethods[] = {
    {"init", init, METH_VARARGS, "init([config_path]) -> ret"},
    {"finalize", finalize, METH_VARARGS, "finalize() -> ret"},
    {"finalize_reference", finalize_reference, METH_VARARGS, "finalize_reference() -> (ref_count, ret)"},
    {"get_version", get_version, METH_VARARGS, "get_version() -> (major, minor, patch, ret)"},
    {"get_soc_name", get_soc_name, METH_VARARGS, "get_soc_name() -> str or None"},
    {"get_recent_err_msg", get_recent_err_msg, METH_VARARGS,
     "get_recent_err_msg() -> str or None; reading the message clears it"},
    {"app_log", app_log, METH_VARARGS, "app_log(level, msg) -> None"},
    {"float16_to_float", float16_to_float, METH_VARARGS, "float16_to_float(bits) -> float"},
    {"float_to_float16", float_to_float16, METH_VARARGS, "float_to_float16(value) -> bits"},
    {"data_type_size", data_type_size, METH_VARARGS, "data_type_size(dtype) -> bytes per element"},
    {"create_data_buffer", create_data_buffer, METH_VARARGS, "create_data_buffer(ptr, size) -> buffer (0 on failure)"},
    {"destroy_data_buffer", destroy_data_buffer, METH_VARARGS, "destroy_data_buffer(buffer) -> ret"},
    {"get_data_buffer_addr", get_data_buffer_addr, METH_VARARGS, "get_data_buffer_addr(buffer) -> ptr"},
    {"get_data_buffer_size", get_data_buffer_size, METH_VARARGS,
     "get_data_buffer_size(buffer) -> size (32-bit, deprecated: use get_data_buffer_size_v2)"},
    {"get_data_buffer_size_v2", get_data_buffer_size_v2, METH_VARARGS, "get_data_buffer_size_v2(buffer) -> size"},
    {"update_data_buffer", update_data_buffer, METH_VARARGS, "update_data_buffer(buffer, ptr, size) -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
