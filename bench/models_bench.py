#!/usr/bin/env python3
"""Real models side by side: OpenACL (Python and C) next to onnxruntime and OpenVINO.

    python3 bench/models_bench.py [--quick] [--models a,b] [--threads 1,2] [--batches 1,8]
                                  [--json FILE] [--md FILE] [--model-file PATH] [--cold-load]

1. Models: scripts/make_models.py writes them into build/models (cached by its
   STAMP); batch N > 1 comes from its `--batch N` (same weights, the seeded
   batch-1 inputs tiled). `--model-file PATH` benchmarks any ONNX file with
   static input shapes instead (seeded random inputs, its own batch).
2. For each (model, batch, threads) cell, four child processes, one per
   runtime (two thread pools in one process fight over the cores):
     openacl_py   acl.mdl on the .om built by build/bin/atc, device buffers
                  prepared once, acl.mdl.execute in a loop (OMP_NUM_THREADS=t)
     openacl_c    build/bin/model_bench on the same .om (OMP_NUM_THREADS=t)
     onnxruntime  intra_op_num_threads=t, inter_op_num_threads=1, inputs and
                  outputs bound once (run_with_iobinding)
     openvino     CPU, INFERENCE_NUM_THREADS=t, PERFORMANCE_HINT=LATENCY,
                  INFERENCE_PRECISION_HINT=f32 (it would pick bf16 on CPUs
                  that have it, which is not the comparison we want)
   A cell's four processes run on the same t CPUs (the first t this one may
   use; --no-pin leaves them to the scheduler, which kept a process on the
   CPU it last ran on: on a VM whose one vCPU turned slow for a while, the
   runtimes that happened to sit there ran 1.4x slower for the whole cell).
   Each loads its model (timed; its files read through the page cache just
   before, or with --cold-load dropped from it: the load then reads them
   from disk, except pages an earlier process of the cell still maps) and
   runs warm-up executes; then rounds are interleaved (A, B, C, D, A, B,
   ...) so machine noise hits all alike. Each
   turn starts with --turn-warmup executes (default 1) outside the median:
   the first execute after another process's turn runs on caches that
   process left (and openacl_c, after openacl_py on the same .om, on warm
   ones), so it measures the turn's place more than the runtime; they are
   kept in the JSON (turn_first_median_ms). Median and p90 are over the
   turns' other executes.
3. Outputs are compared after the last round: each runtime against
   onnxruntime (rtol 1e-3, atol 1e-4 times the output's largest magnitude
   where that is below 1); a mismatch marks the row, it does not stop the
   run.
4. FLOPs are counted from the ONNX graph (Conv, ConvTranspose, MatMul, Gemm;
   2 per multiply-add, shapes from onnx shape inference); the peak is measured
   in the same run by build/bin/peak_flops.

Writes a Markdown table (stdout, --md) and JSON (--json, default
bench/results/models.json), then one row per cell: OpenACL's two ratios
beside the cell's ceiling (the faster peer's median over the time the
model's FLOPs take at the measured peak). Timings are reported, never
asserted.
"""
import argparse
import functools
import json
import os
import pathlib
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("OPENACL_BUILD_DIR", ROOT / "build"))
MODELS_DIR = BUILD / "models"
DEFAULT_MODELS = "resnet50,mobilenet_v2,bert_base,lraspp_mobilenet"
RUNTIMES = ("openacl_py", "openacl_c", "onnxruntime", "openvino")
PEERS = ("onnxruntime", "openvino")
RTOL, ATOL = 1e-3, 1e-4
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


