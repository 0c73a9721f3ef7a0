#!/usr/bin/env python3
"""Shape-inference conformance: every ONNX backend node test is imported and
shape-inferred by OpenACL (through `openacl-inspect --json`), and the inferred
dtype and shape of each graph output are compared with the test's expected
output tensors.

    node_shapes.py --build build [--data DIR] [--report FILE] [--update-expected]

Outcomes per test:
  pass        every output's dtype and shape match exactly
  partial     dtypes match, known dims match, some dims left unknown (data-dependent)
  mismatch    a dtype or a known dim differs (a bug)
  unsupported import or shape inference refused the model (message kept)
  non-tensor  sequences/maps/optionals, out of scope for now

`expected_failures.txt` (beside this file) lists every test that is not pass or
partial, with its reason; the run fails when a test fails that is not listed,
or a listed test now passes (so the list stays true). --update-expected rewrites
it from the current results.
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected_failures.txt")

# onnx TensorProto.DataType -> the dtype names openacl-inspect prints
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
               8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
               14: "complex64", 15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz",
               19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
               24: "float8e8m0", 25: "uint2", 26: "int2"}


def expected_outputs(test_dir):
    import onnx
    data = os.path.join(test_dir, "test_data_set_0")
    outs = []
    j = 0
    while os.path.exists(os.path.join(data, f"output_{j}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(data, f"output_{j}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        outs.append((ONNX_DTYPES.get(t.data_type, str(t.data_type)), list(t.dims)))
        j += 1
    return outs


def input_overrides(test_dir):
    import onnx
    data = os.path.join(test_dir, "test_data_set_0")
    args = []
    j = 0
    while os.path.exists(os.path.join(data, f"input_{j}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(data, f"input_{j}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        if t.name:
            args += ["--input", f"{t.name}:{','.join(str(d) for d in t.dims)}"]
        j += 1
    return args


def run_one(inspect, test_dir):
    name = os.path.basename(test_dir)
    if os.path.exists(os.path.join(test_dir, "non_tensor_io")):
        return name, "non-tensor", "inputs or outputs are sequences, maps or optionals"
    cmd = [inspect, os.path.join(test_dir, "model.onnx"), "--json"] + input_overrides(test_dir)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        first = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()
        return name, "unsupported", " | ".join(line.strip() for line in first[:3])[:300]
    got = json.loads(proc.stdout)["outputs"]
    want = expected_outputs(test_dir)
    if len(got) != len(want):
        return name, "mismatch", f"{len(got)} outputs inferred, {len(want)} expected"
    partial = False
    for k, (g, (wd, ws)) in enumerate(zip(got, want)):
        if g["dtype"].startswith("dtype("):
            return name, "unsupported", f"output {k}: element type {wd} is not supported by the engine"
        if g["dtype"] != wd:
            return name, "mismatch", f"output {k}: dtype {g['dtype']} != {wd}"
        gs = g["shape"]
        if gs is None:
            partial = True
            continue
        if len(gs) != len(ws):
            return name, "mismatch", f"output {k}: shape {gs} != {ws}"
        for gd, wdim in zip(gs, ws):
            if isinstance(gd, int) and gd >= 0:
                if gd != wdim:
                    return name, "mismatch", f"output {k}: shape {gs} != {ws}"
            else:
                partial = True
    return name, ("partial" if partial else "pass"), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("OPENACL_BUILD_DIR", "build"))
    ap.add_argument("--data", default=None, help="node tests folder (default: <build>/onnx-node-tests)")
    ap.add_argument("--report", default=None, help="write a per-test TSV here")
    ap.add_argument("--update-expected", action="store_true")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    inspect = os.path.join(build, "bin", "openacl-inspect")
    if not os.path.exists(inspect):
        print(f"node_shapes: {inspect} not built", file=sys.stderr)
        return 1
    data = args.data or os.path.join(build, "onnx-node-tests")
    subprocess.run([sys.executable, os.path.join(HERE, "generate_node_tests.py"), data], check=True)
    tests = sorted(os.path.join(data, t) for t in os.listdir(data) if os.path.isdir(os.path.join(data, t)))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda t: run_one(inspect, t), tests))

    counts = {}
    for _, outcome, _ in results:
        counts[outcome] = counts.get(outcome, 0) + 1
    total = len(results)
    ok = counts.get("pass", 0) + counts.get("partial", 0)
    print("node shape conformance: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f" — {ok}/{total} = {100.0 * ok / total:.1f}% pass or partial")
    if args.report:
        with open(args.report, "w") as f:
            for name, outcome, why in results:
                f.write(f"{name}\t{outcome}\t{why}\n")

    failing = {name: (outcome, why) for name, outcome, why in results if outcome not in ("pass", "partial")}
    if args.update_expected:
        with open(EXPECTED, "w") as f:
            import onnx
            f.write("# ONNX node tests whose shape inference does not pass yet, one per line:\n"
                    "# <test> <outcome>: <reason>. Regenerate with node_shapes.py --update-expected.\n"
                    f"# onnx {onnx.__version__}\n")
            for name in sorted(failing):
                outcome, why = failing[name]
                f.write(f"{name} {outcome}: {why}\n")
        print(f"wrote {len(failing)} entries to {EXPECTED}")
        return 0
    import onnx
    listed, made_with = {}, None
    if os.path.exists(EXPECTED):
        for line in open(EXPECTED):
            if line.startswith("# onnx "):
                made_with = line.split()[2]
            elif line.strip() and not line.startswith("#"):
                listed[line.split()[0]] = line.strip()
    if made_with and made_with != onnx.__version__:
        # Another onnx release has other tests: report, but judge only with the list's own release.
        print(f"note: expected_failures.txt was made with onnx {made_with}, this is {onnx.__version__}; "
              "differences are reported, not failed")
        return 0
    unexpected = sorted(set(failing) - set(listed))
    fixed = sorted(n for n in listed if n not in failing and any(n == r[0] for r in results))
    for n in unexpected:
        print(f"UNEXPECTED {n}: {failing[n][0]}: {failing[n][1]}")
    for n in fixed:
        print(f"NOW PASSES (remove from expected_failures.txt): {n}")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
