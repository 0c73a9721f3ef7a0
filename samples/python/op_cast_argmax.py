#!/usr/bin/env python3
"""A model, then single operators on its output: Cast + ArgMaxV2.

A common post-processing pattern: the model produces float32 scores on the
device; instead of copying them to the host, two Ascend operators run on the
same stream:

  * acl.op.cast turns the scores into float16 (Cast, target from the desc);
  * ArgMaxV2 (inputs x and dimension, attribute dtype) picks the class of each
    row; `dimension` is a host constant (acl.set_tensor_const), so it is
    compiled into the op;
  * acl.op.infer_shape tells the output's dtype and shape before anything
    is allocated.

Only the class indices (a few bytes) come back to the host. The model is a
small classifier built with onnx.helper in a temporary folder.

    PYTHONPATH=build/python python3 samples/python/op_cast_argmax.py

Exit status 77 (the "skipped" convention) when this build's op catalogue has
no ArgMaxV2.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl

ACL_SUCCESS = 0
ACL_ERROR_OP_NOT_FOUND = 100024
ACL_FLOAT, ACL_FLOAT16, ACL_INT32 = 0, 1, 3
ACL_DT_UNDEFINED = -1
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
BATCH, FEATURES, CLASSES = 6, 12, 5
SKIP = 77


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def build_model(folder):
    """scores = x @ W + b, x [BATCH, FEATURES] -> [BATCH, CLASSES]."""
    rng = np.random.default_rng(11)
    w = rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)
    b = rng.standard_normal(CLASSES).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["scores"])],
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [BATCH, CLASSES])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    path = os.path.join(folder, "classifier.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path, lambda x: x @ w + b


class Resources:
    """Everything allocated, released in reverse order."""

    def __init__(self):
        self.undo = []

    def add(self, fn, *args):
        self.undo.append((fn, args))

    def malloc(self, nbytes):
        p, ret = acl.rt.malloc(max(nbytes, 1), ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        self.add(acl.rt.free, p)
        return p

    def desc(self, dtype, dims):
        d = acl.create_tensor_desc(dtype, dims, ACL_FORMAT_ND)
        if d == 0:
            raise SampleError(f"acl.create_tensor_desc failed: {acl.get_recent_err_msg()}")
        self.add(acl.destroy_tensor_desc, d)
        return d

    def buffer(self, ptr, nbytes):
        b = acl.create_data_buffer(ptr, nbytes)
        self.add(acl.destroy_data_buffer, b)
        return b

    def release(self):
        for fn, args in reversed(self.undo):
            fn(*args)
        self.undo.clear()


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    res = Resources()
    model_id = None
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    try:
        with tempfile.TemporaryDirectory() as folder:
            path, reference = build_model(folder)
            model_id, ret = acl.mdl.load_from_file(path)
            check_ret("acl.mdl.load_from_file", ret)

        x = np.random.default_rng(5).standard_normal((BATCH, FEATURES)).astype(np.float32)
        d_x = res.malloc(x.nbytes)
        host = x.tobytes()
        check_ret("acl.rt.memcpy", acl.rt.memcpy(d_x, x.nbytes, acl.util.bytes_to_ptr(host), x.nbytes,
                                                 ACL_MEMCPY_HOST_TO_DEVICE))
        scores_bytes = BATCH * CLASSES * 4
        d_scores = res.malloc(scores_bytes)

        inputs = acl.mdl.create_dataset()
        res.add(acl.mdl.destroy_dataset, inputs)
        _, ret = acl.mdl.add_dataset_buffer(inputs, res.buffer(d_x, x.nbytes))
        check_ret("acl.mdl.add_dataset_buffer", ret)
        outputs = acl.mdl.create_dataset()
        res.add(acl.mdl.destroy_dataset, outputs)
        b_scores = res.buffer(d_scores, scores_bytes)
        _, ret = acl.mdl.add_dataset_buffer(outputs, b_scores)
        check_ret("acl.mdl.add_dataset_buffer", ret)
        check_ret("acl.mdl.execute_async", acl.mdl.execute_async(model_id, inputs, outputs, stream))
        print(f"model        : scores [{BATCH}, {CLASSES}] float32 stay on the device")

        # Cast float32 -> float16 on the same stream (queued after the model).
        scores_desc = res.desc(ACL_FLOAT, [BATCH, CLASSES])
        half_desc = res.desc(ACL_FLOAT16, [BATCH, CLASSES])
        d_half = res.malloc(BATCH * CLASSES * 2)
        b_half = res.buffer(d_half, BATCH * CLASSES * 2)
        check_ret("acl.op.cast", acl.op.cast(scores_desc, b_scores, half_desc, b_half, 0, stream))
        print("cast         : float32 -> float16")

        # ArgMaxV2(x, dimension=1) with dtype int32; dimension as a host constant.
        dim_desc = res.desc(ACL_INT32, [1])
        dim_host = np.array([1], dtype=np.int32).tobytes()
        check_ret("acl.set_tensor_const", acl.set_tensor_const(dim_desc, acl.util.bytes_to_ptr(dim_host),
                                                               len(dim_host)))
        d_dim = res.malloc(4)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(d_dim, 4, acl.util.bytes_to_ptr(dim_host), 4,
                                                 ACL_MEMCPY_HOST_TO_DEVICE))
        b_dim = res.buffer(d_dim, 4)
        attr = acl.op.create_attr()
        res.add(acl.op.destroy_attr, attr)
        _, ret = acl.op.set_attr_data_type(attr, "dtype", ACL_INT32)
        check_ret("acl.op.set_attr_data_type", ret)

        probe = res.desc(ACL_DT_UNDEFINED, [])
        ret = acl.op.infer_shape("ArgMaxV2", [half_desc, dim_desc], [b_half, b_dim], 1, [probe], attr)
        if ret == ACL_ERROR_OP_NOT_FOUND:
            print(f"op_cast_argmax: SKIPPED: ArgMaxV2 is not in this build's op catalogue "
                  f"({acl.get_recent_err_msg()})")
            return SKIP
        check_ret("acl.op.infer_shape(ArgMaxV2)", ret)
        out_dims = [acl.get_tensor_desc_dim_v2(probe, k)[0] for k in range(acl.get_tensor_desc_num_dims(probe))]
        out_type = acl.get_tensor_desc_type(probe)
        print(f"infer_shape  : ArgMaxV2 -> dims {out_dims}, dtype {out_type}")
        if out_dims != [BATCH] or out_type != ACL_INT32:
            raise SampleError(f"ArgMaxV2 output is {out_dims} dtype {out_type}, expected [{BATCH}] int32")

        idx_desc = res.desc(ACL_INT32, [BATCH])
        d_idx = res.malloc(BATCH * 4)
        b_idx = res.buffer(d_idx, BATCH * 4)
        check_ret("acl.op.execute_v2", acl.op.execute_v2("ArgMaxV2", [half_desc, dim_desc], [b_half, b_dim],
                                                         [idx_desc], [b_idx], attr, stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

        got = bytes(BATCH * 4)  # filled in place through its address (the pyACL idiom)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(acl.util.bytes_to_ptr(got), BATCH * 4, d_idx, BATCH * 4,
                                                 ACL_MEMCPY_DEVICE_TO_HOST))
        classes = np.frombuffer(got, dtype=np.int32)
        expected = np.argmax(reference(x).astype(np.float16), axis=1)
        print(f"classes      : {classes.tolist()}")
        if not np.array_equal(classes, expected):
            raise SampleError(f"classes {classes.tolist()} differ from numpy's {expected.tolist()}")
        print("classes match numpy (argmax of the float16 scores)")
    finally:
        res.release()
        if model_id is not None:
            acl.mdl.unload(model_id)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    print("op_cast_argmax: OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SampleError as e:
        print(f"op_cast_argmax: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
