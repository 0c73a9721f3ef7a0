#include "py_common.h"

#include <cstdarg>
#include <cstring>

namespace openacl::python {

bool parse_args(PyObject* args, const char* name, const char* format, ...) {
  va_list va;
  va_start(va, format);
  const int ok = PyArg_VaParse(args, format, va);
  va_end(va);
  if (!ok) {
    // Replaces whatever PyArg_VaParse raised (TypeError, OverflowError, ValueError).
    PyErr_Format(PyExc_TypeError, "%s args parse failed", name);
    return false;
  }
  return true;
}

PyObject* str_or_none(const char* text) {
  if (text == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), "replace");
}

bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

namespace {

// str(exc) as UTF-8, or a placeholder when __str__ itself fails; never leaves
// an exception set.
std::string describe(PyObject* exc) {
  if (exc == nullptr) return "";
  PyObject* text = PyObject_Str(exc);
  if (text == nullptr) {
    PyErr_Clear();
    return "<exception str() failed>";
  }
  const char* utf8 = PyUnicode_AsUTF8(text);
  std::string out = utf8 != nullptr ? utf8 : "<exception str() failed>";
  if (utf8 == nullptr) PyErr_Clear();
  Py_DECREF(text);
  return out;
}

// Where the exception was raised: the innermost traceback entry, so the log
// line points at the user's code rather than at this file. Never raises.
struct Origin {
  std::string file = "python";
  unsigned line = 0;
};

Origin origin_of(PyObject* exc) {
  Origin origin;
  if (exc == nullptr) return origin;
  PyObject* tb = PyException_GetTraceback(exc);  // new reference or NULL
  while (tb != nullptr && tb != Py_None) {
    PyObject* next = PyObject_GetAttrString(tb, "tb_next");
    if (next == nullptr || next == Py_None) {
      Py_XDECREF(next);
      break;
    }
    Py_DECREF(tb);
    tb = next;
  }
  if (tb != nullptr && tb != Py_None) {
    PyObject* line = PyObject_GetAttrString(tb, "tb_lineno");
    if (line != nullptr && PyLong_Check(line)) origin.line = static_cast<unsigned>(PyLong_AsUnsignedLongMask(line));
    Py_XDECREF(line);
    PyObject* frame = PyObject_GetAttrString(tb, "tb_frame");
    PyObject* code = frame != nullptr ? PyObject_GetAttrString(frame, "f_code") : nullptr;
    PyObject* file = code != nullptr ? PyObject_GetAttrString(code, "co_filename") : nullptr;
    const char* utf8 = file != nullptr && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
    if (utf8 != nullptr) origin.file = utf8;
    Py_XDECREF(file);
    Py_XDECREF(code);
    Py_XDECREF(frame);
  }
  Py_XDECREF(tb);
  PyErr_Clear();
  return origin;
}

}  // namespace

std::string report_exception(aclLogLevel level, const char* where) {
  if (!PyErr_Occurred()) return "";
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exc = PyErr_GetRaisedException();
  const std::string type_name = Py_TYPE(exc)->tp_name;
  const std::string message = describe(exc);
  const Origin origin = origin_of(exc);
  aclAppLog(level, where, origin.file.c_str(), origin.line, "%s: Python callable raised %s: %s", where, type_name.c_str(),
            message.c_str());
  // Prints the traceback without going through sys.excepthook, which would
  // turn SystemExit into a process exit.
  PyErr_DisplayException(exc);
  Py_DECREF(exc);
#else
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != nullptr && value != nullptr) PyException_SetTraceback(value, traceback);
  const std::string type_name =
      value != nullptr ? Py_TYPE(value)->tp_name : (type != nullptr ? reinterpret_cast<PyTypeObject*>(type)->tp_name : "");
  const std::string message = describe(value);
  const Origin origin = origin_of(value);
  aclAppLog(level, where, origin.file.c_str(), origin.line, "%s: Python callable raised %s: %s", where, type_name.c_str(),
            message.c_str());
  if (type != nullptr) PyErr_Display(type, value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
#endif
  PyErr_Clear();  // in case displaying failed
  return type_name;
}

}  // namespace openacl::python
