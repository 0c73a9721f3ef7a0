#!/usr/bin/env python3
"""Single-operator benchmark: aclopExecuteV2 of a small Add with a warm op
cache, from C and from Python, next to onnxruntime running the same Add.

    python3 bench/op_bench.py [--json FILE] [--elements N] [--quick]

1. C: build/bin/op_overhead — aclopExecuteV2 calls queued on a stream (the
   stream synchronised once per batch), and execute + synchronise per call.
2. Python: acl.op.execute_v2 with descs, buffers and stream made once (as a
   pyACL program does), the same two ways.
3. onnxruntime: a one-node Add model, InferenceSession.run (numpy in and out)
   and run_with_iobinding with pre-bound buffers, one intra-op thread.
Median / p90 of 31 batches, per call. Timings are reported, never asserted
(docs/benchmarks.md records them).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("OPENACL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))

import numpy as np  # noqa: E402

import acl  # noqa: E402

ACL_FLOAT = 0
ACL_FORMAT_ND = 2


def check(ret, what):
    if ret != 0:
        raise SystemExit(f"op_bench: {what} failed with {ret}: {acl.get_recent_err_msg()}")


def batches(fn, calls, count):
    fn(calls)  # warm-up (the first call compiles)
    samples = []
    for _ in range(count):
        t0 = time.perf_counter_ns()
        fn(calls)
        samples.append((time.perf_counter_ns() - t0) / calls)
    samples.sort()
    return {"median_ns": samples[len(samples) // 2], "p90_ns": samples[min(len(samples) - 1, len(samples) * 9 // 10)]}


def c_overhead(elements, count, calls):
    exe = BUILD / "bin" / "op_overhead"
    if not exe.exists():
        return None
    out = subprocess.run([str(exe), "--elements", str(elements), "--batches", str(count), "--calls", str(calls),
                          "--json"], capture_output=True, text=True, check=True, timeout=600).stdout
    return json.loads(out)


def python_overhead(elements, count, calls):
    check(acl.init(), "init")
    check(acl.rt.set_device(0), "set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    nbytes = elements * 4
    desc = acl.create_tensor_desc(ACL_FLOAT, [elements], ACL_FORMAT_ND)
    out_desc = acl.create_tensor_desc(ACL_FLOAT, [elements], ACL_FORMAT_ND)
    ptrs, bufs = [], []
    for _ in range(3):
        p, ret = acl.rt.malloc(nbytes, 0)
        check(ret, "malloc")
        check(acl.rt.memset(p, nbytes, 0, nbytes), "memset")
        ptrs.append(p)
        bufs.append(acl.create_data_buffer(p, nbytes))
    ins, outs, in_descs, out_descs = bufs[:2], bufs[2:], [desc, desc], [out_desc]
    execute = acl.op.execute_v2
    sync = acl.rt.synchronize_stream

    def queued(n):
        for _ in range(n):
            execute("Add", in_descs, ins, out_descs, outs, 0, stream)
        sync(stream)

    def round_trip(n):
        for _ in range(n):
            execute("Add", in_descs, ins, out_descs, outs, 0, stream)
            sync(stream)

    try:
        return {"call": batches(queued, calls, count), "sync": batches(round_trip, max(calls // 4, 1), count)}
    finally:
        for b in bufs:
            acl.destroy_data_buffer(b)
        for p in ptrs:
            acl.rt.free(p)
        acl.destroy_tensor_desc(desc)
        acl.destroy_tensor_desc(out_desc)
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(0)
        acl.finalize()


def ort_overhead(elements, count, calls):
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [elements])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [elements])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "add", [x, y], [z])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    a = np.zeros(elements, np.float32)
    feeds = {"x": a, "y": a}

    def run(n):
        for _ in range(n):
            sess.run(None, feeds)

    binding = sess.io_binding()
    binding.bind_cpu_input("x", a)
    binding.bind_cpu_input("y", a)
    out = np.zeros(elements, np.float32)
    binding.bind_output("z", "cpu", 0, np.float32, out.shape, out.ctypes.data)

    def bound(n):
        for _ in range(n):
            sess.run_with_iobinding(binding)

    return {"run": batches(run, calls, count), "iobinding": batches(bound, calls, count),
            "version": ort.__version__}


def us(ns):
    return f"{ns / 1000:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--elements", type=int, default=16)
    ap.add_argument("--quick", action="store_true", help="fewer batches and calls")
    args = ap.parse_args()
    count, calls = (7, 500) if args.quick else (31, 2000)
    res = {"elements": args.elements, "c": c_overhead(args.elements, count, calls),
           "python": python_overhead(args.elements, count, calls),
           "onnxruntime": ort_overhead(args.elements, count, calls)}
    print(f"Add of two float32[{args.elements}], warm cache; per call, median (p90), microseconds")
    if res["c"]:
        c = res["c"]
        print(f"  C       aclopExecuteV2          {us(c['call_median_ns'])} ({us(c['call_p90_ns'])})"
              f"   + synchronize each call {us(c['sync_median_ns'])} ({us(c['sync_p90_ns'])})")
    p = res["python"]
    print(f"  Python  acl.op.execute_v2       {us(p['call']['median_ns'])} ({us(p['call']['p90_ns'])})"
          f"   + synchronize each call {us(p['sync']['median_ns'])} ({us(p['sync']['p90_ns'])})")
    if res["onnxruntime"]:
        o = res["onnxruntime"]
        print(f"  onnxruntime {o['version']} run {us(o['run']['median_ns'])} ({us(o['run']['p90_ns'])})"
              f"   run_with_iobinding {us(o['iobinding']['median_ns'])} ({us(o['iobinding']['p90_ns'])})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
