#!/usr/bin/env python3
"""Collection to files: profile a model with acl.prof.init / start / stop and
read the result folder back.

Builds a small image classifier with onnx.helper, then:

  acl.prof.init(dir)
  config = acl.prof.create_config([0], ACL_AICORE_NONE, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)
  acl.prof.start(config)
  ... copies and executions, synchronous and on a stream ...
  acl.prof.stop(config)          -> dir/PROF_*/ (CSV summaries, Chrome trace)
  acl.prof.destroy_config(config); acl.prof.finalize()

and prints the slowest op types (op_statistic), the API calls
(api_statistic) and where the timeline is: open
PROF_*/timeline/msprof_*.json in https://ui.perfetto.dev. The same folder is
what `tools/msprof/openacl-msprof --output=DIR python3 app.py` writes for an
unmodified program.

    PYTHONPATH=build/python python3 samples/python/prof_collect.py [OUTPUT_DIR]
"""
import csv
import glob
import json
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
ACL_AICORE_NONE = 0xFF
ACL_PROF_ACL_API = 0x1
ACL_PROF_TASK_TIME = 0x2

DEVICE_ID = 0
EXECUTIONS = 3


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def build_model(path):
    rng = np.random.default_rng(3)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p1"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "collect_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])],
        [weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 10, 8), weight("b2", 10)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def read_csv(pattern):
    paths = glob.glob(pattern)
    if len(paths) != 1:
        raise SampleError(f"expected one file {pattern}, found {paths}")
    with open(paths[0], newline="") as f:
        return list(csv.DictReader(f))


def main(out_dir):
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    model_id = None
    ptrs = []
    stream = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "collect_classifier.onnx")
            build_model(path)
            model_id, ret = acl.mdl.load_from_file(path)
            check_ret("acl.mdl.load_from_file", ret)
        image = np.random.default_rng(1).random((1, 3, 32, 32), dtype=np.float32)
        in_ptr, ret = acl.rt.malloc(image.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        out_ptr, ret = acl.rt.malloc(40, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc", ret)
        ptrs += [in_ptr, out_ptr]
        inputs, outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        bufs = [acl.create_data_buffer(in_ptr, image.nbytes), acl.create_data_buffer(out_ptr, 40)]
        acl.mdl.add_dataset_buffer(inputs, bufs[0])
        acl.mdl.add_dataset_buffer(outputs, bufs[1])
        stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)
        result = np.zeros(10, dtype=np.float32)

        # ---- profile ----
        check_ret("acl.prof.init", acl.prof.init(out_dir))
        config = acl.prof.create_config([DEVICE_ID], ACL_AICORE_NONE, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)
        if config == 0:
            raise SampleError(f"acl.prof.create_config failed: {acl.get_recent_err_msg()}")
        check_ret("acl.prof.start", acl.prof.start(config))
        for _ in range(EXECUTIONS):
            check_ret("acl.rt.memcpy", acl.rt.memcpy(in_ptr, image.nbytes, acl.util.bytes_to_ptr(image.tobytes()),
                                                     image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))
            check_ret("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))
        check_ret("acl.mdl.execute_async", acl.mdl.execute_async(model_id, inputs, outputs, stream))
        check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(result.ctypes.data, 40, out_ptr, 40,
                                                             ACL_MEMCPY_DEVICE_TO_HOST, stream))
        check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        check_ret("acl.prof.stop", acl.prof.stop(config))
        check_ret("acl.prof.destroy_config", acl.prof.destroy_config(config))
        check_ret("acl.prof.finalize", acl.prof.finalize())
        if abs(float(result.sum()) - 1.0) > 1e-4:
            raise SampleError(f"softmax output sums to {result.sum()}")

        # ---- read it back ----
        folders = sorted(glob.glob(os.path.join(out_dir, "PROF_*")))
        if not folders:
            raise SampleError(f"no PROF_* folder in {out_dir}")
        prof = folders[-1]
        ops = read_csv(os.path.join(prof, "device_0", "summary", "op_summary_*.csv"))
        per_run = len(ops) // (EXECUTIONS + 1)
        if per_run == 0 or len(ops) % (EXECUTIONS + 1):
            raise SampleError(f"{len(ops)} op rows for {EXECUTIONS + 1} executions")
        print(f"op_summary: {len(ops)} rows, {per_run} ops per execution, streams "
              f"{sorted({r['Stream ID'] for r in ops})}")
        print(f"first op: {ops[0]['Op Name']} ({ops[0]['OP Type']}) inputs {ops[0]['Input Shapes']} "
              f"{ops[0]['Input Data Types']} -> {ops[0]['Output Shapes']}")
        print("slowest op types (op_statistic):")
        for row in read_csv(os.path.join(prof, "device_0", "summary", "op_statistic_*.csv"))[:3]:
            print(f"  {row['OP Type']:<18} count {row['Count']:>3}  total {row['Total Time(us)']:>10} us  "
                  f"{row['Ratio(%)']:>7} %")
        api = {r["API Name"]: r for r in read_csv(os.path.join(prof, "host", "summary", "api_statistic_*.csv"))}
        print(f"api_statistic: aclmdlExecute x{api['aclmdlExecute']['Count']}, "
              f"aclrtMemcpy x{api['aclrtMemcpy']['Count']}, {len(api)} functions")
        timeline = glob.glob(os.path.join(prof, "timeline", "msprof_*.json"))[0]
        events = json.load(open(timeline))["traceEvents"]
        rows = sorted({e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"})
        print(f"timeline: {len(events)} events, rows {rows}")
        print(f"open {timeline} in https://ui.perfetto.dev")
        for b in bufs:
            acl.destroy_data_buffer(b)
        acl.mdl.destroy_dataset(inputs)
        acl.mdl.destroy_dataset(outputs)
    finally:
        if stream is not None:
            acl.rt.destroy_stream(stream)
        if model_id is not None:
            acl.mdl.unload(model_id)
        for p in ptrs:
            acl.rt.free(p)
        acl.rt.reset_device(DEVICE_ID)
        acl.finalize()
    print("prof_collect: OK")
    return 0


if __name__ == "__main__":
    try:
        if len(sys.argv) > 1:
            sys.exit(main(sys.argv[1]))
        with tempfile.TemporaryDirectory() as d:
            sys.exit(main(d))
    except SampleError as e:
        print(f"prof_collect: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
