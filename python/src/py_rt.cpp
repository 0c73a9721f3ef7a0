// acl.rt: devices, contexts, streams and events.
//
// Every call that can wait for queued work (synchronize_*, stream_wait_event,
// reset_device, destroy_stream/context) runs without the GIL: the work it waits
// for may include a host callback that needs the GIL to finish.
#include "py_methods.h"

namespace openacl::python {
namespace {

// ---- devices ----

PyObject* set_device(PyObject*, PyObject* args) {
  int device = 0;
  if (!parse_args(args, "acl.rt.set_device", "i", &device)) return nullptr;
  return code_result(aclrtSetDevice(device));
}

PyObject* reset_device(PyObject*, PyObject* args) {
  int device = 0;
  if (!parse_args(args, "acl.rt.reset_device", "i", &device)) return nullptr;
  return code_result_nogil([&] { return aclrtResetDevice(device); });
}

PyObject* reset_device_force(PyObject*, PyObject* args) {
  int device = 0;
  if (!parse_args(args, "acl.rt.reset_device_force", "i", &device)) return nullptr;
  return code_result_nogil([&] { return aclrtResetDeviceForce(device); });
}

PyObject* get_device(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.get_device")) return nullptr;
  int32_t device = 0;
  const aclError ret = aclrtGetDevice(&device);
  return Py_BuildValue("(ii)", device, ret);
}

PyObject* get_device_count(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.get_device_count")) return nullptr;
  uint32_t count = 0;
  const aclError ret = aclrtGetDeviceCount(&count);
  return Py_BuildValue("(Ii)", count, ret);
}

PyObject* get_run_mode(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.get_run_mode")) return nullptr;
  aclrtRunMode mode = ACL_HOST;
  const aclError ret = aclrtGetRunMode(&mode);
  return Py_BuildValue("(ii)", static_cast<int>(mode), ret);
}

PyObject* set_ts_device(PyObject*, PyObject* args) {
  int ts_id = 0;
  if (!parse_args(args, "acl.rt.set_ts_device", "i", &ts_id)) return nullptr;
  return code_result(aclrtSetTsDevice(static_cast<aclrtTsId>(ts_id)));
}

PyObject* synchronize_device(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.synchronize_device")) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeDevice(); });
}

PyObject* synchronize_device_with_timeout(PyObject*, PyObject* args) {
  int timeout = 0;
  if (!parse_args(args, "acl.rt.synchronize_device_with_timeout", "i", &timeout)) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeDeviceWithTimeout(timeout); });
}

PyObject* device_can_access_peer(PyObject*, PyObject* args) {
  int device = 0, peer = 0;
  if (!parse_args(args, "acl.rt.device_can_access_peer", "ii", &device, &peer)) return nullptr;
  int32_t can_access = 0;
  const aclError ret = aclrtDeviceCanAccessPeer(&can_access, device, peer);
  return Py_BuildValue("(ii)", can_access, ret);
}

PyObject* device_enable_peer_access(PyObject*, PyObject* args) {
  int peer = 0;
  unsigned int flags = 0;
  if (!parse_args(args, "acl.rt.device_enable_peer_access", "iI", &peer, &flags)) return nullptr;
  return code_result(aclrtDeviceEnablePeerAccess(peer, flags));
}

PyObject* device_disable_peer_access(PyObject*, PyObject* args) {
  int peer = 0;
  if (!parse_args(args, "acl.rt.device_disable_peer_access", "i", &peer)) return nullptr;
  return code_result(aclrtDeviceDisablePeerAccess(peer));
}

// ---- contexts ----

PyObject* create_context(PyObject*, PyObject* args) {
  int device = 0;
  if (!parse_args(args, "acl.rt.create_context", "i", &device)) return nullptr;
  aclrtContext context = nullptr;
  const aclError ret = aclrtCreateContext(&context, device);
  return ptr_result(context, ret);
}

PyObject* destroy_context(PyObject*, PyObject* args) {
  unsigned long context = 0;
  if (!parse_args(args, "acl.rt.destroy_context", "k", &context)) return nullptr;
  aclError ret;
  {
    GilRelease nogil;  // destroys the context's streams, which drain first
    ret = aclrtDestroyContext(to_ptr(context));
  }
  return code_result(ret);
}