# ---------------------------------------------------------------- FLOPs
def count_flops(onnx_path):
    """FLOPs of one execute of the model: 2 x multiply-adds of Conv,
    ConvTranspose, MatMul and Gemm (the rest is memory-bound and small).
    Returns (flops, ops_without_shapes)."""
    import onnx
    # data_prop: sizes computed from Shape/Concat (LR-ASPP's Resize) become known.
    model = onnx.shape_inference.infer_shapes(onnx.load(str(onnx_path)), data_prop=True)
    g = model.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = [d.dim_value for d in dims]
    for t in g.initializer:
        shapes[t.name] = list(t.dims)

    def prod(xs):
        p = 1
        for x in xs:
            p *= x
        return p

    flops, unknown = 0, 0
    for n in g.node:
        if n.op_type not in ("Conv", "ConvTranspose", "MatMul", "Gemm"):
            continue
        ins = [shapes.get(i) for i in n.input[:2]]
        out = shapes.get(n.output[0])
        if None in ins or out is None:
            unknown += 1
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        x, w = ins
        # Grouped convs need no `group`: the weight's dim 1 is already per group.
        if n.op_type == "Conv":  # each output element: Cin/group x kernel MACs; W [Cout, Cin/group, k...]
            macs = prod(out) * (w[1] * prod(w[2:]))
        elif n.op_type == "ConvTranspose":  # each input element scatters into Cout/group x kernel; W [Cin, Cout/group, k...]
            macs = prod(x) * (w[1] * prod(w[2:]))
        elif n.op_type == "MatMul":  # output [..., M, N], K = A's last dim
            macs = prod(out) * x[-1]
        else:  # Gemm: [M, N] = op(A) [M, K] x op(B)
            k = x[0] if attrs.get("transA", 0) else x[-1]
            macs = prod(out) * k
        flops += 2 * macs
    return flops, unknown


