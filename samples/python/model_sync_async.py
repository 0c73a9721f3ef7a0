#!/usr/bin/env python3
"""Model inference, synchronous then callback-driven asynchronous.

Builds a small ONNX model (a two-layer perceptron, 16 -> 32 -> 10) with
onnx.helper in a temporary folder, then:

  * asks acl.mdl.query_size how much work and weight memory the model needs,
    allocates both with acl.rt.malloc and loads the model into them
    (load_from_file_with_mem), so the program owns every byte the model uses;
  * describes the model (inputs, outputs, dims, sizes);
  * runs it synchronously (acl.mdl.execute) and checks the output with numpy;
  * queues several requests on a stream: input copy, execute_async, output
    copy, then launch_callback whose callback, run by a thread looping
    acl.rt.process_report, checks that request's output as soon as it is
    ready, while the main thread keeps queueing.

    PYTHONPATH=build/python python3 samples/python/model_sync_async.py
"""
import os
import sys
import tempfile
import threading

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_BLOCK = 1
ACL_ERROR_RT_REPORT_TIMEOUT = 507012

DEVICE_ID = 0
IN_FEATURES, HIDDEN, CLASSES = 16, 32, 10
REQUESTS = 6
REPORT_TIMEOUT_MS = 50


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def build_model(folder):
    """x[1,16] -> relu(x W1 + b1) W2 + b2 -> y[1,10]; returns (path, numpy reference)."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((IN_FEATURES, HIDDEN)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(HIDDEN).astype(np.float32) * 0.1
    w2 = rng.standard_normal((HIDDEN, CLASSES)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(CLASSES).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
         helper.make_node("Relu", ["h1"], ["h"], name="relu"),
         helper.make_node("MatMul", ["h", "w2"], ["y0"], name="fc2"),
         helper.make_node("Add", ["y0", "b2"], ["y"], name="bias2")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CLASSES])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")])
    path = os.path.join(folder, "mlp.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path, lambda x: np.maximum(x @ w1 + b1, 0) @ w2 + b2


def malloc(size, cleanup, what):
    ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret(f"acl.rt.malloc ({what}, {size} bytes)", ret)
    cleanup.append(lambda: acl.rt.free(ptr))
    return ptr


def make_dataset(ptrs_sizes, cleanup, what):
    """A dataset of data buffers over the given (device pointer, size) pairs.
    Teardown destroys the dataset first, then its buffers (it does not own them)."""
    dataset = acl.mdl.create_dataset()
    if dataset == 0:
        raise SampleError(f"acl.mdl.create_dataset ({what}) returned 0")
    try:
        for ptr, size in ptrs_sizes:
            buffer = acl.create_data_buffer(ptr, size)
            if buffer == 0:
                raise SampleError(f"acl.create_data_buffer ({what}) returned 0")
            cleanup.append(lambda b=buffer: acl.destroy_data_buffer(b))
            _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
            check_ret(f"acl.mdl.add_dataset_buffer ({what})", ret)
    finally:
        cleanup.append(lambda: acl.mdl.destroy_dataset(dataset))
    return dataset


def describe(desc):
    for kind, count, dims_of, size_of in (
            ("input", acl.mdl.get_num_inputs(desc), acl.mdl.get_input_dims, acl.mdl.get_input_size_by_index),
            ("output", acl.mdl.get_num_outputs(desc), acl.mdl.get_output_dims, acl.mdl.get_output_size_by_index)):
        for i in range(count):
            dims, ret = dims_of(desc, i)
            check_ret(f"acl.mdl.get_{kind}_dims({i})", ret)
            print(f"  {kind} {i}: '{dims['name']}' dims {dims['dims']}, {size_of(desc, i)} bytes")


def run(folder, cleanup):
    model_path, reference = build_model(folder)
    print(f"  model    : {model_path} (MatMul-Add-Relu-MatMul-Add, built with onnx.helper)")

    # --- load into memory the program owns
    work_size, weight_size, ret = acl.mdl.query_size(model_path)
    check_ret("acl.mdl.query_size", ret)
    work_ptr = malloc(max(work_size, 1), cleanup, "work") if work_size else 0
    weight_ptr = malloc(weight_size, cleanup, "weights")
    model_id, ret = acl.mdl.load_from_file_with_mem(model_path, work_ptr, work_size, weight_ptr, weight_size)
    check_ret("acl.mdl.load_from_file_with_mem", ret)
    cleanup.append(lambda: acl.mdl.unload(model_id))
    print(f"  load     : model id {model_id}, work {work_size} bytes, weights {weight_size} bytes "
          f"(both from acl.rt.malloc)")

    desc = acl.mdl.create_desc()
    if desc == 0:
        raise SampleError("acl.mdl.create_desc returned 0")
    cleanup.append(lambda: acl.mdl.destroy_desc(desc))
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    describe(desc)
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    out_size = acl.mdl.get_output_size_by_index(desc, 0)

    # --- synchronous
    in_ptr = malloc(in_size, cleanup, "input")
    out_ptr = malloc(out_size, cleanup, "output")
    inputs = make_dataset([(in_ptr, in_size)], cleanup, "input")
    outputs = make_dataset([(out_ptr, out_size)], cleanup, "output")
    x = np.linspace(-1, 1, IN_FEATURES, dtype=np.float32).reshape(1, IN_FEATURES)
    check_ret("acl.rt.memcpy H2D", acl.rt.memcpy(in_ptr, in_size, x.ctypes.data, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))
    check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))
    y = np.zeros((1, CLASSES), np.float32)
    check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(y.ctypes.data, y.nbytes, out_ptr, out_size, ACL_MEMCPY_DEVICE_TO_HOST))
    if not np.allclose(y, reference(x), rtol=1e-4, atol=1e-5):
        raise SampleError(f"synchronous output {y} differs from numpy {reference(x)}")
    print(f"  execute  : class {int(y.argmax())}, output matches numpy")

    # --- asynchronous, a callback per request
    ctx, ret = acl.rt.get_context()
    check_ret("acl.rt.get_context", ret)
    stop = threading.Event()
    served = []

    def serve():
        check_ret("acl.rt.set_context (callback thread)", acl.rt.set_context(ctx))
        while not stop.is_set():
            ret = acl.rt.process_report(REPORT_TIMEOUT_MS)
            if ret not in (ACL_SUCCESS, ACL_ERROR_RT_REPORT_TIMEOUT):
                served.append(f"process_report returned {ret}")
                return

    server = threading.Thread(target=serve, daemon=True)
    server.start()

    def stop_server():
        stop.set()
        server.join(5)
        return ACL_SUCCESS
    cleanup.append(stop_server)

    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    cleanup.append(lambda: acl.rt.destroy_stream(stream))
    check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(server.ident, stream))
    cleanup.append(lambda: acl.rt.unsubscribe_report(server.ident, stream))

    rng = np.random.default_rng(1)
    requests = []
    for r in range(REQUESTS):
        req = {"id": r, "x": rng.uniform(-1, 1, (1, IN_FEATURES)).astype(np.float32),
               "y": np.zeros((1, CLASSES), np.float32),
               "in": malloc(in_size, cleanup, f"input {r}"), "out": malloc(out_size, cleanup, f"output {r}")}
        req["inputs"] = make_dataset([(req["in"], in_size)], cleanup, f"input {r}")
        req["outputs"] = make_dataset([(req["out"], out_size)], cleanup, f"output {r}")
        requests.append(req)

    def on_done(req):
        """Runs in the serving thread once request `req`'s output copy is done."""
        ok = np.allclose(req["y"], reference(req["x"]), rtol=1e-4, atol=1e-5)
        served.append((req["id"], threading.get_ident(), ok))

    for req in requests:
        check_ret("acl.rt.memcpy_async H2D", acl.rt.memcpy_async(req["in"], in_size, req["x"].ctypes.data,
                                                                 req["x"].nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream))
        check_ret("acl.mdl.execute_async", acl.mdl.execute_async(model_id, req["inputs"], req["outputs"], stream))
        check_ret("acl.rt.memcpy_async D2H", acl.rt.memcpy_async(req["y"].ctypes.data, req["y"].nbytes, req["out"],
                                                                 out_size, ACL_MEMCPY_DEVICE_TO_HOST, stream))
        check_ret("acl.rt.launch_callback", acl.rt.launch_callback(on_done, req, ACL_CALLBACK_BLOCK, stream))
    print(f"  queued   : {REQUESTS} requests (copy in, execute_async, copy out, callback) on one stream")
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    bad = [s for s in served if not isinstance(s, tuple) or not s[2]]
    if bad or [s[0] for s in served] != list(range(REQUESTS)):
        raise SampleError(f"callbacks reported {served}")
    threads = {s[1] for s in served}
    if threads != {server.ident}:
        raise SampleError(f"callbacks ran in threads {threads}, expected {server.ident}")
    print(f"  callback : {len(served)} outputs checked against numpy in thread {server.ident}, in queue order")


def main():
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"model_sync_async: FAILED: acl.init -> {check}", file=sys.stderr)
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
        print(f"model_sync_async: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    print("model_sync_async: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