PyObject* set_context(PyObject*, PyObject* args) {
  unsigned long context = 0;
  if (!parse_args(args, "acl.rt.set_context", "k", &context)) return nullptr;
  return code_result(aclrtSetCurrentContext(to_ptr(context)));
}

PyObject* get_context(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.get_context")) return nullptr;
  aclrtContext context = nullptr;
  const aclError ret = aclrtGetCurrentContext(&context);
  return ptr_result(context, ret);
}

// ---- streams ----

PyObject* create_stream(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.create_stream")) return nullptr;
  aclrtStream stream = nullptr;
  const aclError ret = aclrtCreateStream(&stream);
  return ptr_result(stream, ret);
}

PyObject* create_stream_with_config(PyObject*, PyObject* args) {
  // `I` masks like the C conversion to uint32_t; the library clamps priority.
  unsigned int priority = 0, flag = 0;
  if (!parse_args(args, "acl.rt.create_stream_with_config", "II", &priority, &flag)) return nullptr;
  aclrtStream stream = nullptr;
  const aclError ret = aclrtCreateStreamWithConfig(&stream, priority, flag);
  return ptr_result(stream, ret);
}

PyObject* destroy_stream(PyObject*, PyObject* args) {
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.destroy_stream", "k", &stream)) return nullptr;
  return code_result_nogil([&] { return aclrtDestroyStream(to_ptr(stream)); });
}

PyObject* destroy_stream_force(PyObject*, PyObject* args) {
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.destroy_stream_force", "k", &stream)) return nullptr;
  aclError ret;
  {
    GilRelease nogil;  // still waits for the task that is running
    ret = aclrtDestroyStreamForce(to_ptr(stream));
  }
  return code_result(ret);
}

PyObject* synchronize_stream(PyObject*, PyObject* args) {
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.synchronize_stream", "k", &stream)) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeStream(to_ptr(stream)); });
}

PyObject* synchronize_stream_with_timeout(PyObject*, PyObject* args) {
  unsigned long stream = 0;
  int timeout = 0;
  if (!parse_args(args, "acl.rt.synchronize_stream_with_timeout", "ki", &stream, &timeout)) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeStreamWithTimeout(to_ptr(stream), timeout); });
}

PyObject* stream_query(PyObject*, PyObject* args) {
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.stream_query", "k", &stream)) return nullptr;
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  const aclError ret = aclrtStreamQuery(to_ptr(stream), &status);
  return Py_BuildValue("(ii)", static_cast<int>(status), ret);
}

PyObject* stream_wait_event(PyObject*, PyObject* args) {
  unsigned long stream = 0, event = 0;
  if (!parse_args(args, "acl.rt.stream_wait_event", "kk", &stream, &event)) return nullptr;
  return code_result_nogil([&] { return aclrtStreamWaitEvent(to_ptr(stream), to_ptr(event)); });
}

// ---- events ----

PyObject* create_event(PyObject*, PyObject* args) {
  if (!no_args(args, "acl.rt.create_event")) return nullptr;
  aclrtEvent event = nullptr;
  const aclError ret = aclrtCreateEvent(&event);
  return ptr_result(event, ret);
}

PyObject* create_event_with_flag(PyObject*, PyObject* args) {
  unsigned int flag = 0;
  if (!parse_args(args, "acl.rt.create_event_with_flag", "I", &flag)) return nullptr;
  aclrtEvent event = nullptr;
  const aclError ret = aclrtCreateEventWithFlag(&event, flag);
  return ptr_result(event, ret);
}

PyObject* create_event_ex_with_flag(PyObject*, PyObject* args) {
  unsigned int flag = 0;
  if (!parse_args(args, "acl.rt.create_event_ex_with_flag", "I", &flag)) return nullptr;
  aclrtEvent event = nullptr;
  const aclError ret = aclrtCreateEventExWithFlag(&event, flag);
  return ptr_result(event, ret);
}

