// acl.rt memory: allocation, copies, fills, cache maintenance.
//
// Copies and fills run without the GIL, the asynchronous ones too: a
// synchronous copy can be large, and an "async" one may wait for the stream
// (pageable host memory), possibly behind a host callback that needs the GIL.
#include "py_methods.h"

namespace openacl::python {
namespace {

using MallocFn = aclError (*)(void**, size_t, aclrtMemMallocPolicy);

PyObject* malloc_with(MallocFn fn, const char* name, PyObject* args) {
  unsigned long size = 0;
  int policy = 0;
  if (!parse_args(args, name, "ki", &size, &policy)) return nullptr;
  void* ptr = nullptr;
  const aclError ret = fn(&ptr, size, static_cast<aclrtMemMallocPolicy>(policy));
  return ptr_result(ptr, ret);
}

PyObject* rt_malloc(PyObject*, PyObject* args) { return malloc_with(aclrtMalloc, "acl.rt.malloc", args); }

PyObject* rt_malloc_align32(PyObject*, PyObject* args) {
  return malloc_with(aclrtMallocAlign32, "acl.rt.malloc_align32", args);
}

PyObject* rt_malloc_cached(PyObject*, PyObject* args) {
  return malloc_with(aclrtMallocCached, "acl.rt.malloc_cached", args);
}

PyObject* rt_free(PyObject*, PyObject* args) {
  unsigned long ptr = 0;
  if (!parse_args(args, "acl.rt.free", "k", &ptr)) return nullptr;
  return code_result(aclrtFree(to_ptr(ptr)));
}

PyObject* malloc_host(PyObject*, PyObject* args) {
  unsigned long size = 0;
  if (!parse_args(args, "acl.rt.malloc_host", "k", &size)) return nullptr;
  void* ptr = nullptr;
  const aclError ret = aclrtMallocHost(&ptr, size);
  return ptr_result(ptr, ret);
}

PyObject* free_host(PyObject*, PyObject* args) {
  unsigned long ptr = 0;
  if (!parse_args(args, "acl.rt.free_host", "k", &ptr)) return nullptr;
  return code_result(aclrtFreeHost(to_ptr(ptr)));
}

PyObject* rt_memcpy(PyObject*, PyObject* args) {
  unsigned long dst = 0, dest_max = 0, src = 0, count = 0;
  int kind = 0;
  if (!parse_args(args, "acl.rt.memcpy", "kkkki", &dst, &dest_max, &src, &count, &kind)) return nullptr;
  return code_result_nogil([&] { return aclrtMemcpy(to_ptr(dst), dest_max, to_ptr(src), count, static_cast<aclrtMemcpyKind>(kind)); });
}

PyObject* memcpy_async(PyObject*, PyObject* args) {
  unsigned long dst = 0, dest_max = 0, src = 0, count = 0, stream = 0;
  int kind = 0;
  if (!parse_args(args, "acl.rt.memcpy_async", "kkkkik", &dst, &dest_max, &src, &count, &kind, &stream)) {
    return nullptr;
  }
  return code_result_nogil([&] { return aclrtMemcpyAsync(to_ptr(dst), dest_max, to_ptr(src), count, static_cast<aclrtMemcpyKind>(kind),
                           to_ptr(stream)); });
}

PyObject* memcpy2d(PyObject*, PyObject* args) {
  unsigned long dst = 0, dpitch = 0, src = 0, spitch = 0, width = 0, height = 0;
  int kind = 0;
  if (!parse_args(args, "acl.rt.memcpy2d", "kkkkkki", &dst, &dpitch, &src, &spitch, &width, &height, &kind)) {
    return nullptr;
  }
  return code_result_nogil([&] { return aclrtMemcpy2d(to_ptr(dst), dpitch, to_ptr(src), spitch, width, height, static_cast<aclrtMemcpyKind>(kind)); });
}

PyObject* memcpy2d_async(PyObject*, PyObject* args) {
  unsigned long dst = 0, dpitch = 0, src = 0, spitch = 0, width = 0, height = 0, stream = 0;
  int kind = 0;
  if (!parse_args(args, "acl.rt.memcpy2d_async", "kkkkkkik", &dst, &dpitch, &src, &spitch, &width, &height, &kind,
                  &stream)) {
    return nullptr;
  }
  return code_result_nogil([&] { return aclrtMemcpy2dAsync(to_ptr(dst), dpitch, to_ptr(src), spitch, width, height,
                             static_cast<aclrtMemcpyKind>(kind), to_ptr(stream)); });
}

PyObject* rt_memset(PyObject*, PyObject* args) {
  unsigned long ptr = 0, max_count = 0, count = 0;
  int value = 0;
  if (!parse_args(args, "acl.rt.memset", "kkik", &ptr, &max_count, &value, &count)) return nullptr;
  return code_result_nogil([&] { return aclrtMemset(to_ptr(ptr), max_count, value, count); });
}

PyObject* memset_async(PyObject*, PyObject* args) {
  unsigned long ptr = 0, max_count = 0, count = 0, stream = 0;
  int value = 0;
  if (!parse_args(args, "acl.rt.memset_async", "kkikk", &ptr, &max_count, &value, &count, &stream)) return nullptr;
  return code_result_nogil([&] { return aclrtMemsetAsync(to_ptr(ptr), max_count, value, count, to_ptr(stream)); });
}

PyObject* get_mem_info(PyObject*, PyObject* args) {
  int attr = 0;
  if (!parse_args(args, "acl.rt.get_mem_info", "i", &attr)) return nullptr;
  size_t free_bytes = 0, total_bytes = 0;
  const aclError ret = aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr), &free_bytes, &total_bytes);
  return Py_BuildValue("(kki)", static_cast<unsigned long>(free_bytes), static_cast<unsigned long>(total_bytes), ret);
}

