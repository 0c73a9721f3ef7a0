#!/usr/bin/env python3
"""Free dimensions given at execution with tensor descriptors (no gears).

An ONNX model whose input has free dims (here image[N, 3, H, W] with N, H and
W free) runs at any shape, without atc gears. For each execution the program:

  1. describes the real input shape with acl.create_tensor_desc and attaches
     it with acl.mdl.set_dataset_tensor_desc (the dataset keeps a copy, so the
     desc can be destroyed right away);
  2. executes;
  3. reads the real output shape from the output dataset's desc:
     acl.mdl.get_dataset_tensor_desc(output, 0), then get_tensor_desc_num_dims
     / get_tensor_desc_dim_v2, and get_tensor_desc_size for the bytes to copy
     back. That desc belongs to the output dataset (it goes with it).

The buffers are allocated once for the largest shape; every output is checked
against numpy.

    PYTHONPATH=build/python python3 samples/python/model_dynamic_shape.py
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl

ACL_SUCCESS = 0
ACL_FLOAT = 0
ACL_FORMAT_NCHW = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

DEVICE_ID = 0
CHANNELS, FILTERS = 3, 4
SHAPES = [(1, 8, 8), (2, 5, 12), (1, 17, 3)]   # (N, H, W) of each execution
MAX_ELEMENTS = max(n * max(CHANNELS, FILTERS) * h * w for n, h, w in SHAPES)


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def conv_reference(x, w, b):
    """3x3 convolution with padding 1, NCHW, plus bias, then relu, in numpy."""
    n, _, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd), np.float32)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return np.maximum(out + b[None, :, None, None], 0)


def build_model(folder):
    """image[N,3,H,W] -> Conv 3x3 (pad 1) -> Relu -> features[N,4,H,W]; N, H, W free."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((FILTERS, CHANNELS, 3, 3)).astype(np.float32) * 0.4
    b = rng.standard_normal(FILTERS).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["image", "W", "B"], ["conv"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         helper.make_node("Relu", ["conv"], ["features"])],
        "free_conv",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", CHANNELS, "H", "W"])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", FILTERS, "H", "W"])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    path = os.path.join(folder, "free_conv.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path, (lambda x: conv_reference(x, w, b))


def device_buffer(size, cleanup):
    ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    cleanup.append(lambda: acl.rt.free(ptr))
    return ptr


def dataset_with(ptr, size, cleanup):
    dataset = acl.mdl.create_dataset()
    if dataset == 0:
        raise SampleError("acl.mdl.create_dataset failed")
    cleanup.append(lambda: acl.mdl.destroy_dataset(dataset))  # also frees the descs it holds
    buffer = acl.create_data_buffer(ptr, size)
    cleanup.append(lambda: acl.destroy_data_buffer(buffer))
    _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
    check_ret("acl.mdl.add_dataset_buffer", ret)
    return dataset


def run(folder, cleanup):
    path, reference = build_model(folder)
    model_id, ret = acl.mdl.load_from_file(path)
    check_ret("acl.mdl.load_from_file", ret)
    cleanup.append(lambda: acl.mdl.unload(model_id))
    desc = acl.mdl.create_desc()
    cleanup.append(lambda: acl.mdl.destroy_desc(desc))
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    dims, ret = acl.mdl.get_input_dims(desc, 0)
    check_ret("acl.mdl.get_input_dims", ret)
    print(f"  model    : input '{dims['name']}' {dims['dims']} (-1: free, given at execution)")

    size = MAX_ELEMENTS * 4
    in_ptr, out_ptr = device_buffer(size, cleanup), device_buffer(size, cleanup)
    inputs, outputs = dataset_with(in_ptr, size, cleanup), dataset_with(out_ptr, size, cleanup)
    rng = np.random.default_rng(0)
    for n, h, w in SHAPES:
        x = rng.standard_normal((n, CHANNELS, h, w)).astype(np.float32)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(in_ptr, size, x.ctypes.data, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))
        tensor = acl.create_tensor_desc(ACL_FLOAT, list(x.shape), ACL_FORMAT_NCHW)
        if tensor == 0:
            raise SampleError(f"acl.create_tensor_desc failed: {acl.get_recent_err_msg()}")
        _, ret = acl.mdl.set_dataset_tensor_desc(inputs, tensor, 0)
        acl.destroy_tensor_desc(tensor)  # the dataset keeps its own copy
        check_ret("acl.mdl.set_dataset_tensor_desc", ret)
        check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))

        out_desc = acl.mdl.get_dataset_tensor_desc(outputs, 0)
        if out_desc == 0:
            raise SampleError("the output dataset has no tensor desc after execute")
        shape = []
        for i in range(acl.get_tensor_desc_num_dims(out_desc)):
            dim, ret = acl.get_tensor_desc_dim_v2(out_desc, i)
            check_ret("acl.get_tensor_desc_dim_v2", ret)
            shape.append(dim)
        nbytes = acl.get_tensor_desc_size(out_desc)
        out = np.zeros(shape, np.float32)
        if nbytes != out.nbytes:
            raise SampleError(f"output desc size {nbytes} != {out.nbytes}")
        check_ret("acl.rt.memcpy", acl.rt.memcpy(out.ctypes.data, out.nbytes, out_ptr, nbytes,
                                                 ACL_MEMCPY_DEVICE_TO_HOST))
        if not np.allclose(out, reference(x), rtol=1e-4, atol=1e-5):
            raise SampleError(f"input {list(x.shape)}: output differs from numpy")
        print(f"  input {list(x.shape)}: output dims {shape}, matches numpy")


def main():
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"model_dynamic_shape: FAILED: acl.init -> {check}", file=sys.stderr)
        return 1
    cleanup = []
    failure = None
    with tempfile.TemporaryDirectory(prefix="openacl_sample_") as folder:
        try:
            check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
            cleanup.append(lambda: acl.rt.reset_device(DEVICE_ID))
            run(folder, cleanup)
        except SampleError as exc:
            failure = str(exc)
        errors = [str(ret) for ret in (undo() for undo in reversed(cleanup)) if ret != ACL_SUCCESS]
    acl.finalize()
    if failure or errors:
        print(f"model_dynamic_shape: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    print("model_dynamic_shape: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