PyObject* destroy_event(PyObject*, PyObject* args) {
  unsigned long event = 0;
  if (!parse_args(args, "acl.rt.destroy_event", "k", &event)) return nullptr;
  return code_result(aclrtDestroyEvent(to_ptr(event)));
}

PyObject* record_event(PyObject*, PyObject* args) {
  unsigned long event = 0, stream = 0;
  if (!parse_args(args, "acl.rt.record_event", "kk", &event, &stream)) return nullptr;
  return code_result(aclrtRecordEvent(to_ptr(event), to_ptr(stream)));
}

PyObject* reset_event(PyObject*, PyObject* args) {
  unsigned long event = 0, stream = 0;
  if (!parse_args(args, "acl.rt.reset_event", "kk", &event, &stream)) return nullptr;
  return code_result(aclrtResetEvent(to_ptr(event), to_ptr(stream)));
}

PyObject* query_event(PyObject*, PyObject* args) {
  unsigned long event = 0;
  if (!parse_args(args, "acl.rt.query_event", "k", &event)) return nullptr;
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  // Deprecated in the C API, but part of the Python surface we reproduce.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const aclError ret = aclrtQueryEvent(to_ptr(event), &status);
#pragma GCC diagnostic pop
  return Py_BuildValue("(ii)", static_cast<int>(status), ret);
}

PyObject* query_event_status(PyObject*, PyObject* args) {
  unsigned long event = 0;
  if (!parse_args(args, "acl.rt.query_event_status", "k", &event)) return nullptr;
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  const aclError ret = aclrtQueryEventStatus(to_ptr(event), &status);
  return Py_BuildValue("(ii)", static_cast<int>(status), ret);
}

PyObject* query_event_wait_status(PyObject*, PyObject* args) {
  unsigned long event = 0;
  if (!parse_args(args, "acl.rt.query_event_wait_status", "k", &event)) return nullptr;
  aclrtEventWaitStatus status = ACL_EVENT_WAIT_STATUS_RESERVED;
  const aclError ret = aclrtQueryEventWaitStatus(to_ptr(event), &status);
  return Py_BuildValue("(ii)", static_cast<int>(status), ret);
}

PyObject* synchronize_event(PyObject*, PyObject* args) {
  unsigned long event = 0;
  if (!parse_args(args, "acl.rt.synchronize_event", "k", &event)) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeEvent(to_ptr(event)); });
}

PyObject* synchronize_event_with_timeout(PyObject*, PyObject* args) {
  unsigned long event = 0;
  int timeout = 0;
  if (!parse_args(args, "acl.rt.synchronize_event_with_timeout", "ki", &event, &timeout)) return nullptr;
  return code_result_nogil([&] { return aclrtSynchronizeEventWithTimeout(to_ptr(event), timeout); });
}

PyObject* event_elapsed_time(PyObject*, PyObject* args) {
  unsigned long start = 0, end = 0;
  if (!parse_args(args, "acl.rt.event_elapsed_time", "kk", &start, &end)) return nullptr;
  float ms = 0.0f;
  const aclError ret = aclrtEventElapsedTime(&ms, to_ptr(start), to_ptr(end));
  return Py_BuildValue("(di)", static_cast<double>(ms), ret);
}

PyObject* set_op_wait_timeout(PyObject*, PyObject* args) {
  unsigned int timeout = 0;
  if (!parse_args(args, "acl.rt.set_op_wait_timeout", "I", &timeout)) return nullptr;
  return code_result(aclrtSetOpWaitTimeout(timeout));
}

}  // namespace

