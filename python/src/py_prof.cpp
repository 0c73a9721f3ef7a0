// acl.prof: profiling (pyacl-api.md §5) over the aclprof* C functions of
// acl/acl_prof.h: collection to files and the op-info subscription with its
// record readers, and the msproftx annotations.
//
// Conventions (§0.2): configs and buffer addresses are ints (`k`), model ids
// and record indexes `I`; outputs come back as `(out..., ret)`; argument
// errors raise TypeError "acl.prof.<name> args parse failed".
//
// model_un_subscribe releases the GIL: it flushes the pipe and may wait for a
// Python reader thread, which needs the GIL to read. init/start/stop/finalize
// release it too (stop and finalize write the result files).
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "py_methods.h"

namespace openacl::python {
namespace {

// pyACL's limit on the string buffers of get_op_type / get_op_name.
constexpr unsigned long kMaxOpStringLen = 4096;

aclprofConfig* as_config(unsigned long v) { return static_cast<aclprofConfig*>(to_ptr(v)); }
aclprofSubscribeConfig* as_sub(unsigned long v) { return static_cast<aclprofSubscribeConfig*>(to_ptr(v)); }
const void* as_buf(unsigned long v) { return to_ptr(v); }

// (str, ret) / (int, ret) results.
PyObject* str_result(const std::string& s, aclError ret) {
  PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (str == nullptr) return nullptr;
  return Py_BuildValue("(Ni)", str, ret);
}

// ---- collection to files ----

PyObject* init(PyObject*, PyObject* args) {
  const char* path = nullptr;
  if (!parse_args(args, "acl.prof.init", "s", &path)) return nullptr;
  const size_t len = strlen(path);
  return code_result_nogil([&] { return aclprofInit(path, len); });
}

PyObject* finalize(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.prof.finalize")) return nullptr;
  return code_result_nogil([] { return aclprofFinalize(); });
}

PyObject* create_config(PyObject*, PyObject* args) {
  PyObject* list = nullptr;
  int metrics = 0;
  unsigned long events = 0;
  unsigned long long types = 0;
  if (!parse_args(args, "acl.prof.create_config", "OikK", &list, &metrics, &events, &types)) return nullptr;
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, "argument 1 is not list");
    return nullptr;
  }
  std::vector<uint32_t> ids;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);  // borrowed
    const unsigned long v = PyLong_Check(item) ? PyLong_AsUnsignedLong(item) : ULONG_MAX;
    if (!PyLong_Check(item) || (v == ULONG_MAX && PyErr_Occurred()) || v > UINT32_MAX) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "PyLong_AsLong failed");
      return nullptr;
    }
    ids.push_back(static_cast<uint32_t>(v));
  }
  aclprofConfig* cfg =
      aclprofCreateConfig(ids.empty() ? nullptr : ids.data(), static_cast<uint32_t>(ids.size()),
                          static_cast<aclprofAicoreMetrics>(metrics),
                          static_cast<const aclprofAicoreEvents*>(to_ptr(events)), types);
  return PyLong_FromUnsignedLong(from_ptr(cfg));
}

PyObject* destroy_config(PyObject*, PyObject* args) {
  unsigned long cfg = 0;
  if (!parse_args(args, "acl.prof.destroy_config", "k", &cfg)) return nullptr;
  return code_result(aclprofDestroyConfig(as_config(cfg)));
}

PyObject* start(PyObject*, PyObject* args) {
  unsigned long cfg = 0;
  if (!parse_args(args, "acl.prof.start", "k", &cfg)) return nullptr;
  return code_result_nogil([&] { return aclprofStart(as_config(cfg)); });
}

PyObject* stop(PyObject*, PyObject* args) {
  unsigned long cfg = 0;
  if (!parse_args(args, "acl.prof.stop", "k", &cfg)) return nullptr;
  return code_result_nogil([&] { return aclprofStop(as_config(cfg)); });
}

