"""Running one Ascend op through acl.op from numpy, for the op tests.

    from op_util import A, run_op
    y, = run_op("Add", [a, b])
    y, = run_op("ReduceSumD", [x], {"axes": A.ints([1]), "keep_dims": A.bool(True)})
    y, = run_op("Cast", [x], {"dst_type": A.dtype(np.float16)}, out_dtypes=[np.float16])

run_op follows the dynamic-shape flow of the pyACL guide: acl.op.infer_shape
gives the output dims (a -1 dim takes the upper bound of its range), the
outputs are allocated for that, acl.op.execute_v2 runs the op on a stream, and
the real output dims are read back from the output descs. Call it inside a
test that has the `device` fixture (acl initialised, device 0 set).
"""
import numpy as np

import acl

ACL_DT = {
    np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 2, np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4, np.dtype(np.int16): 6, np.dtype(np.uint16): 7, np.dtype(np.uint32): 8,
    np.dtype(np.int64): 9, np.dtype(np.uint64): 10, np.dtype(np.float64): 11, np.dtype(np.bool_): 12,
}
NP_DT = {v: k for k, v in ACL_DT.items()}
ACL_FORMAT_ND = 2
ACL_FORMAT_UNDEFINED = -1
ACL_DT_UNDEFINED = -1
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def acl_dtype(dt):
    return ACL_DT[np.dtype(dt)]


class A:
    """Typed attribute values: (setter name, value)."""
    @staticmethod
    def bool(v): return ("bool", int(bool(v)))
    @staticmethod
    def int(v): return ("int", int(v))
    @staticmethod
    def float(v): return ("float", float(v))
    @staticmethod
    def str(v): return ("string", v)
    @staticmethod
    def dtype(v): return ("data_type", acl_dtype(v) if not isinstance(v, int) else v)
    @staticmethod
    def bools(v): return ("list_bool", [int(bool(x)) for x in v])
    @staticmethod
    def ints(v): return ("list_int", [int(x) for x in v])
    @staticmethod
    def floats(v): return ("list_float", [float(x) for x in v])
    @staticmethod
    def strs(v): return ("list_string", list(v))
    @staticmethod
    def dtypes(v): return ("list_data_type", [acl_dtype(x) if not isinstance(x, int) else x for x in v])
    @staticmethod
    def lists(v): return ("list_list_int", [[int(x) for x in inner] for inner in v])


def make_attr(attrs):
    """An aclopAttr handle with `attrs` ({name: A.x(value)}); 0 for none."""
    if not attrs:
        return 0
    attr = acl.op.create_attr()
    assert attr != 0
    for name, (kind, value) in attrs.items():
        result = getattr(acl.op, "set_attr_" + kind)(attr, name, value)
        ret = result[1] if isinstance(result, tuple) else result
        assert ret == 0, f"set_attr_{kind}({name}) -> {ret}: {acl.get_recent_err_msg()}"
    return attr


class OpError(Exception):
    def __init__(self, where, ret, msg):
        super().__init__(f"{where} -> {ret}: {msg}")
        self.ret = ret
        self.msg = msg


