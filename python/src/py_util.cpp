// acl.util: numpy arrays and bytes <-> raw addresses.
//
// numpy is used through ordinary Python calls, imported when first needed, so
// the module builds without numpy headers and imports without numpy at all.
// Texts of warnings and exceptions are pyACL's: scripts and tests match them.
#include <cstring>

#include "py_methods.h"

namespace openacl::python {
namespace {

constexpr size_t kReleaseGilCopyBytes = size_t{1} << 20;

// Owns one reference; keeps the error paths below free of decref ladders.
class Ref {
 public:
  explicit Ref(PyObject* obj = nullptr) : obj_(obj) {}
  ~Ref() { Py_XDECREF(obj_); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* get() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }

 private:
  PyObject* obj_;
};

bool warn(const char* message) {
  // stacklevel 1 points at the Python line that called us.
  return PyErr_WarnEx(PyExc_Warning, message, 1) == 0;
}

// 1: obj is a numpy.ndarray (or subclass), 0: it is not, -1: error.
// An object can only be an ndarray once numpy is imported, so this never
// imports numpy itself.
int is_ndarray(PyObject* obj) {
  PyObject* numpy = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
  if (numpy == nullptr || numpy == Py_None) return 0;
  Ref ndarray(PyObject_GetAttrString(numpy, "ndarray"));
  if (!ndarray) return -1;
  return PyObject_IsInstance(obj, ndarray.get());
}

// arr.flags.<name> as 1/0, -1 on error.
int array_flag(PyObject* arr, const char* name) {
  Ref flags(PyObject_GetAttrString(arr, "flags"));
  if (!flags) return -1;
  Ref value(PyObject_GetAttrString(flags.get(), name));
  if (!value) return -1;
  return PyObject_IsTrue(value.get());
}

// Address of the array's first element, from the array interface (what
// PyArray_BYTES gives C code).
bool array_address(PyObject* arr, unsigned long* address) {
  Ref iface(PyObject_GetAttrString(arr, "__array_interface__"));
  if (!iface) return false;
  PyObject* data = PyDict_Check(iface.get()) ? PyDict_GetItemString(iface.get(), "data") : nullptr;  // borrowed
  if (data != nullptr && PyTuple_Check(data) && PyTuple_GET_SIZE(data) >= 1 && PyLong_Check(PyTuple_GET_ITEM(data, 0))) {
    *address = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(data, 0));
    if (!PyErr_Occurred()) return true;
    PyErr_Clear();
  }
  PyErr_SetString(PyExc_ValueError, "convert numpy object to c pointer failed");
  return false;
}

// Parses the single ndarray argument shared by numpy_to_ptr and
// numpy_contiguous_to_ptr; returns a borrowed reference or NULL.
PyObject* ndarray_arg(PyObject* args, const char* name) {
  PyObject* arr = nullptr;
  if (!parse_args(args, name, "O", &arr)) return nullptr;
  const int is_array = is_ndarray(arr);
  if (is_array < 0) return nullptr;
  if (is_array == 0) {
    PyErr_SetString(PyExc_ValueError, "needs an ndarray as argument");
    return nullptr;
  }
  return arr;
}

PyObject* numpy_to_ptr(PyObject*, PyObject* args) {
  if (!warn("acl.util.numpy_to_ptr will be deprecated. Please use acl.util.bytes_to_ptr instead.")) return nullptr;
  PyObject* arr = ndarray_arg(args, "acl.util.numpy_to_ptr");
  if (arr == nullptr) return nullptr;
  const int contiguous = array_flag(arr, "c_contiguous");
  if (contiguous < 0) return nullptr;
  // The address is still returned: callers that copy with strides know why.
  if (contiguous == 0 &&
      !warn("The input ndarray is discontiguous. Please use acl.util.bytes_to_ptr instead.")) {
    return nullptr;
  }
  unsigned long address = 0;
  if (!array_address(arr, &address)) return nullptr;
  return PyLong_FromUnsignedLong(address);
}

PyObject* numpy_contiguous_to_ptr(PyObject*, PyObject* args) {
  if (!warn("acl.util.numpy_contiguous_to_ptr will be deprecated. Please use acl.util.bytes_to_ptr instead.")) {
    return nullptr;
  }
  PyObject* arr = ndarray_arg(args, "acl.util.numpy_contiguous_to_ptr");
  if (arr == nullptr) return nullptr;
  const int contiguous = array_flag(arr, "c_contiguous");
  const int aligned = contiguous > 0 ? array_flag(arr, "aligned") : 0;
  if (contiguous < 0 || aligned < 0) return nullptr;
  // Copy only when needed; unlike numpy.ascontiguousarray, copy() keeps 0-d
  // arrays 0-d.
  Ref result(contiguous && aligned ? (Py_INCREF(arr), arr) : PyObject_CallMethod(arr, "copy", "s", "C"));
  if (!result) return nullptr;
  unsigned long address = 0;
  if (!array_address(result.get(), &address)) return nullptr;
  return Py_BuildValue("(kO)", address, result.get());
}

// NumPy type numbers (NPY_TYPES) -> dtype character codes. Flexible and
// object types (17..22) have no fixed item size and cannot view raw memory.
const char* dtype_code(int npy_type) {
  static const char* const kCodes[] = {
      "?", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "f", "d", "g", "F", "D", "G",  // 0..16
  };
  constexpr int kNpyHalf = 23;
  if (npy_type >= 0 && npy_type < static_cast<int>(sizeof(kCodes) / sizeof(kCodes[0]))) return kCodes[npy_type];
  if (npy_type == kNpyHalf) return "e";
  return nullptr;
}

PyObject* ptr_to_numpy(PyObject*, PyObject* args) {
  if (!warn("acl.util.ptr_to_numpy will be deprecated. Please use acl.util.ptr_to_bytes instead.")) return nullptr;
  unsigned long ptr = 0;
  PyObject* shape = nullptr;
  int npy_type = 0;
  if (!parse_args(args, "acl.util.ptr_to_numpy", "kOi", &ptr, &shape, &npy_type)) return nullptr;
  if (!PyTuple_Check(shape)) {
    PyErr_SetString(PyExc_ValueError, "shape is empty");
    return nullptr;
  }
  // Dims are re-built as plain ints: numpy's reshape refuses bools, which
  // pyACL accepted as int subclasses.
  const Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
  Ref dims(PyTuple_New(ndim));
  if (!dims) return nullptr;
  size_t elements = 1;
  bool too_large = false;
  for (Py_ssize_t i = 0; i < ndim; ++i) {
    PyObject* item = PyTuple_GET_ITEM(shape, i);
    if (!PyLong_Check(item)) {
      PyErr_SetString(PyExc_TypeError, "the second argument is not list of int");
      return nullptr;
    }
    const Py_ssize_t dim = PyLong_AsSsize_t(item);
    if (dim < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "acl.util.ptr_to_numpy: shape[%zd] must be between 0 and %zd", i,
                   PY_SSIZE_T_MAX);
      return nullptr;
    }
    too_large |= __builtin_mul_overflow(elements, static_cast<size_t>(dim), &elements);
    PyObject* dim_obj = PyLong_FromSsize_t(dim);
    if (dim_obj == nullptr) return nullptr;
    PyTuple_SET_ITEM(dims.get(), i, dim_obj);  // steals dim_obj
  }
  const char* code = dtype_code(npy_type);
  if (code == nullptr) {
    PyErr_Format(PyExc_ValueError, "acl.util.ptr_to_numpy: unsupported numpy type number %d", npy_type);
    return nullptr;
  }