PyObject* set_config(PyObject*, PyObject* args) {
  int type = 0;
  const char* value = nullptr;
  if (!parse_args(args, "acl.prof.set_config", "is", &type, &value)) return nullptr;
  return code_result(aclprofSetConfig(static_cast<aclprofConfigType>(type), value, strlen(value)));
}

// ---- subscription ----

PyObject* create_subscribe_config(PyObject*, PyObject* args) {
  unsigned char time_info = 0;
  int metrics = 0;
  int fd = -1;
  if (!parse_args(args, "acl.prof.create_subscribe_config", "bii", &time_info, &metrics, &fd)) return nullptr;
  // The library reads the int behind the pointer at once: a local is enough.
  aclprofSubscribeConfig* cfg = aclprofCreateSubscribeConfig(static_cast<int8_t>(time_info),
                                                             static_cast<aclprofAicoreMetrics>(metrics), &fd);
  return PyLong_FromUnsignedLong(from_ptr(cfg));
}

PyObject* destroy_subscribe_config(PyObject*, PyObject* args) {
  unsigned long cfg = 0;
  if (!parse_args(args, "acl.prof.destroy_subscribe_config", "k", &cfg)) return nullptr;
  return code_result(aclprofDestroySubscribeConfig(as_sub(cfg)));
}

PyObject* model_subscribe(PyObject*, PyObject* args) {
  unsigned int model = 0;
  unsigned long cfg = 0;
  if (!parse_args(args, "acl.prof.model_subscribe", "Ik", &model, &cfg)) return nullptr;
  return code_result(aclprofModelSubscribe(model, as_sub(cfg)));
}

PyObject* model_un_subscribe_as(PyObject* args, const char* name) {
  unsigned int model = 0;
  if (!parse_args(args, name, "I", &model)) return nullptr;
  return code_result_nogil([&] { return aclprofModelUnSubscribe(model); });
}
PyObject* model_un_subscribe(PyObject*, PyObject* args) {
  return model_un_subscribe_as(args, "acl.prof.model_un_subscribe");
}
PyObject* model_unsubscribe(PyObject*, PyObject* args) {
  return model_un_subscribe_as(args, "acl.prof.model_unsubscribe");
}

PyObject* get_op_desc_size(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.prof.get_op_desc_size")) return nullptr;
  size_t size = 0;
  const aclError ret = aclprofGetOpDescSize(&size);
  return Py_BuildValue("(ki)", static_cast<unsigned long>(size), ret);
}

PyObject* get_op_num(PyObject*, PyObject* args) {
  unsigned long buf = 0, len = 0;
  if (!parse_args(args, "acl.prof.get_op_num", "kk", &buf, &len)) return nullptr;
  uint32_t n = 0;
  const aclError ret = aclprofGetOpNum(as_buf(buf), len, &n);
  return Py_BuildValue("(Ii)", n, ret);
}

using LenFn = aclError (*)(const void*, size_t, uint32_t, size_t*);
using StrFn = aclError (*)(const void*, size_t, uint32_t, char*, size_t);

PyObject* string_len(PyObject* args, const char* name, LenFn fn) {
  unsigned long buf = 0, len = 0;
  unsigned int index = 0;
  if (!parse_args(args, name, "kkI", &buf, &len, &index)) return nullptr;
  size_t n = 0;
  const aclError ret = fn(as_buf(buf), len, index, &n);
  return Py_BuildValue("(ki)", static_cast<unsigned long>(n), ret);
}

PyObject* string_get(PyObject* args, const char* name, StrFn fn) {
  unsigned long buf = 0, len = 0, max_len = 0;
  unsigned int index = 0;
  if (!parse_args(args, name, "kkIk", &buf, &len, &index, &max_len)) return nullptr;
  if (max_len > kMaxOpStringLen) return str_result("", ACL_ERROR_INVALID_PARAM);  // pyACL's own check
  std::vector<char> out(max_len + 1, '\0');
  const aclError ret = fn(as_buf(buf), len, index, out.data(), max_len);
  return str_result(ret == ACL_SUCCESS ? std::string(out.data(), strnlen(out.data(), max_len)) : "", ret);
}

