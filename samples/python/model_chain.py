#!/usr/bin/env python3
"""Two models in series, with no host round trip between them.

Builds two ONNX models with onnx.helper: an "encoder" (x[1,8] -> Relu(x W + b)
-> features[1,6]) and a "head" (features[1,6] -> Softmax(f V + c) ->
probs[1,3]). The encoder's output device buffer is the head's input: one data
buffer sits in the encoder's output dataset and in the head's input dataset.
The host copies data in once and the result out once.

Run twice: with acl.mdl.execute (synchronous, one after the other), then
with acl.mdl.execute_async on one stream, where stream order alone makes the
head wait for the encoder.

    PYTHONPATH=build/python python3 samples/python/model_chain.py
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

DEVICE_ID = 0
IN_FEATURES, FEATURES, CLASSES = 8, 6, 3


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def save(graph, folder, name):
    path = os.path.join(folder, f"{name}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def build_models(folder):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((IN_FEATURES, FEATURES)).astype(np.float32) * 0.5
    b = rng.standard_normal(FEATURES).astype(np.float32) * 0.1
    v = rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)
    c = rng.standard_normal(CLASSES).astype(np.float32) * 0.1
    encoder = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="fc"),
         helper.make_node("Add", ["xw", "b"], ["pre"], name="bias"),
         helper.make_node("Relu", ["pre"], ["features"], name="relu")],
        "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, IN_FEATURES])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, FEATURES])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    head = helper.make_graph(
        [helper.make_node("MatMul", ["features", "v"], ["fv"], name="fc"),
         helper.make_node("Add", ["fv", "c"], ["logits"], name="bias"),
         helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1)],
        "head",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, FEATURES])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, CLASSES])],
        [numpy_helper.from_array(v, "v"), numpy_helper.from_array(c, "c")])

    def reference(x):
        logits = np.maximum(x @ w + b, 0) @ v + c
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return save(encoder, folder, "encoder"), save(head, folder, "head"), reference


class Loaded:
    """A loaded model with its description."""

    def __init__(self, path, cleanup):
        self.model_id, ret = acl.mdl.load_from_file(path)
        check_ret(f"acl.mdl.load_from_file({os.path.basename(path)})", ret)
        cleanup.append(lambda: acl.mdl.unload(self.model_id))
        self.desc = acl.mdl.create_desc()
        if self.desc == 0:
            raise SampleError("acl.mdl.create_desc returned 0")
        cleanup.append(lambda: acl.mdl.destroy_desc(self.desc))
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.in_size = acl.mdl.get_input_size_by_index(self.desc, 0)
        self.out_size = acl.mdl.get_output_size_by_index(self.desc, 0)
        self.input_name = acl.mdl.get_input_name_by_index(self.desc, 0)
        self.output_name = acl.mdl.get_output_name_by_index(self.desc, 0)


def dataset_of(buffer, cleanup, what):
    dataset = acl.mdl.create_dataset()
    if dataset == 0:
        raise SampleError(f"acl.mdl.create_dataset ({what}) returned 0")
    cleanup.append(lambda: acl.mdl.destroy_dataset(dataset))
    _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
    check_ret(f"acl.mdl.add_dataset_buffer ({what})", ret)
    return dataset


def device_buffer(size, cleanup, what):
    """Device memory and a data buffer over it."""
    ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret(f"acl.rt.malloc ({what})", ret)
    cleanup.append(lambda: acl.rt.free(ptr))
    buffer = acl.create_data_buffer(ptr, size)
    if buffer == 0:
        raise SampleError(f"acl.create_data_buffer ({what}) returned 0")
    cleanup.append(lambda: acl.destroy_data_buffer(buffer))
    return ptr, buffer


def run(folder, cleanup):
    encoder_path, head_path, reference = build_models(folder)
    encoder = Loaded(encoder_path, cleanup)
    head = Loaded(head_path, cleanup)
    if encoder.out_size != head.in_size:
        raise SampleError(f"encoder output {encoder.out_size} bytes, head input {head.in_size} bytes")
    print(f"  models   : encoder (id {encoder.model_id}) '{encoder.input_name}' -> '{encoder.output_name}', "
          f"head (id {head.model_id}) '{head.input_name}' -> '{head.output_name}'")

    x_ptr, x_buf = device_buffer(encoder.in_size, cleanup, "x")
    f_ptr, f_buf = device_buffer(encoder.out_size, cleanup, "features")   # shared by both models
    p_ptr, p_buf = device_buffer(head.out_size, cleanup, "probs")
    encoder_in = dataset_of(x_buf, cleanup, "encoder input")
    encoder_out = dataset_of(f_buf, cleanup, "encoder output")
    head_in = dataset_of(f_buf, cleanup, "head input")
    head_out = dataset_of(p_buf, cleanup, "head output")
    print(f"  buffers  : the features buffer ({encoder.out_size} bytes at 0x{f_ptr:x}) is the encoder's "
          f"output and the head's input")

    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    cleanup.append(lambda: acl.rt.destroy_stream(stream))

    rng = np.random.default_rng(2)
    for mode in ("execute", "execute_async"):
        x = rng.uniform(-1, 1, (1, IN_FEATURES)).astype(np.float32)
        probs = np.zeros((1, CLASSES), np.float32)
        if mode == "execute":
            check_ret("acl.rt.memcpy H2D", acl.rt.memcpy(x_ptr, encoder.in_size, x.ctypes.data, x.nbytes,
                                                         ACL_MEMCPY_HOST_TO_DEVICE))
            check_ret("acl.mdl.execute (encoder)", acl.mdl.execute(encoder.model_id, encoder_in, encoder_out))
            check_ret("acl.mdl.execute (head)", acl.mdl.execute(head.model_id, head_in, head_out))
            check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(probs.ctypes.data, probs.nbytes, p_ptr, head.out_size,
                                                         ACL_MEMCPY_DEVICE_TO_HOST))
        else:
            check_ret("acl.rt.memcpy_async H2D", acl.rt.memcpy_async(x_ptr, encoder.in_size, x.ctypes.data, x.nbytes,
                                                                     ACL_MEMCPY_HOST_TO_DEVICE, stream))
            check_ret("acl.mdl.execute_async (encoder)",
                      acl.mdl.execute_async(encoder.model_id, encoder_in, encoder_out, stream))
            check_ret("acl.mdl.execute_async (head)", acl.mdl.execute_async(head.model_id, head_in, head_out, stream))
            check_ret("acl.rt.memcpy_async D2H", acl.rt.memcpy_async(probs.ctypes.data, probs.nbytes, p_ptr,
                                                                     head.out_size, ACL_MEMCPY_DEVICE_TO_HOST, stream))
            check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        want = reference(x)
        if not np.allclose(probs, want, rtol=1e-4, atol=1e-6):
            raise SampleError(f"{mode}: probabilities {probs} differ from numpy {want}")
        shown = ", ".join(f"{p:.4f}" for p in probs[0])
        print(f"  {mode:<13}: probabilities [{shown}] (sum {probs.sum():.4f}), "
              f"match numpy; 1 copy in, 1 copy out")


def main():
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"model_chain: FAILED: acl.init -> {check}", file=sys.stderr)
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
        print(f"model_chain: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    print("model_chain: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