PyObject* mem_flush(PyObject*, PyObject* args) {
  unsigned long ptr = 0, size = 0;
  if (!parse_args(args, "acl.rt.mem_flush", "kk", &ptr, &size)) return nullptr;
  return code_result(aclrtMemFlush(to_ptr(ptr), size));
}

PyObject* mem_invalidate(PyObject*, PyObject* args) {
  unsigned long ptr = 0, size = 0;
  if (!parse_args(args, "acl.rt.mem_invalidate", "kk", &ptr, &size)) return nullptr;
  return code_result(aclrtMemInvalidate(to_ptr(ptr), size));
}

}  // namespace

PyMethodDef kRtMemoryMethods[] = {
    {"malloc", rt_malloc, METH_VARARGS, "malloc(size, policy) -> (dev_ptr, ret)"},
    {"malloc_align32", rt_malloc_align32, METH_VARARGS, "malloc_align32(size, policy) -> (dev_ptr, ret)"},
    {"malloc_cached", rt_malloc_cached, METH_VARARGS, "malloc_cached(size, policy) -> (dev_ptr, ret)"},
    {"free", rt_free, METH_VARARGS, "free(dev_ptr) -> ret"},
    {"malloc_host", malloc_host, METH_VARARGS, "malloc_host(size) -> (host_ptr, ret)"},
    {"free_host", free_host, METH_VARARGS, "free_host(host_ptr) -> ret"},
    {"memcpy", rt_memcpy, METH_VARARGS, "memcpy(dst, dest_max, src, count, kind) -> ret"},
    {"memcpy_async", memcpy_async, METH_VARARGS, "memcpy_async(dst, dest_max, src, count, kind, stream) -> ret"},
    {"memcpy2d", memcpy2d, METH_VARARGS, "memcpy2d(dst, dpitch, src, spitch, width, height, kind) -> ret"},
    {"memcpy2d_async", memcpy2d_async, METH_VARARGS,
     "memcpy2d_async(dst, dpitch, src, spitch, width, height, kind, stream) -> ret"},
    {"memset", rt_memset, METH_VARARGS, "memset(dev_ptr, max_count, value, count) -> ret"},
    {"memset_async", memset_async, METH_VARARGS, "memset_async(dev_ptr, max_count, value, count, stream) -> ret"},
    {"get_mem_info", get_mem_info, METH_VARARGS, "get_mem_info(attr) -> (free, total, ret)"},
    {"mem_flush", mem_flush, METH_VARARGS, "mem_flush(dev_ptr, size) -> ret"},
    {"mem_invalidate", mem_invalidate, METH_VARARGS, "mem_invalidate(dev_ptr, size) -> ret"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