PyMethodDef kRtMethods[] = {
    {"set_device", set_device, METH_VARARGS, "set_device(device_id) -> ret"},
    {"reset_device", reset_device, METH_VARARGS, "reset_device(device_id) -> ret"},
    {"reset_device_force", reset_device_force, METH_VARARGS, "reset_device_force(device_id) -> ret"},
    {"get_device", get_device, METH_VARARGS, "get_device() -> (device_id, ret)"},
    {"get_device_count", get_device_count, METH_VARARGS, "get_device_count() -> (count, ret)"},
    {"get_run_mode", get_run_mode, METH_VARARGS, "get_run_mode() -> (run_mode, ret)"},
    {"set_ts_device", set_ts_device, METH_VARARGS, "set_ts_device(ts_id) -> ret"},
    {"synchronize_device", synchronize_device, METH_VARARGS, "synchronize_device() -> ret"},
    {"synchronize_device_with_timeout", synchronize_device_with_timeout, METH_VARARGS,
     "synchronize_device_with_timeout(timeout_ms) -> ret"},
    {"device_can_access_peer", device_can_access_peer, METH_VARARGS,
     "device_can_access_peer(device_id, peer_device_id) -> (can_access, ret)"},
    {"device_enable_peer_access", device_enable_peer_access, METH_VARARGS,
     "device_enable_peer_access(peer_device_id, flags) -> ret"},
    {"device_disable_peer_access", device_disable_peer_access, METH_VARARGS,
     "device_disable_peer_access(peer_device_id) -> ret"},
    {"create_context", create_context, METH_VARARGS, "create_context(device_id) -> (context, ret)"},
    {"destroy_context", destroy_context, METH_VARARGS, "destroy_context(context) -> ret"},
    {"set_context", set_context, METH_VARARGS, "set_context(context) -> ret"},
    {"get_context", get_context, METH_VARARGS, "get_context() -> (context, ret)"},
    {"create_stream", create_stream, METH_VARARGS, "create_stream() -> (stream, ret)"},
    {"create_stream_with_config", create_stream_with_config, METH_VARARGS,
     "create_stream_with_config(priority, flag) -> (stream, ret)"},
    {"destroy_stream", destroy_stream, METH_VARARGS, "destroy_stream(stream) -> ret"},
    {"destroy_stream_force", destroy_stream_force, METH_VARARGS, "destroy_stream_force(stream) -> ret"},
    {"synchronize_stream", synchronize_stream, METH_VARARGS, "synchronize_stream(stream) -> ret"},
    {"synchronize_stream_with_timeout", synchronize_stream_with_timeout, METH_VARARGS,
     "synchronize_stream_with_timeout(stream, timeout_ms) -> ret"},
    {"stream_query", stream_query, METH_VARARGS, "stream_query(stream) -> (status, ret)"},
    {"stream_wait_event", stream_wait_event, METH_VARARGS, "stream_wait_event(stream, event) -> ret"},
    {"create_event", create_event, METH_VARARGS, "create_event() -> (event, ret)"},
    {"create_event_with_flag", create_event_with_flag, METH_VARARGS, "create_event_with_flag(flag) -> (event, ret)"},
    {"create_event_ex_with_flag", create_event_ex_with_flag, METH_VARARGS,
     "create_event_ex_with_flag(flag) -> (event, ret)"},
    {"destroy_event", destroy_event, METH_VARARGS, "destroy_event(event) -> ret"},
    {"record_event", record_event, METH_VARARGS, "record_event(event, stream) -> ret"},
    {"reset_event", reset_event, METH_VARARGS, "reset_event(event, stream) -> ret"},
    {"query_event", query_event, METH_VARARGS,
     "query_event(event) -> (status, ret); deprecated: COMPLETE=0, NOT_READY=1, use query_event_status"},
    {"query_event_status", query_event_status, METH_VARARGS,
     "query_event_status(event) -> (status, ret); NOT_READY=0, COMPLETE=1"},
    {"query_event_wait_status", query_event_wait_status, METH_VARARGS,
     "query_event_wait_status(event) -> (status, ret); COMPLETE=0, NOT_READY=1"},
    {"synchronize_event", synchronize_event, METH_VARARGS, "synchronize_event(event) -> ret"},
    {"synchronize_event_with_timeout", synchronize_event_with_timeout, METH_VARARGS,
     "synchronize_event_with_timeout(event, timeout_ms) -> ret"},
    {"event_elapsed_time", event_elapsed_time, METH_VARARGS, "event_elapsed_time(start, end) -> (ms, ret)"},
    {"set_op_wait_timeout", set_op_wait_timeout, METH_VARARGS, "set_op_wait_timeout(timeout_s) -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
