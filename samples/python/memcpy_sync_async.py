#!/usr/bin/env python3
"""Synchronous and asynchronous copies between host and device and within a
device, with host buffers of every kind pyACL programs use: numpy arrays
(arr.ctypes.data), immutable bytes (acl.util.bytes_to_ptr) and pinned memory
(acl.rt.malloc_host). Every result is checked with numpy.

    PYTHONPATH=build/python python3 samples/python/memcpy_sync_async.py
"""
import sys

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_MEMCPY_DEFAULT = 4

DEVICE_ID = 0
ROWS, COLS = 256, 512                    # a 256 x 512 float32 image, 512 KiB


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def verify(what, got, expected):
    if not np.array_equal(got, expected):
        bad = int(np.count_nonzero(got != expected))
        raise SampleError(f"{what}: {bad} element(s) differ")
    print(f"  {what:<52} verified")


def run(res):
    check_ret("acl.init", acl.init())
    res.append(("finalize", None))
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    res.append(("reset_device", DEVICE_ID))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    res.append(("destroy_stream", stream))

    image = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) / 7.0
    nbytes = image.nbytes

    def dev_malloc(size):
        ptr, r = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", r)
        res.append(("free", ptr))
        return ptr

    dev_a = dev_malloc(nbytes)
    dev_b = dev_malloc(nbytes)
    dev_c = dev_malloc(nbytes)

    print("synchronous copies (acl.rt.memcpy)")
    check_ret("memcpy H2D", acl.rt.memcpy(dev_a, nbytes, image.ctypes.data, nbytes,
                                          ACL_MEMCPY_HOST_TO_DEVICE))
    check_ret("memcpy D2D", acl.rt.memcpy(dev_b, nbytes, dev_a, nbytes, ACL_MEMCPY_DEVICE_TO_DEVICE))
    # an immutable bytes object as the D2H target, read back with np.frombuffer
    out_bytes = bytes(nbytes)
    out_ptr = acl.util.bytes_to_ptr(out_bytes)
    check_ret("memcpy D2H", acl.rt.memcpy(out_ptr, nbytes, dev_b, nbytes, ACL_MEMCPY_DEVICE_TO_HOST))
    verify("numpy -> device -> device -> bytes", np.frombuffer(out_bytes, np.float32).reshape(ROWS, COLS),
           image)

    # bytes as a source, and direction inferred with ACL_MEMCPY_DEFAULT
    payload = np.full(COLS, 3.25, np.float32).tobytes()
    check_ret("memcpy DEFAULT (bytes -> device row 5)",
              acl.rt.memcpy(dev_b + 5 * COLS * 4, COLS * 4, acl.util.bytes_to_ptr(payload), len(payload),
                            ACL_MEMCPY_DEFAULT))
    row = np.zeros(COLS, np.float32)
    check_ret("memcpy DEFAULT (device row 5 -> numpy)",
              acl.rt.memcpy(row.ctypes.data, row.nbytes, dev_b + 5 * COLS * 4, row.nbytes, ACL_MEMCPY_DEFAULT))
    verify("bytes -> device row 5 -> numpy (pointer arithmetic)", row, np.full(COLS, 3.25, np.float32))

    # host to host into pinned memory
    pinned, ret = acl.rt.malloc_host(nbytes)
    check_ret("acl.rt.malloc_host", ret)
    res.append(("free_host", pinned))
    check_ret("memcpy H2H (numpy -> pinned)", acl.rt.memcpy(pinned, nbytes, image.ctypes.data, nbytes,
                                                            ACL_MEMCPY_HOST_TO_HOST))
    verify("numpy -> pinned host (ptr_to_bytes)",
           np.frombuffer(acl.util.ptr_to_bytes(pinned, nbytes), np.float32).reshape(ROWS, COLS), image)

    print("asynchronous copies on a stream (acl.rt.memcpy_async, memset_async, memcpy2d_async)")
    result = np.zeros((ROWS, COLS), np.float32)
    check_ret("memset_async", acl.rt.memset_async(dev_c, nbytes, 0, nbytes, stream))
    check_ret("memcpy_async H2D (pinned)", acl.rt.memcpy_async(dev_c, nbytes, pinned, nbytes,
                                                               ACL_MEMCPY_HOST_TO_DEVICE, stream))
    check_ret("memcpy_async D2D", acl.rt.memcpy_async(dev_a, nbytes, dev_c, nbytes,
                                                      ACL_MEMCPY_DEVICE_TO_DEVICE, stream))
    check_ret("memcpy_async D2H", acl.rt.memcpy_async(result.ctypes.data, nbytes, dev_a, nbytes,
                                                      ACL_MEMCPY_DEVICE_TO_HOST, stream))
    check_ret("synchronize_stream", acl.rt.synchronize_stream(stream))
    verify("pinned -> device -> device -> numpy (async)", result, image)

    # crop a 64 x 100 window out of the image with a pitched 2-D copy
    top, left, h, w = 10, 30, 64, 100
    crop_dev = dev_malloc(h * w * 4)
    src = dev_a + (top * COLS + left) * 4
    check_ret("memcpy2d_async D2D (crop)", acl.rt.memcpy2d_async(crop_dev, w * 4, src, COLS * 4, w * 4, h,
                                                                 ACL_MEMCPY_DEVICE_TO_DEVICE, stream))
    crop = np.zeros((h, w), np.float32)
    check_ret("memcpy2d_async D2H", acl.rt.memcpy2d_async(crop.ctypes.data, w * 4, crop_dev, w * 4, w * 4, h,
                                                          ACL_MEMCPY_DEVICE_TO_HOST, stream))
    check_ret("synchronize_stream", acl.rt.synchronize_stream(stream))
    verify("2-D crop device -> device -> numpy", crop, image[top:top + h, left:left + w])

    # synchronous memset, then a sync 2-D copy of the first column of each row
    check_ret("memset", acl.rt.memset(dev_c, nbytes, 0x7F, nbytes))
    column = np.zeros((ROWS, 1), np.uint8)
    check_ret("memcpy2d D2H (column)", acl.rt.memcpy2d(column.ctypes.data, 1, dev_c, COLS * 4, 1, ROWS,
                                                       ACL_MEMCPY_DEVICE_TO_HOST))
    verify("memset 0x7F then 2-D column read", column, np.full((ROWS, 1), 0x7F, np.uint8))
    print(f"  {nbytes} bytes per full copy, {len(res)} resources to release")


def teardown(res):
    errors = []
    for kind, handle in reversed(res):
        if kind == "free":
            ret = acl.rt.free(handle)
        elif kind == "free_host":
            ret = acl.rt.free_host(handle)
        elif kind == "destroy_stream":
            ret = acl.rt.destroy_stream(handle)
        elif kind == "reset_device":
            ret = acl.rt.reset_device(handle)
        else:
            ret = acl.finalize()
        if ret != ACL_SUCCESS:
            errors.append(f"{kind} -> {ret}")
    return errors


def main():
    res = []
    failure = None
    try:
        run(res)
    except SampleError as exc:
        failure = str(exc)
    errors = teardown(res)
    if failure or errors:
        print(f"memcpy_sync_async: FAILED: {failure or ''} {'; '.join(errors)}", file=sys.stderr)
        return 1
    print("memcpy_sync_async: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