  Ref numpy(PyImport_ImportModule("numpy"));
  if (!numpy) return nullptr;
  Ref dtype(PyObject_CallMethod(numpy.get(), "dtype", "s", code));
  if (!dtype) return nullptr;
  Ref itemsize_obj(PyObject_GetAttrString(dtype.get(), "itemsize"));
  if (!itemsize_obj) return nullptr;
  const Py_ssize_t itemsize = PyLong_AsSsize_t(itemsize_obj.get());
  if (itemsize <= 0) return PyErr_Occurred() ? nullptr : PyErr_Format(PyExc_SystemError, "bad numpy itemsize");
  size_t bytes = 0;
  too_large |= __builtin_mul_overflow(elements, static_cast<size_t>(itemsize), &bytes);
  if (too_large || bytes > static_cast<size_t>(PY_SSIZE_T_MAX)) {
    PyErr_SetString(PyExc_ValueError, "acl.util.ptr_to_numpy: shape too large");
    return nullptr;
  }
  if (ptr == 0 && bytes > 0) {
    PyErr_SetString(PyExc_ValueError, "acl.util.ptr_to_numpy: ptr is 0 (NULL)");
    return nullptr;
  }

  // A writable view of foreign memory: the array neither copies nor owns it.
  static char empty[1];
  char* base = ptr != 0 ? static_cast<char*>(to_ptr(ptr)) : empty;
  Ref view(PyMemoryView_FromMemory(base, static_cast<Py_ssize_t>(bytes), PyBUF_WRITE));
  if (!view) return nullptr;
  Ref flat(PyObject_CallMethod(numpy.get(), "frombuffer", "OO", view.get(), dtype.get()));
  if (!flat) return nullptr;
  // "(O)": pass the shape tuple as one argument, even when it is empty.
  return PyObject_CallMethod(flat.get(), "reshape", "(O)", dims.get());
}

