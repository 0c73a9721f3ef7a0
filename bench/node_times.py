#!/usr/bin/env python3
"""Per-node times of one model, OpenACL beside onnxruntime or OpenVINO, to find
the nodes where OpenACL loses.

    python3 bench/node_times.py MODEL.onnx [--input NAME=FILE.npy ...]
        [--peer onnxruntime|openvino] [--threads N] [--runs N] [--top N]
        [--group REGEX] [--json FILE]

1. onnxruntime runs the model `--runs` times with its profiler on
   (SessionOptions.enable_profiling); each node's kernel time is the median
   over the runs after the first quarter. A node onnxruntime made (fused:
   named after an output, `..._nchwc`) is charged to the Conv / Gemm /
   MatMul its chain starts from, found by walking the graph back from that
   output; one with a new name (`Gelu_token_12`) is listed as unmatched.
   With `--peer openvino`, OpenVINO (float32, as bench/models_bench.py runs
   it) runs with PERF_COUNT on and each executed node's real_time after the
   last run is taken; its nodes are named after the ONNX node (a Conv's
   with `/WithoutBiases` appended) or after an output tensor, and a Reorder
   is charged to the node it feeds (the node whose name ends its own).
2. OpenACL: `openacl-run MODEL --times --repeat N` (each node's median
   over the N runs; fused nodes keep the first node's name).
3. Rows joined by node name, slowest difference first (a peer's node that
   OpenACL fused into the one before it gets a row of its own, "(fused)",
   with 0 ms on OpenACL's side); `--group REGEX`
   sums the rows whose names match after REGEX's matches are replaced by
   "*" (`--group 'layers\\.\\d+'` gives one row per kind of layer).

The profiler slows onnxruntime (about 20% on MobileNetV2), so a small
difference says little; a node 1.3x slower than its peer says a lot.
Inputs not given are random (numpy, seed 0), from the model's static shapes.
Nodes without a name are named OPTYPE_INDEX in a temporary copy first.
Nothing is asserted; this is a tool for reading.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("OPENACL_BUILD_DIR", ROOT / "build"))
ANCHORS = ("Conv", "Gemm", "MatMul", "ConvTranspose")


def random_input(vi, rng):
    import onnx
    t = vi.type.tensor_type
    dims = [d.dim_value for d in t.shape.dim]
    if any(d <= 0 for d in dims):
        raise SystemExit(f"node_times: input '{vi.name}' has a free dimension; give it with --input")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 2, size=dims).astype(dtype)
    return rng.standard_normal(dims).astype(dtype)


def onnxruntime_times(path, feeds, threads, runs):
    import onnx
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        opts.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        for _ in range(runs):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    samples = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            samples[e["name"][: -len("_kernel_time")]].append(e["dur"] / 1e3)
    graph = onnx.load(str(path), load_external_data=False).graph
    producer = {o: n for n in graph.node for o in n.output}
    by_name = {n.name: n for n in graph.node}
    times, unmatched = collections.defaultdict(float), {}
    for name, v in samples.items():
        ms = float(np.median(v[len(v) // 4:]))
        node = by_name.get(name)
        if node is None:  # a node onnxruntime made: charge the anchor its chain starts from
            node = producer.get(name[:-6] if name.endswith("_nchwc") else name)
            while node is not None and node.op_type not in ANCHORS and node.input and node.input[0] in producer:
                node = producer[node.input[0]]
        if node is None:
            unmatched[name] = ms
        else:
            times[node.name] += ms
    return times, unmatched


def openvino_times(path, feeds, threads, runs):
    import onnx
    import openvino as ov
    compiled = ov.Core().compile_model(str(path), "CPU", {
        "PERF_COUNT": "YES", "INFERENCE_NUM_THREADS": str(threads), "NUM_STREAMS": "1",
        "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    inputs = {p.get_any_name(): feeds[p.get_any_name()] for p in compiled.inputs}
    samples = collections.defaultdict(list)
    for _ in range(runs):
        request.infer(inputs)
        for info in request.get_profiling_info():
            if info.status == info.status.EXECUTED:
                samples[info.node_name].append(info.real_time.total_seconds() * 1e3)
    graph = onnx.load(str(path), load_external_data=False).graph
    producer = {o: n for n in graph.node for o in n.output}
    by_name = {n.name: n for n in graph.node if n.name}

    def onnx_node(name):
        name = name[: -len("/WithoutBiases")] if name.endswith("/WithoutBiases") else name
        node = by_name.get(name) or producer.get(name)
        if node is None:  # a Reorder: named ..._<the node it feeds>
            ends = [k for k in by_name if name.endswith("_" + k)]
            node = by_name[max(ends, key=len)] if ends else None
        return node

    times, unmatched = collections.defaultdict(float), {}
    for name, v in samples.items():
        ms = float(np.median(v[len(v) // 4:]))
        node = onnx_node(name)
        if node is None:
            unmatched[name] = ms
        else:
            times[node.name] += ms
    return times, unmatched


def openacl_times(path, inputs, threads, runs):
    tool = BUILD / "bin" / "openacl-run"
    if not tool.exists():
        raise SystemExit(f"node_times: {tool} not found (build first, or set OPENACL_BUILD_DIR)")
    args = [str(tool), str(path), "--times", "--repeat", str(runs)]
    for name, file in inputs.items():
        args += ["--input", f"{name}={file}"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"node_times: openacl-run failed ({proc.returncode}): {proc.stderr.strip()}")
    times, total = {}, None
    for line in proc.stdout.splitlines():
        m = re.match(r"\s+([\d.]+) ms\s+(\S+) '(.*)'", line)
        if m:
            times[m.group(3)] = (float(m.group(1)), m.group(2))
        m = re.match(r"ran \d+ time\(s\): median ([\d.]+) ms", line)
        if m:
            total = float(m.group(1))
    return times, total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--input", action="append", default=[], help="NAME=FILE.npy (repeatable)")
    p.add_argument("--peer", choices=("onnxruntime", "openvino"), default="onnxruntime")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--group", help="regex: rows whose names differ only there are summed")
    p.add_argument("--json", help="write the rows here")
    a = p.parse_args(argv)

    import onnx
    model = onnx.load(a.model, load_external_data=False)
    given = dict(x.split("=", 1) for x in a.input)
    init_names = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = a.model
        if any(not n.name for n in model.graph.node):
            # Unnamed nodes cannot be joined: both runtimes get a copy with names.
            model = onnx.load(a.model)
            for i, n in enumerate(model.graph.node):
                n.name = n.name or f"{n.op_type}_{i}"
            path = os.path.join(tmp, "named.onnx")
            onnx.save(model, path)
        files, feeds = {}, {}
        for vi in model.graph.input:
            if vi.name in init_names:
                continue
            if vi.name in given:
                files[vi.name] = given[vi.name]
            else:
                files[vi.name] = os.path.join(tmp, f"in{len(files)}.npy")
                np.save(files[vi.name], random_input(vi, rng))
            feeds[vi.name] = np.load(files[vi.name])
        peer_times = openvino_times if a.peer == "openvino" else onnxruntime_times
        ort_t, unmatched = peer_times(path, feeds, a.threads, a.runs)
        ours, total = openacl_times(path, files, a.threads, a.runs)

    rows = []
    for name, (ms, op) in ours.items():
        peer = ort_t.get(name)
        key = re.sub(a.group, "*", name) if a.group else name
        rows.append({"name": key, "op": op, "openacl_ms": ms, "peer_ms": peer, "nodes": 1})
    for name, peer in ort_t.items():  # the peer's node where OpenACL fused it into another
        if name not in ours:
            key = re.sub(a.group, "*", name) if a.group else name
            rows.append({"name": key, "op": "(fused)", "openacl_ms": 0.0, "peer_ms": peer, "nodes": 1})
    if a.group:
        merged = {}
        for r in rows:
            m = merged.setdefault(r["name"], dict(r, openacl_ms=0.0, peer_ms=0.0, nodes=0))
            m["openacl_ms"] += r["openacl_ms"]
            m["peer_ms"] = (m["peer_ms"] or 0.0) + (r["peer_ms"] or 0.0)
            m["nodes"] += 1
        rows = list(merged.values())
    rows.sort(key=lambda r: r["openacl_ms"] - (r["peer_ms"] or 0.0), reverse=True)

    print(f"{a.model}: {a.threads} thread(s), {a.runs} runs; OpenACL median {total} ms, "
          f"sum of {a.peer}'s profiled nodes {sum(ort_t.values()) + sum(unmatched.values()):.3f} ms")
    print(f"{'diff ms':>8} {'openacl':>9} {a.peer[:9]:>9} {'ratio':>6}  op / node")
    for r in rows[: a.top]:
        peer = r["peer_ms"]
        ratio = f"{r['openacl_ms'] / peer:6.2f}" if peer else "     -"
        peer_s = f"{peer:9.3f}" if peer else "        -"
        count = f" (x{r['nodes']})" if r["nodes"] > 1 else ""
        print(f"{r['openacl_ms'] - (peer or 0.0):+8.3f} {r['openacl_ms']:9.3f} {peer_s} {ratio}  "
              f"{r['op']} {r['name']}{count}")
    if unmatched:
        worst = sorted(unmatched.items(), key=lambda kv: -kv[1])[:8]
        print(f"{a.peer} nodes not matched to one of ours:",
              ", ".join(f"{k} {v:.3f}" for k, v in worst))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "peer": a.peer, "threads": a.threads, "runs": a.runs,
                   "openacl_median_ms": total,
                       "rows": rows, "unmatched": unmatched}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
