#!/usr/bin/env python3
"""One Ascend operator, Add, on device buffers.

The single-operator flow of pyACL:

  * tensor descriptors say what each input and output is (dtype, shape,
    format); data buffers say where it lives (device memory);
  * acl.op.execute_v2 queues the op on a stream (the first call compiles it,
    later calls with the same descs and attributes reuse the compiled op);
  * acl.rt.synchronize_stream waits, and the result is copied back;
  * acl.op.create_handle / execute_with_handle pre-resolve the op once for a
    loop of calls.

    PYTHONPATH=build/python python3 samples/python/op_add.py
"""
import sys
import time

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_FLOAT = 0
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
SHAPE = [4, 8]


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def to_device(array, keep):
    nbytes = array.nbytes
    dev, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    keep.append(dev)
    host = np.ascontiguousarray(array).tobytes()
    check_ret("acl.rt.memcpy", acl.rt.memcpy(dev, nbytes, acl.util.bytes_to_ptr(host), nbytes,
                                             ACL_MEMCPY_HOST_TO_DEVICE))
    return dev


def from_device(dev, shape, dtype):
    out = np.zeros(shape, dtype=dtype)
    host = bytes(out.nbytes)  # filled in place through its address (the pyACL idiom)
    check_ret("acl.rt.memcpy", acl.rt.memcpy(acl.util.bytes_to_ptr(host), out.nbytes, dev, out.nbytes,
                                             ACL_MEMCPY_DEVICE_TO_HOST))
    return np.frombuffer(host, dtype=dtype).reshape(shape)


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    devs, descs, bufs = [], [], []
    try:
        rng = np.random.default_rng(0)
        x1 = rng.standard_normal(SHAPE).astype(np.float32)
        x2 = rng.standard_normal(SHAPE).astype(np.float32)
        nbytes = x1.nbytes
        d_x1, d_x2 = to_device(x1, devs), to_device(x2, devs)
        d_y, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        devs.append(d_y)

        desc = acl.create_tensor_desc(ACL_FLOAT, SHAPE, ACL_FORMAT_ND)
        descs.append(desc)
        b_x1, b_x2, b_y = (acl.create_data_buffer(p, nbytes) for p in (d_x1, d_x2, d_y))
        bufs += [b_x1, b_x2, b_y]

        # Add(x1, x2) -> y; no attributes (attr 0).
        t0 = time.perf_counter()
        check_ret("acl.op.execute_v2", acl.op.execute_v2("Add", [desc, desc], [b_x1, b_x2], [desc], [b_y], 0, stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        first_ms = (time.perf_counter() - t0) * 1e3
        y = from_device(d_y, SHAPE, np.float32)
        if not np.array_equal(y, x1 + x2):
            raise SampleError("Add result differs from numpy")
        print(f"execute_v2   : Add{SHAPE} float32 matches numpy (first call, with compile: {first_ms:.2f} ms)")

        t0 = time.perf_counter()
        runs = 100
        for _ in range(runs):
            check_ret("acl.op.execute_v2",
                      acl.op.execute_v2("Add", [desc, desc], [b_x1, b_x2], [desc], [b_y], 0, stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        print(f"cached       : {runs} more calls, {(time.perf_counter() - t0) * 1e6 / runs:.1f} us per call")

        # A handle: the op resolved once; y = y + x2 three times.
        handle, ret = acl.op.create_handle("Add", [desc, desc], [desc], 0)
        check_ret("acl.op.create_handle", ret)
        try:
            for _ in range(3):
                check_ret("acl.op.execute_with_handle",
                          acl.op.execute_with_handle(handle, [b_y, b_x2], [b_y], stream))
            check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        finally:
            acl.op.destroy_handle(handle)
        y = from_device(d_y, SHAPE, np.float32)
        expected = ((((x1 + x2) + x2) + x2) + x2)
        if not np.allclose(y, expected, rtol=1e-6, atol=1e-6):
            raise SampleError("handle result differs from numpy")
        print("handle       : y = y + x2, three times in stream order, matches numpy")
    finally:
        for b in bufs:
            acl.destroy_data_buffer(b)
        for d in descs:
            acl.destroy_tensor_desc(d)
        for p in devs:
            acl.rt.free(p)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    print("op_add: OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SampleError as e:
        print(f"op_add: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