// *_v2: asks the length first, so the caller needs no buffer size.
PyObject* string_get_v2(PyObject* args, const char* name, LenFn len_fn, StrFn fn) {
  unsigned long buf = 0, len = 0;
  unsigned int index = 0;
  if (!parse_args(args, name, "kkI", &buf, &len, &index)) return nullptr;
  size_t n = 0;
  aclError ret = len_fn(as_buf(buf), len, index, &n);
  if (ret != ACL_SUCCESS) return Py_BuildValue("(Oi)", Py_None, ret);
  std::vector<char> out(n + 1, '\0');
  ret = fn(as_buf(buf), len, index, out.data(), n);
  if (ret != ACL_SUCCESS) return Py_BuildValue("(Oi)", Py_None, ret);
  return str_result(std::string(out.data(), strnlen(out.data(), n)), ret);
}

PyObject* get_op_type_len(PyObject*, PyObject* a) { return string_len(a, "acl.prof.get_op_type_len", aclprofGetOpTypeLen); }
PyObject* get_op_name_len(PyObject*, PyObject* a) { return string_len(a, "acl.prof.get_op_name_len", aclprofGetOpNameLen); }
PyObject* get_op_type(PyObject*, PyObject* a) { return string_get(a, "acl.prof.get_op_type", aclprofGetOpType); }
PyObject* get_op_name(PyObject*, PyObject* a) { return string_get(a, "acl.prof.get_op_name", aclprofGetOpName); }
PyObject* get_op_type_v2(PyObject*, PyObject* a) {
  return string_get_v2(a, "acl.prof.get_op_type_v2", aclprofGetOpTypeLen, aclprofGetOpType);
}
PyObject* get_op_name_v2(PyObject*, PyObject* a) {
  return string_get_v2(a, "acl.prof.get_op_name_v2", aclprofGetOpNameLen, aclprofGetOpName);
}

template <uint64_t (*Fn)(const void*, size_t, uint32_t)>
PyObject* time_getter(PyObject* args, const char* name) {
  unsigned long buf = 0, len = 0;
  unsigned int index = 0;
  if (!parse_args(args, name, "kkI", &buf, &len, &index)) return nullptr;
  return PyLong_FromUnsignedLongLong(Fn(as_buf(buf), len, index));
}
PyObject* get_op_start(PyObject*, PyObject* a) { return time_getter<aclprofGetOpStart>(a, "acl.prof.get_op_start"); }
PyObject* get_op_end(PyObject*, PyObject* a) { return time_getter<aclprofGetOpEnd>(a, "acl.prof.get_op_end"); }
PyObject* get_op_duration(PyObject*, PyObject* a) {
  return time_getter<aclprofGetOpDuration>(a, "acl.prof.get_op_duration");
}

PyObject* get_model_id(PyObject*, PyObject* args) {
  unsigned long buf = 0, len = 0;
  unsigned int index = 0;
  if (!parse_args(args, "acl.prof.get_model_id", "kkI", &buf, &len, &index)) return nullptr;
  return PyLong_FromSize_t(aclprofGetModelId(as_buf(buf), len, index));
}

// ---- msproftx ----

PyObject* create_stamp(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.prof.create_stamp")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclprofCreateStamp()));
}

PyObject* destroy_stamp(PyObject*, PyObject* args) {
  unsigned long stamp = 0;
  if (!parse_args(args, "acl.prof.destroy_stamp", "k", &stamp)) return nullptr;
  aclprofDestroyStamp(to_ptr(stamp));
  Py_RETURN_NONE;
}

