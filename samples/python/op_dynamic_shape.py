#!/usr/bin/env python3
"""An operator whose output shape depends on its data: the dynamic-shape flow
of the pyACL guide, with Unique (the distinct values of x, in first-occurrence
order, and for every element the index of its value in y).

  1. describe the inputs; ask acl.op.infer_shape for the outputs: y comes back
     with dims [-1] and a shape range [1, numel(x)];
  2. take the upper bound of each -1 dim from its range and allocate the
     output buffers for that;
  3. acl.op.execute_v2 with those output descs; after the stream is
     synchronised, the output descs hold the real dims;
  4. read that many elements back.

    PYTHONPATH=build/python python3 samples/python/op_dynamic_shape.py
"""
import sys

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_DT_UNDEFINED = -1
ACL_FLOAT = 0
ACL_INT32 = 3
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
NP_TYPE = {ACL_FLOAT: np.float32, ACL_INT32: np.int32}


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def desc_dims(desc):
    dims = []
    for i in range(acl.get_tensor_desc_num_dims(desc)):
        dim, ret = acl.get_tensor_desc_dim_v2(desc, i)
        check_ret("acl.get_tensor_desc_dim_v2", ret)
        dims.append(dim)
    return dims


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    devs, descs, bufs = [], [], []
    attr = acl.op.create_attr()
    try:
        x = np.array([3, 1, 3, 7, 1, 1, 9, 7, 3, 2], dtype=np.float32)
        d_x, ret = acl.rt.malloc(x.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        devs.append(d_x)
        host = x.tobytes()
        check_ret("acl.rt.memcpy", acl.rt.memcpy(d_x, x.nbytes, acl.util.bytes_to_ptr(host), x.nbytes,
                                                 ACL_MEMCPY_HOST_TO_DEVICE))
        x_desc = acl.create_tensor_desc(ACL_FLOAT, list(x.shape), ACL_FORMAT_ND)
        descs.append(x_desc)
        x_buf = acl.create_data_buffer(d_x, x.nbytes)
        bufs.append(x_buf)
        check_ret("acl.op.set_attr_data_type", acl.op.set_attr_data_type(attr, "out_idx", ACL_INT32)[1])

        # 1. Output shapes before running: y's length depends on the data.
        out_descs = [acl.create_tensor_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_ND) for _ in range(2)]
        descs += out_descs
        check_ret("acl.op.infer_shape", acl.op.infer_shape("Unique", [x_desc], [x_buf], 2, out_descs, attr))
        inferred = [desc_dims(d) for d in out_descs]
        print(f"infer_shape  : y dims {inferred[0]}, idx dims {inferred[1]}")

        # 2. Upper bound of every -1 dim from its range.
        bounded, out_bufs, out_ptrs, types = [], [], [], []
        for d, dims in zip(out_descs, inferred):
            upper = []
            for i, dim in enumerate(dims):
                if dim < 0:
                    rng, ret = acl.get_tensor_desc_dim_range(d, i, 2)
                    check_ret("acl.get_tensor_desc_dim_range", ret)
                    print(f"range        : dim {i} in [{rng[0]}, {rng[1]}]; allocating for {rng[1]}")
                    dim = rng[1]
                upper.append(dim)
            dtype = acl.get_tensor_desc_type(d)
            nbytes = int(np.prod(upper)) * np.dtype(NP_TYPE[dtype]).itemsize
            ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
            check_ret("acl.rt.malloc", ret)
            devs.append(ptr)
            desc = acl.create_tensor_desc(dtype, upper, ACL_FORMAT_ND)
            descs.append(desc)
            buf = acl.create_data_buffer(ptr, nbytes)
            bufs.append(buf)
            bounded.append(desc)
            out_bufs.append(buf)
            out_ptrs.append(ptr)
            types.append(dtype)

        # 3. Execute; the output descs receive the real dims.
        check_ret("acl.op.execute_v2", acl.op.execute_v2("Unique", [x_desc], [x_buf], bounded, out_bufs, attr,
                                                         stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        real = [desc_dims(d) for d in bounded]
        print(f"execute_v2   : y dims {real[0]}, idx dims {real[1]} (from the output descs)")

        # 4. Read back exactly what was produced.
        results = []
        for ptr, dims, dtype in zip(out_ptrs, real, types):
            count = int(np.prod(dims))
            nbytes = count * np.dtype(NP_TYPE[dtype]).itemsize
            host = bytes(nbytes)
            check_ret("acl.rt.memcpy", acl.rt.memcpy(acl.util.bytes_to_ptr(host), nbytes, ptr, nbytes,
                                                     ACL_MEMCPY_DEVICE_TO_HOST))
            results.append(np.frombuffer(host, dtype=NP_TYPE[dtype]).reshape(dims))
        y, idx = results
        values, first = np.unique(x, return_index=True)
        expected = values[np.argsort(first)]  # first-occurrence order
        if not np.array_equal(y, expected) or not np.array_equal(y[idx], x):
            raise SampleError(f"Unique gave y={y}, idx={idx}; expected y={expected}")
        print(f"result       : y = {y.tolist()}, y[idx] == x")
    finally:
        acl.op.destroy_attr(attr)
        for b in bufs:
            acl.destroy_data_buffer(b)
        for d in descs:
            acl.destroy_tensor_desc(d)
        for p in devs:
            acl.rt.free(p)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    print("op_dynamic_shape: OK")


if __name__ == "__main__":
    try:
        main()
    except SampleError as exc:
        print(f"op_dynamic_shape: {exc}", file=sys.stderr)
        sys.exit(1)