def _device_copy(arr):
    nbytes = max(arr.nbytes, 1)
    dev, ret = acl.rt.malloc(nbytes, 0)
    assert ret == 0
    if arr.nbytes:
        host = np.ascontiguousarray(arr)
        ret = acl.rt.memcpy(dev, nbytes, acl.util.bytes_to_ptr(host.tobytes()), arr.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
        assert ret == 0
    return dev


def run_op(op_type, inputs, attrs=None, out_dtypes=None, num_outputs=None, consts=(), out_shapes=None,
           use_infer=True):
    """Runs op_type on numpy inputs; returns the outputs as numpy arrays.

    inputs: numpy arrays, or None for an omitted optional input.
    consts: indices of inputs passed as host constants (acl.set_tensor_const).
    out_dtypes: per output dtype (default: the dtype infer_shape reports).
    out_shapes: per output dims (default: from infer_shape, -1 dims at their
    range's upper bound). Raises OpError with the ACL code on failure.
    """
    in_descs, in_bufs, devs, keep = [], [], [], []
    attr = make_attr(attrs)
    out_descs, out_bufs = [], []
    try:
        for i, x in enumerate(inputs):
            if x is None:
                in_descs.append(acl.create_tensor_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_UNDEFINED))
                in_bufs.append(acl.create_data_buffer(0, 0))
                continue
            x = np.asarray(x)
            desc = acl.create_tensor_desc(acl_dtype(x.dtype), list(x.shape), ACL_FORMAT_ND)
            assert desc != 0
            if i in consts:
                host = np.ascontiguousarray(x).tobytes()
                keep.append(host)
                ret = acl.set_tensor_const(desc, acl.util.bytes_to_ptr(host), len(host))
                assert ret == 0, acl.get_recent_err_msg()
            dev = _device_copy(x)
            devs.append(dev)
            in_descs.append(desc)
            in_bufs.append(acl.create_data_buffer(dev, x.nbytes))
        n_out = num_outputs or (len(out_dtypes) if out_dtypes else 1)
        shapes = out_shapes
        dtypes = out_dtypes
        if shapes is None or dtypes is None:
            probe = [acl.create_tensor_desc(acl_dtype(out_dtypes[o]) if out_dtypes else ACL_DT_UNDEFINED, [],
                                            ACL_FORMAT_ND) for o in range(n_out)]
            try:
                ret = acl.op.infer_shape(op_type, in_descs, in_bufs, n_out, probe, attr)
                if ret != 0:
                    raise OpError(f"infer_shape({op_type})", ret, acl.get_recent_err_msg())
                inferred_shapes, inferred_dtypes = [], []
                for d in probe:
                    dims = []
                    for k in range(acl.get_tensor_desc_num_dims(d)):
                        dim, ret = acl.get_tensor_desc_dim_v2(d, k)
                        assert ret == 0
                        if dim < 0:
                            rng, ret = acl.get_tensor_desc_dim_range(d, k, 2)
                            assert ret == 0 and rng[1] >= 0, f"{op_type}: dim {k} has no upper bound"
                            dim = rng[1]
                        dims.append(dim)
                    inferred_shapes.append(dims)
                    inferred_dtypes.append(NP_DT[acl.get_tensor_desc_type(d)])
            finally:
                for d in probe:
                    acl.destroy_tensor_desc(d)
            shapes = shapes or inferred_shapes
            dtypes = dtypes or inferred_dtypes
        for o in range(n_out):
            dt = np.dtype(dtypes[o])
            nbytes = int(np.prod(shapes[o], dtype=np.int64)) * dt.itemsize
            dev, ret = acl.rt.malloc(max(nbytes, 1), 0)
            assert ret == 0
            devs.append(dev)
            out_descs.append(acl.create_tensor_desc(acl_dtype(dt), list(shapes[o]), ACL_FORMAT_ND))
            out_bufs.append(acl.create_data_buffer(dev, nbytes))
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        try:
            ret = acl.op.execute_v2(op_type, in_descs, in_bufs, out_descs, out_bufs, attr, stream)
            if ret != 0:
                raise OpError(f"execute_v2({op_type})", ret, acl.get_recent_err_msg())
            ret = acl.rt.synchronize_stream(stream)
            if ret != 0:
                raise OpError(f"synchronize_stream after {op_type}", ret, acl.get_recent_err_msg())
        finally:
            acl.rt.destroy_stream(stream)
        results = []
        for o in range(n_out):
            d = out_descs[o]
            dims = [acl.get_tensor_desc_dim_v2(d, k)[0] for k in range(acl.get_tensor_desc_num_dims(d))]
            dt = NP_DT[acl.get_tensor_desc_type(d)]
            nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(dt).itemsize
            host = b""
            if nbytes:
                buf = bytes(nbytes)
                ret = acl.rt.memcpy(acl.util.bytes_to_ptr(buf), nbytes, acl.get_data_buffer_addr(out_bufs[o]),
                                    nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
                assert ret == 0
                host = buf
            results.append(np.frombuffer(host, dtype=dt).reshape(dims).copy())
        return results
    finally:
        for d in in_descs + out_descs:
            acl.destroy_tensor_desc(d)
        for b in in_bufs + out_bufs:
            acl.destroy_data_buffer(b)
        for dev in devs:
            acl.rt.free(dev)
        if attr:
            acl.op.destroy_attr(attr)
