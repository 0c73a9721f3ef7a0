// acl.rt host callbacks: subscribe_report, unsubscribe_report, launch_callback,
// process_report.
//
// A Python callable queued with launch_callback holds strong references to fn
// and user_data in a record kept in a registry, under an id that never
// repeats; the id, not a pointer, is the userData given to the C API. The
// trampoline takes the record out of the registry and runs fn(user_data)
// exactly once, then drops the references. If the launch fails the launcher
// takes the record back at once.
//
// The registry exists for the calls that never come: the runtime drops queued
// callbacks at finalize (and with destroy_stream_force) without calling them.
// Once aclFinalize has returned, whatever is still registered can be released
// (release_pending_callbacks). Because the trampoline only looks ids up, a
// call that does arrive late finds nothing and does nothing: no double
// release, no use after free.
#include <mutex>
#include <unordered_map>

#include "py_methods.h"

namespace openacl::python {
namespace {

struct CallbackRecord {
  PyObject* fn;         // strong reference
  PyObject* user_data;  // strong reference (any object, None included)
};

std::mutex g_pending_mutex;
std::unordered_map<uintptr_t, CallbackRecord> g_pending;
uintptr_t g_next_id = 1;

bool take_pending(uintptr_t id, CallbackRecord* record) {
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  auto it = g_pending.find(id);
  if (it == g_pending.end()) return false;
  *record = it->second;
  g_pending.erase(it);
  return true;
}

// Runs in the thread subscribed to the stream, inside aclrtProcessReport,
// which that thread entered with the GIL released.
void callback_trampoline(void* user_data) {
  CallbackRecord record;
  if (!take_pending(reinterpret_cast<uintptr_t>(user_data), &record)) return;  // released at finalize
  // The references cannot be dropped without an interpreter; leaking them is
  // the only safe choice this late.
  if (!interpreter_alive()) return;
  const PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* result = PyObject_CallOneArg(record.fn, record.user_data);
  if (result == nullptr) {
    // Never propagates: the stream goes on, as it would on the NPU.
    report_exception(ACL_WARNING, "acl.rt.launch_callback");
  } else {
    Py_DECREF(result);
  }
  Py_DECREF(record.fn);
  Py_DECREF(record.user_data);
  PyGILState_Release(gil);
}

PyObject* subscribe_report(PyObject*, PyObject* args) {
  // `K`: thread ids are pthread_t values (acl.util.start_thread or
  // threading.get_ident()), unsigned 64-bit.
  unsigned long long thread_id = 0;
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.subscribe_report", "Kk", &thread_id, &stream)) return nullptr;
  return code_result(aclrtSubscribeReport(thread_id, to_ptr(stream)));
}

PyObject* unsubscribe_report(PyObject*, PyObject* args) {
  unsigned long long thread_id = 0;
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.unsubscribe_report", "Kk", &thread_id, &stream)) return nullptr;
  aclError ret;
  {
    GilRelease nogil;  // may wait for callbacks already handed to the thread
    ret = aclrtUnSubscribeReport(thread_id, to_ptr(stream));
  }
  return code_result(ret);
}

PyObject* launch_callback(PyObject*, PyObject* args) {
  PyObject* fn = nullptr;
  PyObject* user_data = nullptr;
  int block_type = 0;
  unsigned long stream = 0;
  if (!parse_args(args, "acl.rt.launch_callback", "OOik", &fn, &user_data, &block_type, &stream)) return nullptr;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "parameter must be callable");
    return nullptr;
  }
  uintptr_t id = 0;
  Py_INCREF(fn);
  Py_INCREF(user_data);
  try {
    std::lock_guard<std::mutex> lock(g_pending_mutex);
    id = g_next_id++;
    g_pending.emplace(id, CallbackRecord{fn, user_data});
  } catch (const std::bad_alloc&) {
    Py_DECREF(fn);
    Py_DECREF(user_data);
    return PyErr_NoMemory();
  }

  aclError ret;
  {
    // From here on the callback may already be running in the subscribed
    // thread; the record is only looked at again if the launch failed.
    GilRelease nogil;
    ret = aclrtLaunchCallback(callback_trampoline, reinterpret_cast<void*>(id),
                              static_cast<aclrtCallbackBlockType>(block_type), to_ptr(stream));
  }
  CallbackRecord record;
  if (ret != ACL_SUCCESS && take_pending(id, &record)) {
    Py_DECREF(record.fn);
    Py_DECREF(record.user_data);
  }
  return code_result(ret);
}

PyObject* process_report(PyObject*, PyObject* args) {
  int timeout = 0;
  if (!parse_args(args, "acl.rt.process_report", "i", &timeout)) return nullptr;
  aclError ret;
  {
    // Callbacks run in this thread during the wait and take the GIL themselves.
    GilRelease nogil;
    ret = aclrtProcessReport(timeout);
  }
  return code_result(ret);
}

}  // namespace

void release_pending_callbacks() {
  std::unordered_map<uintptr_t, CallbackRecord> orphans;
  {
    std::lock_guard<std::mutex> lock(g_pending_mutex);
    orphans.swap(g_pending);
  }
  // Decref outside the lock: a destructor may run Python code that launches.
  for (auto& [id, record] : orphans) {
    Py_DECREF(record.fn);
    Py_DECREF(record.user_data);
  }
}

PyMethodDef kRtCallbackMethods[] = {
    {"subscribe_report", subscribe_report, METH_VARARGS, "subscribe_report(thread_id, stream) -> ret"},
    {"unsubscribe_report", unsubscribe_report, METH_VARARGS, "unsubscribe_report(thread_id, stream) -> ret"},
    {"launch_callback", launch_callback, METH_VARARGS,
     "launch_callback(fn, user_data, block_type, stream) -> ret; fn(user_data) runs in the subscribed thread"},
    {"process_report", process_report, METH_VARARGS, "process_report(timeout_ms) -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
