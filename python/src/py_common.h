// Shared helpers of the `acl` extension module: argument parsing with pyACL's
// error text, GIL release, handle <-> int conversion, result building, and
// reporting of exceptions raised by Python callables run from native threads.
//
// The module sits on the public C API only (acl/acl.h); it never includes
// anything from src/.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>

#include "acl/acl.h"

namespace openacl::python {

// pyACL passes every handle and address as a C `unsigned long` (format `k`).
// That only round-trips pointers where long is pointer-sized (LP64).
static_assert(sizeof(unsigned long) == sizeof(void*), "handles travel as C unsigned long (LP64 only)");

// PyArg_ParseTuple, except that every failure (arity, type, overflow, embedded
// NUL) raises TypeError("<name> args parse failed"): scripts written for pyACL
// match on that one text. `name` is the full Python name, e.g. "acl.rt.malloc".
// Returns false with the exception set.
bool parse_args(PyObject* args, const char* name, const char* format, ...);
// For functions that take no arguments: any given is the same TypeError.
inline bool no_args(PyObject* args, const char* name) { return parse_args(args, name, ""); }

// Releases the GIL for the lifetime of the object. Used around every call that
// may block: besides letting other Python threads run, it is what keeps a
// waiting call from deadlocking against a host callback that needs the GIL.
class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease() { PyEval_RestoreThread(state_); }
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};

inline void* to_ptr(unsigned long value) { return reinterpret_cast<void*>(static_cast<uintptr_t>(value)); }
inline unsigned long from_ptr(const void* ptr) {
  return static_cast<unsigned long>(reinterpret_cast<uintptr_t>(ptr));
}

// Enum arguments arrive as plain ints and go to the C API unchanged (a
// static_cast to the enum type): range checking is the library's job, and it
// answers an unknown value with a code, which is what pyACL users get.

// `ret` alone: the C function only returns aclError.
inline PyObject* code_result(aclError ret) { return PyLong_FromLong(ret); }
// `(handle_or_address, ret)`.
inline PyObject* ptr_result(const void* ptr, aclError ret) { return Py_BuildValue("(ki)", from_ptr(ptr), ret); }
// Calls `call` (returning aclError) with the GIL released; `ret` alone as result.
template <class Call>
PyObject* code_result_nogil(Call&& call) {
  aclError ret;
  {
    GilRelease nogil;
    ret = call();
  }
  return code_result(ret);
}
// A C string from the library, None for NULL. Decoding errors are replaced
// rather than raised: a message must never turn into an exception.
PyObject* str_or_none(const char* text);

// True while Python can still run code. Native threads (stream workers, report
// threads) may outlive the interpreter; taking the GIL after finalisation
// would hang or kill such a thread.
bool interpreter_alive();

// With the GIL held and an exception set: logs it through aclAppLog at `level`
// (type name and message), prints the traceback to sys.stderr as an uncaught
// exception would be, and clears it. `where` names the Python API that ran the
// callable. Never raises, even SystemExit: a callback cannot end the process.
// Returns the exception type's name (tp_name), for callers that record it.
std::string report_exception(aclLogLevel level, const char* where);

}  // namespace openacl::python
