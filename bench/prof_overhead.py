#!/usr/bin/env python3
"""Profiling overhead: what acl.mdl.execute costs with profiling off, with the
op-info subscription on, and with a collection to files running, and what the
trace points cost when off (against a build configured with
-DOPENACL_TRACE_POINTS=OFF, where every trace switch is a constant false).

    python3 bench/prof_overhead.py [--models resnet50,bert_base,small,tiny]
        [--models-dir build/models] [--baseline-build build-notrace]
        [--rounds 5] [--json FILE]

In-process comparison (off / subscribe / collect): the modes are interleaved
round by round in one process, each round timing `execs` executions one by
one; the result is the median per mode and its ratio to "off". The
subscription mode drains the pipe on a reader thread (os.read until EOF), as
the pyACL guide's sample does; the collection mode runs acl.prof.init/start
with ACL_PROF_ACL_API | ACL_PROF_TASK_TIME (stop and file writing are outside
the timed region).

Build comparison (trace points compiled in vs out, both with profiling off):
child processes of the two builds alternate, round by round; each reports the
median of its executions.

Models: resnet50 and bert_base from scripts/make_models.py (--models-dir);
`small` is a 4-node model of 6-element tensors (Add, Relu, Mul, Sub: the
per-node costs dominate) and `tiny` a single Relu on 16 floats (the per-call
costs dominate). Timings are reported, never asserted.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("OPENACL_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))

import numpy as np  # noqa: E402

import acl  # noqa: E402

ACL_PROF_ACL_API, ACL_PROF_TASK_TIME, ACL_AICORE_NONE = 0x1, 0x2, 0xFF
EXECS = {"resnet50": 4, "bert_base": 4, "small": 2000, "tiny": 2000}


def check(ret, what):
    if ret != 0:
        raise SystemExit(f"prof_overhead: {what} failed with {ret}: {acl.get_recent_err_msg()}")


def small_models(directory):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "W")
    nodes = [helper.make_node("Add", ["x", "W"], ["t"], name="add"),
             helper.make_node("Relu", ["t"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "s"], ["y"], name="mul"),
             helper.make_node("Sub", ["x", "s"], ["z"], name="sub")]
    info = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "small", [info("x", TensorProto.FLOAT, [2, 3]), info("s", TensorProto.FLOAT, [3])],
                          [info("y", TensorProto.FLOAT, [2, 3]), info("z", TensorProto.FLOAT, [2, 3])], [w])
    paths = {"small": os.path.join(directory, "small.onnx"), "tiny": os.path.join(directory, "tiny.onnx")}
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), paths["small"])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "tiny",
                          [info("x", TensorProto.FLOAT, [1, 16])], [info("y", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), paths["tiny"])
    return paths


def model_files(name, models_dir, tmp):
    if name in ("small", "tiny"):
        return small_models(tmp)[name], []
    meta = json.loads((pathlib.Path(models_dir) / "models.json").read_text())[name]
    inputs = [np.load(pathlib.Path(models_dir) / f) for f in meta["inputs"].values()]
    return str(pathlib.Path(models_dir) / meta["model"]), inputs


class Model:
    def __init__(self, path, inputs):
        self.id, ret = acl.mdl.load_from_file(path)
        check(ret, f"load {path}")
        desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(desc, self.id), "get_desc")
        self.ptrs = []
        self.datasets = []
        for count, size_of in ((acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index),
                               (acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)):
            ds = acl.mdl.create_dataset()
            for i in range(count):
                size = size_of(desc, i)
                ptr, ret = acl.rt.malloc(size, 0)
                check(ret, "malloc")
                self.ptrs.append((ptr, size))
                _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
                check(ret, "add_dataset_buffer")
            self.datasets.append(ds)
        for (ptr, size), array in zip(self.ptrs, inputs):
            array = np.ascontiguousarray(array)
            check(acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(array.tobytes()), min(size, array.nbytes), 1),
                  "memcpy")
        acl.mdl.destroy_desc(desc)

    def timed(self, n):
        out = []
        for _ in range(n):
            t = time.perf_counter_ns()
            acl.mdl.execute(self.id, self.datasets[0], self.datasets[1])
            out.append(time.perf_counter_ns() - t)
        return out


def run_off(model, n, _tmp):
    return model.timed(n)


def run_subscribe(model, n, _tmp):
    r, w = os.pipe()
    cfg = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
    check(acl.prof.model_subscribe(model.id, cfg), "model_subscribe")
    got = [0]

    def drain():
        while True:
            chunk = os.read(r, 80 * 50)
            if not chunk:
                return
            got[0] += len(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    times = model.timed(n)
    check(acl.prof.model_un_subscribe(model.id), "model_un_subscribe")
    reader.join()
    os.close(r)
    acl.prof.destroy_subscribe_config(cfg)
    NODES[model.id] = got[0] // 80 // n
    return times


def run_collect(model, n, tmp):
    check(acl.prof.init(tmp), "prof.init")
    cfg = acl.prof.create_config([0], ACL_AICORE_NONE, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)
    check(acl.prof.start(cfg), "prof.start")
    times = model.timed(n)
    check(acl.prof.stop(cfg), "prof.stop")
    acl.prof.destroy_config(cfg)
    check(acl.prof.finalize(), "prof.finalize")
    return times


NODES = {}  # model id -> records per execution (from the subscription)
MODES = {"off": run_off, "subscribe": run_subscribe, "collect": run_collect}


def in_process(names, models_dir, rounds):
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path, inputs = model_files(name, models_dir, tmp)
            model = Model(path, inputs)
            model.timed(2)  # warm-up
            samples = {m: [] for m in MODES}
            for _ in range(rounds):
                for mode, fn in MODES.items():
                    samples[mode] += fn(model, EXECS[name], tmp)
            med = {m: statistics.median(s) for m, s in samples.items()}
            low = {m: min(s) for m, s in samples.items()}
            results[name] = {m: {"median_us": med[m] / 1000, "ratio": med[m] / med["off"], "min_us": low[m] / 1000,
                                 "min_ratio": low[m] / low["off"], "n": len(samples[m])} for m in MODES}
            results[name]["nodes_per_execution"] = NODES.get(model.id)
            line = ", ".join(f"{m} {med[m] / 1000:.1f} us ({med[m] / med['off']:.3f}; min {low[m] / 1000:.1f} us, "
                             f"{low[m] / low['off']:.3f})" for m in MODES)
            print(f"{name} ({NODES.get(model.id)} nodes): {line}", flush=True)
    return results


def child(name, models_dir, n):
    with tempfile.TemporaryDirectory() as tmp:
        path, inputs = model_files(name, models_dir, tmp)
        model = Model(path, inputs)
        model.timed(2)
        t = model.timed(n)
        print(statistics.median(t), min(t))


def builds(names, models_dir, rounds, baseline):
    results = {}
    for name in names:
        med = {"trace points": [], "no trace points": []}
        low = {"trace points": [], "no trace points": []}
        for _ in range(rounds):
            for label, build in (("trace points", BUILD), ("no trace points", pathlib.Path(baseline))):
                env = dict(os.environ, OPENACL_BUILD_DIR=str(build))
                out = subprocess.run([sys.executable, __file__, "--child", name, "--models-dir", str(models_dir)],
                                     env=env, capture_output=True, text=True, check=True).stdout
                med[label].append(float(out.split()[-2]))
                low[label].append(float(out.split()[-1]))
        a, b = statistics.median(med["trace points"]), statistics.median(med["no trace points"])
        la, lb = min(low["trace points"]), min(low["no trace points"])
        results[name] = {"trace_points_us": a / 1000, "no_trace_points_us": b / 1000, "ratio": a / b,
                         "min_trace_points_us": la / 1000, "min_no_trace_points_us": lb / 1000, "min_ratio": la / lb}
        print(f"{name}: off with trace points {a / 1000:.2f} us, without {b / 1000:.2f} us, ratio {a / b:.3f}; "
              f"min {la / 1000:.2f} vs {lb / 1000:.2f} us, ratio {la / lb:.3f}", flush=True)
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="resnet50,bert_base,small,tiny")
    p.add_argument("--models-dir", default=str(BUILD / "models"))
    p.add_argument("--baseline-build", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", default=None)
    p.add_argument("--child", default=None)
    args = p.parse_args()
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "set_device")
    if args.child:
        child(args.child, args.models_dir, EXECS[args.child])
        acl.finalize()
        return
    names = args.models.split(",")
    report = {"load_average": os.getloadavg()[0],
              "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY") if k in os.environ},
              "modes": in_process(names, args.models_dir, args.rounds)}
    if args.baseline_build:
        report["builds"] = builds(names, args.models_dir, args.rounds, args.baseline_build)
    report["load_average_end"] = os.getloadavg()[0]
    acl.finalize()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