# ---------------------------------------------------------------- workers (child processes)
def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def memory_report():
    """Peak resident memory of this process. VmHWM is the high-water mark of
    this process's own address space; ru_maxrss is not: Linux carries the
    parent's high-water mark across fork+exec, so every child reported the
    driver's peak (2.1 GB after it had read BERT's graph). Both are kept."""
    import resource
    rep = {"ru_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                rep["vmhwm_kb"] = int(line.split()[1])
    except OSError:
        pass
    return rep


def worker(args):
    """One runtime in its own process. Protocol on stdin/stdout (JSON lines):
    after load + warm-up it says {"ready", "load_ms"}; "run K" answers
    {"times_ms": [...]}; "quit" writes the outputs (raw bytes, in output
    order) to --dump and answers {"vmhwm_kb", "ru_maxrss_kb", ...}."""
    import numpy as np
    inputs = [(name, np.load(path)) for name, path in json.loads(args.worker_inputs)]
    t = args.worker_threads
    kind = args.worker
    extra = {}
    if kind in ("openacl_py", "openacl_onnx_load"):
        sys.path.insert(0, str(BUILD / "python"))
        import acl

        def check(ret, what):
            if ret != 0:
                raise SystemExit(f"{what} failed with {ret}: {acl.get_recent_err_msg()}")
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(0), "acl.rt.set_device")
        path = args.worker_onnx if kind == "openacl_onnx_load" else args.worker_om
        t0 = time.perf_counter()
        model_id, ret = acl.mdl.load_from_file(path)
        load_ms = (time.perf_counter() - t0) * 1e3
        check(ret, f"acl.mdl.load_from_file({path})")
        if kind == "openacl_onnx_load":
            say({"ready": True, "load_ms": load_ms})
            sys.stdin.readline()
            say(memory_report())
            return 0
        desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(desc, model_id), "get_desc")
        ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        out_ptrs = []
        for i, (name, arr) in enumerate(inputs):
            size = acl.mdl.get_input_size_by_index(desc, i)
            arr = np.ascontiguousarray(arr)
            if size != arr.nbytes:
                raise SystemExit(f"input {i} ({name}): the model takes {size} bytes, the data has {arr.nbytes}")
            ptr, ret = acl.rt.malloc(size, 0)
            check(ret, "malloc")
            check(acl.rt.memcpy(ptr, size, arr.ctypes.data, size, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
            _, ret = acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(ptr, size))
            check(ret, "add_dataset_buffer")
        for i in range(acl.mdl.get_num_outputs(desc)):
            size = acl.mdl.get_output_size_by_index(desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            check(ret, "malloc")
            out_ptrs.append((ptr, size))
            _, ret = acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(ptr, size))
            check(ret, "add_dataset_buffer")
        execute = acl.mdl.execute

        def run():
            execute(model_id, ins, outs)

        def outputs():
            res = []
            for ptr, size in out_ptrs:
                host = np.empty(size, np.uint8)
                check(acl.rt.memcpy(host.ctypes.data, size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST), "memcpy")
                res.append(host)
            return res
    elif kind == "onnxruntime":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = t
        so.inter_op_num_threads = 1
        t0 = time.perf_counter()
        sess = ort.InferenceSession(args.worker_onnx, so, providers=["CPUExecutionProvider"])
        load_ms = (time.perf_counter() - t0) * 1e3
        feed = {name: np.ascontiguousarray(arr) for name, arr in inputs}
        first = sess.run(None, feed)
        # Bound once, as OpenACL's device buffers are: no allocation per run.
        binding = sess.io_binding()
        for name, arr in feed.items():
            binding.bind_cpu_input(name, arr)
        bufs = []
        for o, ref in zip(sess.get_outputs(), first):
            buf = np.empty_like(ref)
            binding.bind_output(o.name, "cpu", 0, buf.dtype, list(buf.shape), buf.ctypes.data)
            bufs.append(buf)
        extra["outputs"] = [[str(b.dtype), list(b.shape)] for b in bufs]

        def run():
            sess.run_with_iobinding(binding)

        def outputs():
            return bufs
    elif kind == "openvino":
        import openvino as ov
        core = ov.Core()
        t0 = time.perf_counter()
        model = core.read_model(args.worker_onnx)
        compiled = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": str(t), "PERFORMANCE_HINT": "LATENCY",
                                                     "INFERENCE_PRECISION_HINT": "f32"})
        load_ms = (time.perf_counter() - t0) * 1e3
        req = compiled.create_infer_request()
        keep = []
        for name, arr in inputs:
            arr = np.ascontiguousarray(arr)
            keep.append(arr)
            req.set_tensor(name, ov.Tensor(arr, shared_memory=True))

        def run():
            req.infer()

        def outputs():
            return [np.array(req.get_output_tensor(i).data) for i in range(len(compiled.outputs))]
        run()
        extra["outputs"] = [[str(o.dtype), list(o.shape)] for o in outputs()]
    else:
        raise SystemExit(f"unknown runtime {kind}")

    for _ in range(args.warmup):
        run()
    say({"ready": True, "load_ms": load_ms})
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 2 and parts[0] == "run":
            times = []
            for _ in range(int(parts[1])):
                t0 = time.perf_counter()
                run()
                times.append((time.perf_counter() - t0) * 1e3)
            say({"times_ms": times})
        else:
            break
    with open(args.worker_dump, "wb") as f:
        for arr in outputs():
            f.write(np.ascontiguousarray(arr).tobytes())
    say({**memory_report(), **extra})
    return 0


# ---------------------------------------------------------------- driver side
class Child:
    """A runtime's process; reads its JSON lines (anything else it prints is ignored)."""

    def __init__(self, name, argv, env, tmp, cpus=None):
        self.name, self.error, self.times, self.first, self.load_ms, self.final = name, None, [], [], None, {}
        self.stderr_path = os.path.join(tmp, f"{name}.stderr")
        with open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                                         text=True, bufsize=1,
                                         preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)

    def reply(self, timeout=1800):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise RuntimeError("no answer (timeout)")
            line = self.proc.stdout.readline()
            if not line:
                self.proc.wait()
                err = open(self.stderr_path).read().strip().splitlines()
                # The last line of a traceback is the exception itself.
                raise RuntimeError(f"exited with {self.proc.returncode}: {err[-1] if err else 'no message'}")
            if line.startswith("{"):
                return json.loads(line)

    def send(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def fail(self, e):
        self.error = str(e)[-300:]
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def machine_facts():
    from importlib import metadata
    cpu, flags = "unknown", set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and cpu == "unknown":
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    versions = {}
    for dist in ("onnxruntime", "openvino", "numpy", "onnx"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        # Untracked files (earlier results) do not change what was measured.
        if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                          capture_output=True, text=True).stdout.strip():
            commit += "+dirty"
    except OSError:
        commit = None
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": cpu, "cores": os.cpu_count(),
            "avx2": "avx2" in flags, "avx512f": "avx512f" in flags, "kernel": platform.release(),
            "python": platform.python_version(), "versions": versions, "commit": commit,
            "loadavg_before": list(os.getloadavg())}