PyObject* set_stamp_trace_message(PyObject*, PyObject* args) {
  unsigned long stamp = 0;
  const char* msg = nullptr;
  unsigned int len = 0;
  if (!parse_args(args, "acl.prof.set_stamp_trace_message", "ksI", &stamp, &msg, &len)) return nullptr;
  // The caller's length never reaches past the string Python holds.
  const size_t have = strlen(msg);
  return code_result(aclprofSetStampTraceMessage(to_ptr(stamp), msg, len < have ? len : static_cast<unsigned>(have)));
}

PyObject* mark(PyObject*, PyObject* args) {
  unsigned long stamp = 0;
  if (!parse_args(args, "acl.prof.mark", "k", &stamp)) return nullptr;
  return code_result(aclprofMark(to_ptr(stamp)));
}

PyObject* mark_ex(PyObject*, PyObject* args) {
  const char* msg = nullptr;
  unsigned long stream = 0;
  if (!parse_args(args, "acl.prof.mark_ex", "sk", &msg, &stream)) return nullptr;
  return code_result(aclprofMarkEx(msg, strlen(msg), to_ptr(stream)));
}

PyObject* push(PyObject*, PyObject* args) {
  unsigned long stamp = 0;
  if (!parse_args(args, "acl.prof.push", "k", &stamp)) return nullptr;
  return code_result(aclprofPush(to_ptr(stamp)));
}

PyObject* pop(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.prof.pop")) return nullptr;
  return code_result(aclprofPop());
}

PyObject* range_start(PyObject*, PyObject* args) {
  unsigned long stamp = 0;
  if (!parse_args(args, "acl.prof.range_start", "k", &stamp)) return nullptr;
  uint32_t id = 0;
  const aclError ret = aclprofRangeStart(to_ptr(stamp), &id);
  return Py_BuildValue("(Ii)", id, ret);
}

PyObject* range_stop(PyObject*, PyObject* args) {
  unsigned int id = 0;
  if (!parse_args(args, "acl.prof.range_stop", "I", &id)) return nullptr;
  return code_result(aclprofRangeStop(id));
}

// ---- step info ----

PyObject* create_step_info(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.prof.create_step_info")) return nullptr;
  return PyLong_FromUnsignedLong(from_ptr(aclprofCreateStepInfo()));
}

PyObject* destroy_step_info(PyObject*, PyObject* args) {
  unsigned long info = 0;
  if (!parse_args(args, "acl.prof.destroy_step_info", "k", &info)) return nullptr;
  aclprofDestroyStepInfo(static_cast<aclprofStepInfo*>(to_ptr(info)));
  Py_RETURN_NONE;
}

PyObject* get_step_timestamp(PyObject*, PyObject* args) {
  unsigned long info = 0, stream = 0;
  int tag = 0;
  if (!parse_args(args, "acl.prof.get_step_timestamp", "kik", &info, &tag, &stream)) return nullptr;
  return code_result(aclprofGetStepTimestamp(static_cast<aclprofStepInfo*>(to_ptr(info)),
                                             static_cast<aclprofStepTag>(tag), to_ptr(stream)));
}

}  // namespace

