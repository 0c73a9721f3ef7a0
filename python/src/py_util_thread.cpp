// acl.util.start_thread / stop_thread: native threads running a Python
// callable, whose pthread ids can be given to acl.rt.subscribe_report.
//
// Each started thread has a record, owned by a registry keyed by its id until
// stop_thread joins it. The thread itself only reads fn/args and writes the
// name of the exception fn raised; pthread_join orders that write before
// stop_thread reads it. Removing the record before joining makes a thread
// joinable exactly once, and an id that is not in the registry is answered
// with ESRCH instead of being handed to pthread_join (undefined behaviour).
#include <pthread.h>

#include <cerrno>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "py_methods.h"

namespace openacl::python {
namespace {

static_assert(sizeof(pthread_t) <= sizeof(unsigned long long), "pthread_t must fit the 64-bit thread id");

struct ThreadRecord {
  PyObject* fn = nullptr;    // strong reference, dropped by the thread
  PyObject* args = nullptr;  // strong reference (None: call fn()), dropped by the thread
  std::string error_type;    // tp_name of the exception fn raised; empty if none
};

std::mutex g_threads_mutex;
std::unordered_map<unsigned long long, std::unique_ptr<ThreadRecord>> g_threads;

unsigned long long thread_key(pthread_t tid) { return static_cast<unsigned long long>(tid); }

void* thread_main(void* raw) {
  auto* record = static_cast<ThreadRecord*>(raw);
  if (!interpreter_alive()) return nullptr;  // started during shutdown: nothing can run
  const PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* result =
      record->args == Py_None ? PyObject_CallNoArgs(record->fn) : PyObject_CallOneArg(record->fn, record->args);
  if (result == nullptr) {
    record->error_type = report_exception(ACL_ERROR, "acl.util.start_thread");
  } else {
    Py_DECREF(result);
  }
  Py_CLEAR(record->fn);
  Py_CLEAR(record->args);
  PyGILState_Release(gil);
  return nullptr;
}

PyObject* start_thread(PyObject*, PyObject* args) {
  PyObject* fn = nullptr;
  PyObject* fn_args = nullptr;
  if (!parse_args(args, "acl.util.start_thread", "OO", &fn, &fn_args)) return nullptr;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "parameter must be callable");
    return nullptr;
  }
  std::unique_ptr<ThreadRecord> record(new (std::nothrow) ThreadRecord);
  if (!record) return PyErr_NoMemory();
  Py_INCREF(fn);
  Py_INCREF(fn_args);
  record->fn = fn;
  record->args = fn_args;

  pthread_t tid{};
  int err = 0;
  {
    // The new thread's first act is to take the GIL; creating it without the
    // GIL lets it start at once.
    GilRelease nogil;
    err = pthread_create(&tid, nullptr, thread_main, record.get());
    if (err == 0) {
      try {
        std::lock_guard<std::mutex> lock(g_threads_mutex);
        g_threads[thread_key(tid)] = std::move(record);
      } catch (...) {
        // Out of memory for the registry: the thread runs on, unjoinable;
        // it still uses the record, which is therefore leaked on purpose.
        pthread_detach(tid);
        record.release();
      }
    }
  }
  if (err != 0) {
    // The thread never started: the references are still ours to drop.
    Py_DECREF(record->fn);
    Py_DECREF(record->args);
    return Py_BuildValue("(Ki)", 0ULL, err);
  }
  return Py_BuildValue("(Ki)", thread_key(tid), err);
}

PyObject* stop_thread(PyObject*, PyObject* args) {
  unsigned long long key = 0;
  if (!parse_args(args, "acl.util.stop_thread", "K", &key)) return nullptr;
  if (key == thread_key(pthread_self())) return PyLong_FromLong(EDEADLK);  // a thread cannot join itself

  std::unique_ptr<ThreadRecord> record;
  {
    std::lock_guard<std::mutex> lock(g_threads_mutex);
    auto it = g_threads.find(key);
    if (it == g_threads.end()) return PyLong_FromLong(ESRCH);  // never started here, or already stopped
    record = std::move(it->second);
    g_threads.erase(it);
  }
  int err = 0;
  {
    GilRelease nogil;  // the thread needs the GIL to finish
    err = pthread_join(static_cast<pthread_t>(key), nullptr);
  }
  if (err != 0) {
    // Not joined, so the thread may still use its record.
    record.release();
    return PyLong_FromLong(err);
  }
  if (!record->error_type.empty()) {
    PyErr_Format(PyExc_RuntimeError, "exception=%s,msg=thread call failed;", record->error_type.c_str());
    return nullptr;
  }
  return PyLong_FromLong(err);
}

}  // namespace

PyMethodDef kUtilThreadMethods[] = {
    {"start_thread", start_thread, METH_VARARGS,
     "start_thread(fn, args) -> (thread_id, err); runs fn(args) (fn() when args is None) in a native thread"},
    {"stop_thread", stop_thread, METH_VARARGS,
     "stop_thread(thread_id) -> join result; raises RuntimeError if fn raised"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