def measure_peak(max_threads, quick):
    exe = BUILD / "bin" / "peak_flops"
    if not exe.exists():
        print(f"models_bench: {exe} missing (ninja -C {BUILD} peak_flops); no % of peak", file=sys.stderr)
        return None
    out = subprocess.run([str(exe), "--threads", str(max_threads), "--ms", "50" if quick else "200", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def named_models(names, batches):
    """(name, batch, onnx path, [(input name, npy path)]) from make_models.py's index files."""
    gen = ["/usr/bin/python3", str(ROOT / "scripts" / "make_models.py"), str(MODELS_DIR)]
    specs = []
    for batch in batches:
        cmd = gen + (["--batch", str(batch)] if batch > 1 else [])
        print("==> " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        index = json.load(open(MODELS_DIR / ("models.json" if batch == 1 else f"models_b{batch}.json")))
        for name in names:
            if name not in index:
                raise SystemExit(f"models_bench: no model {name!r} (make_models.py has {', '.join(index)})")
            info = index[name]
            specs.append((name, batch, MODELS_DIR / info["model"],
                          [(k, MODELS_DIR / v) for k, v in info["inputs"].items()]))
    return specs


def file_model(path, tmp):
    """An arbitrary ONNX file: seeded random inputs of its static input shapes."""
    import numpy as np
    import onnx
    g = onnx.load(str(path), load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    rng = np.random.default_rng(0)
    inputs, batch = [], 1
    for vi in g.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
        if None in dims:
            raise SystemExit(f"models_bench: input {vi.name} of {path} has a free dim; give static shapes")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        arr = (rng.integers(0, 2, dims) if np.issubdtype(dtype, np.integer) else rng.uniform(-1, 1, dims)).astype(dtype)
        f = pathlib.Path(tmp) / f"{vi.name}.npy"
        np.save(f, arr)
        inputs.append((vi.name, f))
        if not inputs[:-1] and dims:
            batch = dims[0]
    return [(pathlib.Path(path).stem, batch, pathlib.Path(path), inputs)]


def build_om(onnx_path, out_dir):
    om = pathlib.Path(out_dir) / onnx_path.stem
    t0 = time.perf_counter()
    r = subprocess.run([str(BUILD / "bin" / "atc"), f"--model={onnx_path}", "--framework=5", f"--output={om}",
                        "--soc_version=Ascend310P3"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"models_bench: atc failed on {onnx_path}: {r.stderr.strip()[-500:]}")
    return pathlib.Path(f"{om}.om"), time.perf_counter() - t0


@functools.lru_cache(maxsize=None)
def model_files(path):
    """The files a runtime reads to load `path`: the file itself and, for an
    ONNX model, the external-data files its initializers name (parsed once
    per model, not per cell)."""
    files = [pathlib.Path(path)]
    if str(path).endswith(".onnx"):
        import onnx
        g = onnx.load(str(path), load_external_data=False).graph
        for t in g.initializer:
            for e in t.external_data:
                if e.key == "location":
                    f = pathlib.Path(path).parent / e.value
                    if f not in files:
                        files.append(f)
    return tuple(files)


def set_page_cache(files, cold):
    """Before a timed load: cold, drop the files from the page cache (the load
    then reads them from disk); else read them through it, so that the load
    measures the runtime and not what the machine happened to keep. Some VMs
    reclaim page cache steadily: on the Intel Xeon host, 45 MB of a 983 MB
    .om went in 30 idle seconds, and the first load of a cell paid for
    reading them back."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            if cold:
                os.fsync(fd)  # pages still dirty from writing (atc's .om) cannot be dropped
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            else:
                while os.read(fd, 8 << 20):
                    pass
        finally:
            os.close(fd)


def cell_cpus(threads):
    """The first `threads` CPUs this process may use, for every runtime of a
    cell; None where that is all of them (nothing to pin)."""
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed[:threads]) if threads < len(allowed) else None


def run_cell(spec, om, threads, runtimes, opts, tmp):
    import numpy as np
    name, batch, onnx_path, inputs = spec
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cpus = cell_cpus(threads) if opts.pin else None
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    common = ["--worker-onnx", str(onnx_path), "--worker-om", str(om), "--worker-threads", str(threads),
              "--worker-inputs", json.dumps([(k, str(v)) for k, v in inputs]), "--warmup", str(opts.warmup)]
    raw = []
    for i, (_, f) in enumerate(inputs):
        r = pathlib.Path(tmp) / f"input_{i}.bin"
        np.ascontiguousarray(np.load(f)).tofile(r)
        raw += ["--input", str(r)]
    children = {}
    files = {"om": (om,), "onnx": model_files(onnx_path)}
    # Started and loaded one after another: load times are not disturbed by each other.
    for rt in runtimes:
        set_page_cache(files["om" if rt.startswith("openacl") else "onnx"], opts.cold_load)
        dump = os.path.join(tmp, f"{rt}.out")
        if rt == "openacl_c":
            exe = BUILD / "bin" / "model_bench"
            argv = [str(exe), str(om), *raw, "--dump", dump, "--warmup", str(opts.warmup), "--serve"]
        else:
            argv = me + ["--worker", rt, "--worker-dump", dump] + common
        c = children[rt] = Child(rt, argv, env, tmp, cpus)
        c.dump = dump
        try:
            c.load_ms = c.reply()["load_ms"]
        except (RuntimeError, OSError, KeyError) as e:
            c.fail(e)
    live = [c for c in children.values() if not c.error]
    for _ in range(opts.rounds):
        for c in live:
            if c.error:
                continue
            try:
                c.send(f"run {opts.turn_warmup + opts.iters}")
                times = c.reply()["times_ms"]
                c.first += times[:opts.turn_warmup]
                c.times += times[opts.turn_warmup:]
            except (RuntimeError, OSError, KeyError) as e:
                c.fail(e)
            time.sleep(opts.gap_ms / 1e3)  # let its pool's workers go idle before the next one runs
    for c in live:
        if c.error:
            continue
        try:
            c.send("quit")
            c.final = c.reply()
            c.proc.wait(timeout=600)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            c.fail(e)
    # OpenACL's ONNX load (the library compiles the graph), in a process of its own.
    onnx_load = {}
    if "openacl_py" in runtimes:
        set_page_cache(files["onnx"], opts.cold_load)
        c = Child("openacl_onnx_load", me + ["--worker", "openacl_onnx_load", "--worker-dump", os.devnull] + common,
                  env, tmp)
        try:
            onnx_load["load_ms"] = c.reply()["load_ms"]
            c.send("quit")
            onnx_load.update(c.reply())
            c.proc.wait(timeout=60)
        except (RuntimeError, OSError, KeyError) as e:
            c.fail(e)
            onnx_load["error"] = c.error

    # Agreement with onnxruntime's outputs (the reference; OpenVINO's when it is missing).
    ref_rt = next((rt for rt in ("onnxruntime", "openvino") if rt in children and not children[rt].error), None)
    ref = layout = None
    if ref_rt:
        layout = children[ref_rt].final.get("outputs")
        ref = np.fromfile(children[ref_rt].dump, np.uint8)
    row = {}
    for rt, c in children.items():
        r = {"error": c.error} if c.error else {}
        if c.times:
            med, p90 = statistics.median(c.times), percentile(c.times, 0.9)
            r.update(median_ms=med, p90_ms=p90, executes=len(c.times), throughput=batch / (med / 1e3))
        if c.first:
            r["turn_first_median_ms"] = statistics.median(c.first)
        if c.load_ms is not None:
            r["load_ms"] = c.load_ms
        if "vmhwm_kb" in c.final or "ru_maxrss_kb" in c.final:
            r["peak_rss_mb"] = c.final.get("vmhwm_kb", c.final.get("ru_maxrss_kb")) / 1024
            r["ru_maxrss_mb"] = c.final.get("ru_maxrss_kb", 0) / 1024
        if rt != ref_rt and ref is not None and not c.error:
            got = np.fromfile(c.dump, np.uint8)
            if got.nbytes != ref.nbytes:
                r.update(agree=False, max_abs_diff=None, note=f"{got.nbytes} output bytes, reference {ref.nbytes}")
            else:
                ok, worst = outputs_agree(ref, got, layout)
                r.update(agree=ok, max_abs_diff=worst)
        row[rt] = r
    if onnx_load:
        row["openacl_py"]["onnx_load_ms"] = onnx_load.get("load_ms")
        if "vmhwm_kb" in onnx_load:
            row["openacl_py"]["onnx_load_peak_rss_mb"] = onnx_load["vmhwm_kb"] / 1024
        if "error" in onnx_load:
            row["openacl_py"]["onnx_load_error"] = onnx_load["error"]
    return {"model": name, "batch": batch, "threads": threads, "reference": ref_rt, "runtimes": row}


def outputs_agree(ref, got, layout):
    """(agree, max abs diff) of two runtimes' outputs, raw bytes laid out as
    [(dtype, shape), ...]: np.allclose with RTOL, and ATOL scaled down to an
    output's largest reference magnitude where that is below 1 (seeded
    random weights leave MobileNetV2's logits near 1e-9, where a plain 1e-4
    would pass anything)."""
    import numpy as np
    worst, ok, off = 0.0, True, 0
    for dtype, shape in layout:
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        a = ref[off:off + n].view(dtype).astype(np.float64)
        b = got[off:off + n].view(dtype).astype(np.float64)
        off += n
        if not a.size:
            continue
        worst = max(worst, float(np.max(np.abs(a - b))))
        scale = min(1.0, float(np.max(np.abs(a))))
        ok = ok and bool(np.allclose(b, a, rtol=RTOL, atol=ATOL * scale))
    return ok, worst


def derive(cell, flops, peak):
    """Ratios against the best peer, GFLOP/s and % of peak; and the cell's
    ceiling: the ratio OpenACL would reach with every FLOP at the measured
    FMA peak (the best peer's median over the time the FLOPs take at peak)."""
    rts = cell["runtimes"]
    best = max((rts[p].get("throughput", 0) for p in PEERS if p in rts), default=0)
    p = (peak or {}).get("gflops", {}).get(str(cell["threads"]))
    if best and flops and p:
        cell["best_peer_ms"] = cell["batch"] / best * 1e3
        cell["at_peak_ms"] = flops / (p * 1e9) * 1e3
        cell["ceiling_ratio"] = cell["best_peer_ms"] / cell["at_peak_ms"]
    for rt, r in rts.items():
        if "median_ms" not in r:
            continue
        if rt.startswith("openacl") and best:
            r["ratio_vs_best_peer"] = r["throughput"] / best
        if flops:
            r["gflops"] = flops / (r["median_ms"] / 1e3) / 1e9
            if p:
                r["pct_peak"] = 100 * r["gflops"] / p


def fmt(v, spec, none="–"):
    return none if v is None else format(v, spec)


def markdown(doc):
    lines = []
    m = doc["machine"]
    peak = doc.get("peak") or {}
    lines.append(f"{m['cpu']}, {m['cores']} cores, {peak.get('isa', '?')} peak "
                 + ", ".join(f"{v:.0f} GFLOP/s on {k} thread{'s' if k != '1' else ''}"
                             for k, v in peak.get("gflops", {}).items())
                 + f"; commit {m['commit']}; load average {m['loadavg_before'][0]:.2f} before, "
                 f"{m.get('loadavg_after', [0])[0]:.2f} after"
                 + ("; loads from disk (--cold-load)" if doc.get("settings", {}).get("cold_load") else ""))
    lines.append("")
    lines.append("| model | batch | threads | runtime | median ms | p90 ms | inf/s | vs best peer | GFLOP/s "
                 "| % peak | peak RSS MB | load ms | agrees (max abs diff) |")
    lines.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for cell in doc["cells"]:
        for rt, r in cell["runtimes"].items():
            if r.get("error") and "median_ms" not in r:
                lines.append(f"| {cell['model']} | {cell['batch']} | {cell['threads']} | {rt} | "
                             f"unavailable: {r['error'][:80].replace('|', '/')} | | | | | | | | |")
                continue
            load = fmt(r.get("load_ms"), ".0f")
            if "onnx_load_ms" in r:
                load += f" (.onnx {fmt(r['onnx_load_ms'], '.0f')})"
            if rt == cell["reference"]:
                agree = "reference"
            elif "agree" in r:
                agree = ("ok" if r["agree"] else "**MISMATCH**") + f" ({fmt(r['max_abs_diff'], '.1e')})"
            else:
                agree = "–"
            ratio = fmt(r.get("ratio_vs_best_peer"), ".2f")
            lines.append(f"| {cell['model']} | {cell['batch']} | {cell['threads']} | {rt} | {r['median_ms']:.2f} | "
                         f"{r['p90_ms']:.2f} | {r['throughput']:.1f} | {ratio} | {fmt(r.get('gflops'), '.1f')} | "
                         f"{fmt(r.get('pct_peak'), '.0f')} | {fmt(r.get('peak_rss_mb'), '.0f')} | {load} | {agree} |")
    lines.append("")
    lines.append("OpenACL / the faster peer, and the ceiling: that ratio with every FLOP at the measured FMA "
                 "peak (the faster peer's median over the time the model's FLOPs take at peak).")
    lines.append("")
    lines.append("| model | batch | threads | C / Python | faster peer ms | FLOPs at peak ms | ceiling |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cell in doc["cells"]:
        rts = cell["runtimes"]
        if "ceiling_ratio" not in cell:
            continue
        ratios = " / ".join(fmt(rts.get(rt, {}).get("ratio_vs_best_peer"), ".2f") for rt in ("openacl_c", "openacl_py"))
        lines.append(f"| {cell['model']} | {cell['batch']} | {cell['threads']} | {ratios} | {cell['best_peer_ms']:.2f} | "
                     f"{cell['at_peak_ms']:.2f} | {cell['ceiling_ratio']:.2f} |")
    lines.append("")
    for key, info in doc["models"].items():
        lines.append(f"- {key}: {fmt(info['gflop_per_sample'], '.2f')} GFLOP per inference"
                     + (f" ({info['unknown_ops']} matmul/conv ops without shapes not counted)"
                        if info["unknown_ops"] else "")
                     + f"; atc {info['atc_s']:.1f} s")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few rounds and iterations: a smoke test")
    ap.add_argument("--models", default=DEFAULT_MODELS, help=f"make_models.py names (default {DEFAULT_MODELS})")
    ap.add_argument("--model-file", help="benchmark this ONNX file (static input shapes) instead of --models")
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default 1,<cores>; --quick 1)")
    ap.add_argument("--batches", default=None, help="comma-separated batch sizes (default 1,8; --quick 1)")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 10, --quick 2)")
    ap.add_argument("--iters", type=int, help="executes per runtime per round (default 5, --quick 2)")
    ap.add_argument("--warmup", type=int, help="executes before timing (default 3, --quick 1)")
    ap.add_argument("--turn-warmup", type=int, default=1,
                    help="executes at the start of each turn left out of the median (default 1)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="let the scheduler place each runtime (default: a cell's runtimes share its first t CPUs)")
    ap.add_argument("--gap-ms", type=float, default=20, help="pause between two runtimes' turns")
    ap.add_argument("--cold-load", action="store_true",
                    help="drop each runtime's model files from the page cache before its timed load "
                         "(default: read them into it first)")
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "models.json"))
    ap.add_argument("--md", help="also write the Markdown table here")
    # Worker mode (the child processes); not for people.
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    for a in ("--worker-onnx", "--worker-om", "--worker-inputs", "--worker-dump"):
        ap.add_argument(a, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    q = opts.quick
    opts.rounds = opts.rounds or (2 if q else 10)
    opts.iters = opts.iters or (2 if q else 5)
    opts.warmup = opts.warmup if opts.warmup is not None else (1 if q else 3)
    if opts.worker:
        return worker(opts)
    if opts.turn_warmup < 0 or opts.iters < 1 or opts.rounds < 1:
        raise SystemExit("models_bench: --rounds and --iters need at least 1, --turn-warmup at least 0")

    # --quick keeps to the smallest grid unless told otherwise: a smoke test, under two minutes.
    threads = [int(t) for t in (opts.threads or ("1" if q else f"1,{os.cpu_count() or 1}")).split(",")]
    batches = [int(b) for b in (opts.batches or ("1" if q else "1,8")).split(",")]
    threads = sorted(set(threads))
    runtimes = [r for r in opts.runtimes.split(",") if r]
    for r in runtimes:
        if r not in RUNTIMES:
            raise SystemExit(f"models_bench: unknown runtime {r} (have {', '.join(RUNTIMES)})")
    for exe in ("atc", "model_bench"):
        if not (BUILD / "bin" / exe).exists():
            raise SystemExit(f"models_bench: {BUILD / 'bin' / exe} missing: ninja -C {BUILD} {exe}")

    doc = {"machine": machine_facts(), "settings": {k: getattr(opts, k) for k in ("rounds", "iters", "warmup",
                                                                                    "turn_warmup", "pin", "gap_ms",
                                                                                    "quick", "cold_load")},
           "tolerance": {"rtol": RTOL, "atol": ATOL, "atol_scaled_to_outputs_below_1": True}}
    doc["peak"] = measure_peak(max(threads), q)
    with tempfile.TemporaryDirectory() as tmp:
        if opts.model_file:
            specs = file_model(opts.model_file, tmp)
        else:
            specs = named_models(opts.models.split(","), batches)
        doc["models"], doc["cells"] = {}, []
        for spec in specs:
            name, batch, onnx_path, _ = spec
            om, atc_s = build_om(onnx_path, tmp)
            flops, unknown = count_flops(onnx_path)
            key = f"{name} (batch {batch})"
            doc["models"][key] = {"onnx": str(onnx_path), "gflop_per_execute": flops / 1e9,
                                  "gflop_per_sample": flops / 1e9 / batch, "unknown_ops": unknown, "atc_s": atc_s,
                                  "om_bytes": om.stat().st_size}
            print(f"==> {key}: {flops / 1e9 / batch:.2f} GFLOP per inference, atc {atc_s:.1f} s", flush=True)
            for t in threads:
                with tempfile.TemporaryDirectory(dir=tmp) as cell_tmp:
                    cell = run_cell(spec, om, t, runtimes, opts, cell_tmp)
                derive(cell, flops, doc["peak"])
                doc["cells"].append(cell)
                brief = ", ".join(f"{rt} {r['median_ms']:.2f} ms" if "median_ms" in r else f"{rt} failed"
                                  for rt, r in cell["runtimes"].items())
                print(f"    {t} thread{'s' if t > 1 else ''}: {brief}", flush=True)
            om.unlink()
    doc["machine"]["loadavg_after"] = list(os.getloadavg())
    table = markdown(doc)
    print()
    print(table)
    if opts.json:
        os.makedirs(os.path.dirname(os.path.abspath(opts.json)), exist_ok=True)
        with open(opts.json, "w") as f:
            json.dump(doc, f, indent=1)
    if opts.md:
        with open(opts.md, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
