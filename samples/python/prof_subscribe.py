#!/usr/bin/env python3
"""Op-info subscription: which operator of a model is slow, as pyACL's
profiling guide does it.

Builds a small image classifier (Conv -> Relu -> MaxPool -> Conv -> Relu ->
GlobalAveragePool -> Flatten -> Gemm -> Softmax) with onnx.helper, loads it,
then follows the guide's subscription flow:

  r, w = os.pipe()
  config = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
  acl.prof.model_subscribe(model_id, config)
  a reader thread loops os.read(r, op_desc_size * N) until EOF and decodes
      each chunk with get_op_num / get_op_type_v2 / get_op_name_v2 /
      get_op_start / get_op_end / get_op_duration / get_model_id
  the main thread executes the model
  acl.prof.model_un_subscribe(model_id)   (closes w: the reader sees EOF)
  join the reader, acl.prof.destroy_subscribe_config(config)

and prints the time spent per op type.

    PYTHONPATH=build/python python3 samples/python/prof_subscribe.py
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
ACL_AICORE_NONE = 0xFF

DEVICE_ID = 0
EXECUTIONS = 5
RECORDS_PER_READ = 10  # the guide's N


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def build_model(path):
    rng = np.random.default_rng(7)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "prof_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])],
        [weight("w1", 16, 3, 3, 3), weight("b1", 16), weight("w2", 32, 16, 3, 3), weight("b2", 32),
         weight("w3", 10, 32), weight("b3", 10)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


class OpTable:
    """What the reader thread decoded."""

    def __init__(self):
        self.records = []  # (model_id, op_type, op_name, start, end, duration)
        self.errors = []


def get_model_info(data, data_len, table):
    """Decodes one chunk read from the pipe, as the guide's sample does."""
    op_number, ret = acl.prof.get_op_num(data, data_len)
    if ret != ACL_SUCCESS:
        table.errors.append(f"get_op_num ret={ret}")
        return
    for i in range(op_number):
        model_id = acl.prof.get_model_id(data, data_len, i)
        op_type, ret_t = acl.prof.get_op_type_v2(data, data_len, i)
        op_name, ret_n = acl.prof.get_op_name_v2(data, data_len, i)
        op_start = acl.prof.get_op_start(data, data_len, i)
        op_end = acl.prof.get_op_end(data, data_len, i)
        op_duration = acl.prof.get_op_duration(data, data_len, i)
        if ret_t != ACL_SUCCESS or ret_n != ACL_SUCCESS:
            table.errors.append(f"record {i}: type ret={ret_t}, name ret={ret_n}")
            continue
        table.records.append((model_id, op_type, op_name, op_start, op_end, op_duration))


def prof_data_read(read_fd, table):
    """The reader thread: drains the pipe until the library closes it."""
    buffer_size, ret = acl.prof.get_op_desc_size()
    check_ret("acl.prof.get_op_desc_size", ret)
    batch_buffer_size = buffer_size * RECORDS_PER_READ
    while True:
        chunk = os.read(read_fd, batch_buffer_size)
        if len(chunk) == 0:  # EOF: model_un_subscribe closed the write end
            break
        get_model_info(acl.util.bytes_to_ptr(chunk), len(chunk), table)


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    model_id = None
    buffers = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "prof_classifier.onnx")
            build_model(path)
            model_id, ret = acl.mdl.load_from_file(path)
            check_ret("acl.mdl.load_from_file", ret)

        desc = acl.mdl.create_desc()
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
        datasets = []
        for kind, count, size_of in (("input", acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index),
                                     ("output", acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)):
            dataset = acl.mdl.create_dataset()
            for i in range(count):
                size = size_of(desc, i)
                ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
                check_ret(f"acl.rt.malloc ({kind} {i})", ret)
                buffers.append(ptr)
                buf = acl.create_data_buffer(ptr, size)
                _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
                check_ret("acl.mdl.add_dataset_buffer", ret)
            datasets.append(dataset)
        inputs, outputs = datasets
        image = np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)
        check_ret("acl.rt.memcpy", acl.rt.memcpy(buffers[0], image.nbytes, acl.util.numpy_to_ptr(image),
                                                 image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))

        # ---- the subscription flow ----
        r, w = os.pipe()
        config = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
        if config == 0:
            raise SampleError(f"acl.prof.create_subscribe_config failed: {acl.get_recent_err_msg()}")
        check_ret("acl.prof.model_subscribe", acl.prof.model_subscribe(model_id, config))
        table = OpTable()
        reader = threading.Thread(target=prof_data_read, args=(r, table))
        reader.start()
        for _ in range(EXECUTIONS):
            check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))
        check_ret("acl.prof.model_un_subscribe", acl.prof.model_un_subscribe(model_id))
        reader.join()
        os.close(r)  # w belongs to the library, which closed it
        check_ret("acl.prof.destroy_subscribe_config", acl.prof.destroy_subscribe_config(config))

        # ---- what the reader saw ----
        if table.errors:
            raise SampleError("; ".join(table.errors))
        if not table.records or len(table.records) % EXECUTIONS:
            raise SampleError(f"{len(table.records)} records for {EXECUTIONS} executions")
        per_run = len(table.records) // EXECUTIONS
        names = [rec[2] for rec in table.records[:per_run]]
        for rec in table.records:
            if rec[0] != model_id or rec[5] != rec[4] - rec[3]:
                raise SampleError(f"inconsistent record {rec}")
        print(f"{len(table.records)} op records, {per_run} per execution, model id {model_id}")
        print(f"ops of one execution: {', '.join(names)}")
        by_type = {}
        for rec in table.records:
            count, total = by_type.get(rec[1], (0, 0))
            by_type[rec[1]] = (count + 1, total + rec[5])
        print(f"{'op type':<20}{'count':>6}{'total us':>10}")
        for op_type, (count, total) in sorted(by_type.items(), key=lambda kv: -kv[1][1]):
            print(f"{op_type:<20}{count:>6}{total:>10}")
        for dataset in datasets:
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
            acl.mdl.destroy_dataset(dataset)
        acl.mdl.destroy_desc(desc)
    finally:
        if model_id is not None:
            acl.mdl.unload(model_id)
        for ptr in buffers:
            acl.rt.free(ptr)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    print("prof_subscribe: OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SampleError as e:
        print(f"prof_subscribe: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
