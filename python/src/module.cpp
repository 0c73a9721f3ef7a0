// PyInit_acl: the `acl` module and its submodules.
//
// pyACL is one extension module whose submodules are plain module objects
// created at import time; they are registered in sys.modules under their dotted
// names so that `import acl.rt` and `from acl import util` work as well as
// attribute access. No constants are exported (pyACL exports none).
#include "py_methods.h"

#include <initializer_list>

namespace openacl::python {
namespace {

PyModuleDef g_acl_def = {
    PyModuleDef_HEAD_INIT, "acl", "OpenACL: the AscendCL (pyACL) Python API.", -1, nullptr,
    nullptr, nullptr, nullptr, nullptr,
};
PyModuleDef g_rt_def = {
    PyModuleDef_HEAD_INIT, "acl.rt", "Runtime: devices, contexts, streams, events, memory, host callbacks.", -1,
    nullptr, nullptr, nullptr, nullptr, nullptr,
};
PyModuleDef g_mdl_def = {
    PyModuleDef_HEAD_INIT, "acl.mdl", "Models: load, describe, datasets, dynamic gears, execute.", -1, nullptr,
    nullptr, nullptr, nullptr, nullptr,
};
PyModuleDef g_op_def = {
    PyModuleDef_HEAD_INIT, "acl.op", "Single operators: attributes, execute, handles, shape inference, cast.", -1,
    nullptr, nullptr, nullptr, nullptr, nullptr,
};
PyModuleDef g_prof_def = {
    PyModuleDef_HEAD_INIT, "acl.prof", "Profiling: collection to files and the op-info subscription.", -1, nullptr,
    nullptr, nullptr, nullptr, nullptr,
};
PyModuleDef g_util_def = {
    PyModuleDef_HEAD_INIT, "acl.util", "Utilities: numpy/bytes <-> addresses, native threads.", -1, nullptr,
    nullptr, nullptr, nullptr, nullptr,
};

bool add_functions(PyObject* module, std::initializer_list<PyMethodDef*> tables) {
  for (PyMethodDef* table : tables) {
    if (PyModule_AddFunctions(module, table) < 0) return false;
  }
  return true;
}

// Creates `parent.<attr>` from def and the tables; returns false with an
// exception set.
bool add_submodule(PyObject* parent, PyModuleDef* def, const char* attr, std::initializer_list<PyMethodDef*> tables) {
  PyObject* sub = PyModule_Create(def);
  if (sub == nullptr) return false;
  if (!add_functions(sub, tables) || PyDict_SetItemString(PyImport_GetModuleDict(), def->m_name, sub) < 0) {
    Py_DECREF(sub);
    return false;
  }
  // PyModule_AddObject steals the reference only on success.
  if (PyModule_AddObject(parent, attr, sub) < 0) {
    Py_DECREF(sub);
    return false;
  }
  return true;
}

// After a failed import: no half-built submodule may stay in sys.modules.
void forget_submodules(std::initializer_list<PyModuleDef*> defs) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* error = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  PyObject* modules = PyImport_GetModuleDict();
  for (PyModuleDef* def : defs) {
    if (PyDict_DelItemString(modules, def->m_name) < 0) PyErr_Clear();
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(error);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

}  // namespace
}  // namespace openacl::python

PyMODINIT_FUNC PyInit_acl(void) {
  using namespace openacl::python;
  PyObject* acl = PyModule_Create(&g_acl_def);
  if (acl == nullptr) return nullptr;
  if (!add_functions(acl, {kAclMethods, kTensorDescMethods}) ||
      !add_submodule(acl, &g_rt_def, "rt", {kRtMethods, kRtMemoryMethods, kRtCallbackMethods}) ||
      !add_submodule(acl, &g_mdl_def, "mdl", {kMdlMethods}) ||
      !add_submodule(acl, &g_op_def, "op", {kOpMethods}) ||
      !add_submodule(acl, &g_prof_def, "prof", {kProfMethods}) ||
      !add_submodule(acl, &g_util_def, "util", {kUtilMethods, kUtilThreadMethods})) {
    forget_submodules({&g_rt_def, &g_mdl_def, &g_op_def, &g_prof_def, &g_util_def});
    Py_DECREF(acl);
    return nullptr;
  }
  return acl;
}
