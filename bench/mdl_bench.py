#!/usr/bin/env python3
"""Model API benchmarks: execute overhead and load time, OpenACL next to onnxruntime.

    python3 bench/mdl_bench.py [--json FILE] [--quick] [--models resnet50,bert_base]

1. Per-call overhead of a synchronous execute on a model whose work is
   negligible (one Relu on 16 floats): `aclmdlExecute` from C
   (build/bin/mdl_overhead), `acl.mdl.execute` from Python (device buffers
   prepared once, as a pyACL program does), and onnxruntime's
   `InferenceSession.run` on the same model (one intra-op thread, numpy in,
   numpy out: its cheapest everyday path) and `run_with_iobinding` with
   pre-bound buffers. Median / p90 / min of 31 batches.
2. Load time of real models from scripts/make_models.py (build/models):
   `atc` building the .om, `acl.mdl.load_from_file` of the .om and of the
   ONNX file (the library compiles it), and onnxruntime's session creation
   (ORT_ENABLE_ALL, the default). Median of 3 loads each.

Timings are reported, never asserted (docs/benchmarks.md records them).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("OPENACL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))

import numpy as np  # noqa: E402

import acl  # noqa: E402

ACL_MEM_MALLOC_HUGE_FIRST = 0


def check(ret, what):
    if ret != 0:
        raise SystemExit(f"mdl_bench: {what} failed with {ret}: {acl.get_recent_err_msg()}")


def tiny_model(path):
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "tiny", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def batches(fn, calls, count):
    fn(calls)  # warm-up
    samples = []
    for _ in range(count):
        t0 = time.perf_counter_ns()
        fn(calls)
        samples.append((time.perf_counter_ns() - t0) / calls)
    samples.sort()
    return {"median_ns": samples[len(samples) // 2], "p90_ns": samples[min(len(samples) - 1, len(samples) * 9 // 10)],
            "min_ns": samples[0]}


def python_execute(model_path, calls, count):
    model_id, ret = acl.mdl.load_from_file(model_path)
    check(ret, "load_from_file")
    desc = acl.mdl.create_desc()
    check(acl.mdl.get_desc(desc, model_id), "get_desc")
    datasets = []
    for count_of, size_of in ((acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index),
                              (acl.mdl.get_num_outputs, acl.mdl.get_output_size_by_index)):
        ds = acl.mdl.create_dataset()
        for i in range(count_of(desc)):
            size = size_of(desc, i)
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "malloc")
            check(acl.rt.memset(ptr, size, 0, size), "memset")
            _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
            check(ret, "add_dataset_buffer")
        datasets.append(ds)
    execute = acl.mdl.execute
    inp, out = datasets

    def run(n):
        for _ in range(n):
            execute(model_id, inp, out)
    result = batches(run, calls, count)
    check(acl.mdl.unload(model_id), "unload")
    return result


def ort_execute(model_path, calls, count):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    x = np.zeros((1, 16), np.float32)
    feed = {"x": x}

    def run(n):
        for _ in range(n):
            sess.run(None, feed)
    plain = batches(run, calls, count)
    binding = sess.io_binding()
    y = np.zeros((1, 16), np.float32)
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, [1, 16], y.ctypes.data)

    def run_bound(n):
        for _ in range(n):
            sess.run_with_iobinding(binding)
    bound = batches(run_bound, calls, count)
    return plain, bound


def load_times(name, models_dir, tmp, repeats):
    onnx_path = models_dir / f"{name}.onnx"
    if not onnx_path.exists():
        return None
    atc = BUILD / "bin" / "atc"
    om = pathlib.Path(tmp) / name
    t0 = time.perf_counter()
    subprocess.run([str(atc), f"--model={onnx_path}", "--framework=5", f"--output={om}", "--soc_version=Ascend310P3"],
                   check=True, capture_output=True)
    atc_s = time.perf_counter() - t0

    def acl_load(path):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            model_id, ret = acl.mdl.load_from_file(str(path))
            times.append(time.perf_counter() - t0)
            check(ret, f"load_from_file({path})")
            check(acl.mdl.unload(model_id), "unload")
        return statistics.median(times)

    row = {"model": name, "atc_s": atc_s, "om_bytes": os.path.getsize(f"{om}.om"),
           "load_om_s": acl_load(f"{om}.om"), "load_onnx_s": acl_load(onnx_path)}
    try:
        import onnxruntime as ort
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
            times.append(time.perf_counter() - t0)
        row["ort_session_s"] = statistics.median(times)
    except ImportError:
        pass
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--quick", action="store_true", help="fewer batches and loads")
    ap.add_argument("--models", default="resnet50,bert_base")
    args = ap.parse_args()
    count, calls, repeats = (7, 500, 1) if args.quick else (31, 2000, 3)

    check(acl.init(), "init")
    check(acl.rt.set_device(0), "set_device")
    results = {"execute": {}, "load": []}
    with tempfile.TemporaryDirectory() as tmp:
        tiny = os.path.join(tmp, "tiny.onnx")
        tiny_model(tiny)
        c_bench = BUILD / "bin" / "mdl_overhead"
        if c_bench.exists():
            out = subprocess.run([str(c_bench), tiny, "--json", "--batches", str(count), "--calls", str(calls)],
                                 check=True, capture_output=True, text=True).stdout
            results["execute"]["openacl_c"] = json.loads(out)
        results["execute"]["openacl_python"] = python_execute(tiny, calls, count)
        try:
            plain, bound = ort_execute(tiny, calls, count)
            results["execute"]["onnxruntime_run"] = plain
            results["execute"]["onnxruntime_iobinding"] = bound
        except ImportError:
            pass
        for name in args.models.split(","):
            row = load_times(name, BUILD / "models", tmp, repeats)
            if row:
                results["load"].append(row)
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")

    print("execute overhead, one Relu on 16 floats (ns per call): median / p90 / min")
    for k, v in results["execute"].items():
        print(f"  {k:24s} {v['median_ns']:9.0f} {v['p90_ns']:9.0f} {v['min_ns']:9.0f}")
    if results["load"]:
        print("load time (s, median): atc | load .om | load .onnx | onnxruntime session")
        for r in results["load"]:
            print(f"  {r['model']:12s} {r['atc_s']:7.2f} | {r['load_om_s']:7.3f} | {r['load_onnx_s']:7.3f} | "
                  f"{r.get('ort_session_s', float('nan')):7.3f}   (.om {r['om_bytes'] / 1e6:.1f} MB)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