PyObject* bytes_to_ptr(PyObject*, PyObject* args) {
  PyObject* bytes = nullptr;
  if (!parse_args(args, "acl.util.bytes_to_ptr", "O", &bytes)) return nullptr;
  if (!PyBytes_Check(bytes)) {
    PyErr_SetString(PyExc_ValueError, "needs an byte as argument");
    return nullptr;
  }
  // The object's own storage: callers write through it (a D2H copy target).
  return PyLong_FromUnsignedLong(from_ptr(PyBytes_AS_STRING(bytes)));
}

PyObject* ptr_to_bytes(PyObject*, PyObject* args) {
  unsigned long ptr = 0, size = 0;
  if (!parse_args(args, "acl.util.ptr_to_bytes", "kk", &ptr, &size)) return nullptr;
  if (size > static_cast<unsigned long>(PY_SSIZE_T_MAX)) {
    PyErr_Format(PyExc_ValueError, "acl.util.ptr_to_bytes: size %lu is too large", size);
    return nullptr;
  }
  if (ptr == 0 && size > 0) {
    PyErr_SetString(PyExc_ValueError, "acl.util.ptr_to_bytes: ptr is 0 (NULL)");
    return nullptr;
  }
  PyObject* bytes = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
  if (bytes == nullptr) return nullptr;
  if (size >= kReleaseGilCopyBytes) {
    GilRelease nogil;
    std::memcpy(PyBytes_AS_STRING(bytes), to_ptr(ptr), size);
  } else if (size > 0) {
    std::memcpy(PyBytes_AS_STRING(bytes), to_ptr(ptr), size);
  }
  return bytes;
}

}  // namespace

PyMethodDef kUtilMethods[] = {
    {"numpy_to_ptr", numpy_to_ptr, METH_VARARGS,
     "numpy_to_ptr(array) -> address of the array's data (deprecated: use bytes_to_ptr)"},
    {"numpy_contiguous_to_ptr", numpy_contiguous_to_ptr, METH_VARARGS,
     "numpy_contiguous_to_ptr(array) -> (address, contiguous_array); keep contiguous_array alive"},
    {"ptr_to_numpy", ptr_to_numpy, METH_VARARGS,
     "ptr_to_numpy(ptr, shape_tuple, npy_type) -> writable ndarray viewing ptr (deprecated: use ptr_to_bytes)"},
    {"bytes_to_ptr", bytes_to_ptr, METH_VARARGS, "bytes_to_ptr(bytes) -> address of the object's buffer"},
    {"ptr_to_bytes", ptr_to_bytes, METH_VARARGS, "ptr_to_bytes(ptr, size) -> bytes (a copy)"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