PyMethodDef kProfMethods[] = {
    {"init", init, METH_VARARGS, "init(result_path) -> ret"},
    {"finalize", finalize, METH_VARARGS, "finalize() -> ret"},
    {"create_config", create_config, METH_VARARGS,
     "create_config(device_ids: list, aicore_metrics, aicore_events (pass 0), data_type_config) -> config (0 on "
     "failure)"},
    {"destroy_config", destroy_config, METH_VARARGS, "destroy_config(config) -> ret"},
    {"start", start, METH_VARARGS, "start(config) -> ret"},
    {"stop", stop, METH_VARARGS, "stop(config) -> ret; writes one PROF_* folder"},
    {"set_config", set_config, METH_VARARGS, "set_config(config_type, value: str) -> ret"},
    {"create_subscribe_config", create_subscribe_config, METH_VARARGS,
     "create_subscribe_config(time_info_switch, aicore_metrics, write_fd) -> config (0 on failure)"},
    {"destroy_subscribe_config", destroy_subscribe_config, METH_VARARGS, "destroy_subscribe_config(config) -> ret"},
    {"model_subscribe", model_subscribe, METH_VARARGS, "model_subscribe(model_id, config) -> ret"},
    {"model_un_subscribe", model_un_subscribe, METH_VARARGS,
     "model_un_subscribe(model_id) -> ret; flushes and closes the pipe's write end"},
    {"model_unsubscribe", model_unsubscribe, METH_VARARGS, "model_unsubscribe(model_id) -> ret (alias)"},
    {"get_op_desc_size", get_op_desc_size, METH_VARARGS, "get_op_desc_size() -> (size, ret)"},
    {"get_op_num", get_op_num, METH_VARARGS, "get_op_num(buf_ptr, buf_len) -> (num, ret)"},
    {"get_op_type_len", get_op_type_len, METH_VARARGS, "get_op_type_len(buf_ptr, buf_len, index) -> (len, ret)"},
    {"get_op_name_len", get_op_name_len, METH_VARARGS, "get_op_name_len(buf_ptr, buf_len, index) -> (len, ret)"},
    {"get_op_type", get_op_type, METH_VARARGS,
     "get_op_type(buf_ptr, buf_len, index, max_len) -> (str, ret); each type can be read once"},
    {"get_op_name", get_op_name, METH_VARARGS,
     "get_op_name(buf_ptr, buf_len, index, max_len) -> (str, ret); each name can be read once"},
    {"get_op_type_v2", get_op_type_v2, METH_VARARGS, "get_op_type_v2(buf_ptr, buf_len, index) -> (str or None, ret)"},
    {"get_op_name_v2", get_op_name_v2, METH_VARARGS, "get_op_name_v2(buf_ptr, buf_len, index) -> (str or None, ret)"},
    {"get_op_start", get_op_start, METH_VARARGS, "get_op_start(buf_ptr, buf_len, index) -> int (us)"},
    {"get_op_end", get_op_end, METH_VARARGS, "get_op_end(buf_ptr, buf_len, index) -> int (us)"},
    {"get_op_duration", get_op_duration, METH_VARARGS, "get_op_duration(buf_ptr, buf_len, index) -> int (us)"},
    {"get_model_id", get_model_id, METH_VARARGS, "get_model_id(buf_ptr, buf_len, index) -> int"},
    {"create_step_info", create_step_info, METH_VARARGS, "create_step_info() -> handle (0 on failure)"},
    {"destroy_step_info", destroy_step_info, METH_VARARGS, "destroy_step_info(handle) -> None"},
    {"get_step_timestamp", get_step_timestamp, METH_VARARGS,
     "get_step_timestamp(handle, tag (0 start, 1 end), stream) -> ret"},
    {"create_stamp", create_stamp, METH_VARARGS, "create_stamp() -> stamp (0 on failure)"},
    {"destroy_stamp", destroy_stamp, METH_VARARGS, "destroy_stamp(stamp) -> None"},
    {"set_stamp_trace_message", set_stamp_trace_message, METH_VARARGS,
     "set_stamp_trace_message(stamp, msg, msg_len) -> ret"},
    {"mark", mark, METH_VARARGS, "mark(stamp) -> ret"},
    {"mark_ex", mark_ex, METH_VARARGS, "mark_ex(msg, stream) -> ret"},
    {"push", push, METH_VARARGS, "push(stamp) -> ret"},
    {"pop", pop, METH_VARARGS, "pop() -> ret"},
    {"range_start", range_start, METH_VARARGS, "range_start(stamp) -> (range_id, ret)"},
    {"range_stop", range_stop, METH_VARARGS, "range_stop(range_id) -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
