#!/usr/bin/env python3
"""Execution conformance: every ONNX backend node test is run through the
engine (`openacl-run MODEL --data test_data_set_0 --check`: import, compile
with constant folding, execute, compare every output's dtype, shape and values
with the test's expected tensors, rtol 1e-3 / atol 1e-7 as the ONNX backend
runner uses; `tolerances.txt` widens them for the few tests whose expected
data is float32 rounding noise, each with its reason, as onnxruntime's own
backend-test overrides do).

    node_tests.py --build build [--data DIR] [--filter REGEX] [--report FILE] [--update-expected]

Outcomes per test:
  pass         every output matches
  mismatch     an output's dtype, shape or values differ (a bug)
  error        compiled but failed while running (a bug)
  crash        the runner died or timed out (a bug)
  unsupported  the engine refused the model: op, opset or element type not
               implemented (the message names the node and why)
  non-tensor   inputs/outputs are sequences, maps or optionals (out of scope)

`expected_failures.txt` (beside this file) lists every test that does not
pass, each with its category and reason; the run fails when a test fails that
is not listed, or a listed test now passes (so the list stays true).
--update-expected rewrites it from the current results. --filter runs a subset
(and then only reports, never fails on the list).
"""
import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected_failures.txt")
TOLERANCES = os.path.join(HERE, "tolerances.txt")


def tolerance_overrides():
    """test name -> extra openacl-run args, from tolerances.txt (each with its reason)."""
    out = {}
    if os.path.exists(TOLERANCES):
        for line in open(TOLERANCES):
            line = line.split("#", 1)[0].strip()
            if line:
                name, *opts = line.split()
                args = []
                for o in opts:
                    k, v = o.split("=")
                    args += [f"--{k}", v]
                out[name] = args
    return out


OVERRIDES = tolerance_overrides()


def classify(outcome, msg):
    """The reason category written into expected_failures.txt."""
    if outcome == "non-tensor":
        return "out of scope (sequence/map/optional I/O)"
    if "drops random elements" in msg or "random" in msg.lower() and "dropout" in msg.lower():
        return "out of scope (random output: training-mode Dropout)"
    if "Bernoulli" in msg or "RandomUniformLike" in msg or "RandomNormal" in msg:
        return "out of scope (random output)"
    if "BatchNormalization" in msg and "training" in msg:
        return "out of scope (training mode)"
    if "Optional" in msg:
        return "out of scope (optional types)"
    if "ImageDecoder" in msg:
        return "not implemented (image codecs)"
    if outcome in ("mismatch", "error", "crash"):
        return "bug to fix"
    if "ai.onnx.preview.training" in msg:
        return "out of scope (training op)"
    if "string" in msg:
        return "out of scope (string tensors)"
    if "ai.onnx.ml" in msg:
        return "not implemented (ai.onnx.ml op)"
    if re.search(r"float8|float4|int4|uint4|int2|uint2|float8e8m0|complex", msg):
        return "not implemented (element type)"
    return "not implemented"


def run_one(runner, test_dir, extra=()):
    name = os.path.basename(test_dir)
    if os.path.exists(os.path.join(test_dir, "non_tensor_io")):
        return name, "non-tensor", "inputs or outputs are sequences, maps or optionals"
    cmd = [runner, os.path.join(test_dir, "model.onnx"), "--data", os.path.join(test_dir, "test_data_set_0"),
           "--check", "--quiet"] + list(extra) + OVERRIDES.get(name, [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return name, "crash", "timed out after 120 s"
    text = (proc.stdout + proc.stderr).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    detail = " | ".join(lines[:4])[:400]
    if proc.returncode == 0:
        return name, "pass", ""
    if proc.returncode == 3:
        return name, "mismatch", " | ".join(l for l in lines if l.startswith("MISMATCH"))[:400]
    if proc.returncode < 0:
        return name, "crash", f"signal {-proc.returncode}: {detail}"
    if "openacl-run: run:" in text:
        return name, "error", detail
    return name, "unsupported", detail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("OPENACL_BUILD_DIR", "build"))
    ap.add_argument("--data", default=None, help="node tests folder (default: <build>/onnx-node-tests)")
    ap.add_argument("--filter", default=None, help="only tests whose name matches this regex")
    ap.add_argument("--report", default=None, help="write a per-test TSV here")
    ap.add_argument("--update-expected", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", action="store_true", help="print every failing test")
    ap.add_argument("--via-om", action="store_true",
                    help="run each model as atc + load would: optimised, encoded as .om and decoded "
                         "(openacl-run --via-om); the same expected failures apply")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    runner = os.path.join(build, "bin", "openacl-run")
    if not os.path.exists(runner):
        print(f"node_tests: {runner} not built", file=sys.stderr)
        return 1
    data = args.data or os.path.join(build, "onnx-node-tests")
    subprocess.run([sys.executable, os.path.join(HERE, "generate_node_tests.py"), data], check=True)
    tests = sorted(os.path.join(data, t) for t in os.listdir(data) if os.path.isdir(os.path.join(data, t)))
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, os.path.basename(t))]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        extra = ["--via-om"] if args.via_om else []
        results = list(pool.map(lambda t: run_one(runner, t, extra), tests))

    counts = {}
    for _, outcome, _ in results:
        counts[outcome] = counts.get(outcome, 0) + 1
    total = len(results)
    ok = counts.get("pass", 0)
    print(("node test conformance (via .om): " if args.via_om else "node test conformance: ") + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f" — {ok}/{total} = {100.0 * ok / max(total, 1):.1f}% pass")
    if args.report:
        with open(args.report, "w") as f:
            for name, outcome, why in results:
                f.write(f"{name}\t{outcome}\t{why}\n")
    failing = {name: (outcome, why) for name, outcome, why in results if outcome != "pass"}
    if args.verbose or args.filter:
        for name in sorted(failing):
            print(f"{failing[name][0].upper()} {name}: {failing[name][1]}")
    if args.filter:
        return 0 if not any(o in ("mismatch", "error", "crash") for o, _ in failing.values()) else 1

    import onnx
    if args.update_expected:
        with open(EXPECTED, "w") as f:
            f.write("# ONNX node tests that do not pass through the engine yet, one per line:\n"
                    "# <test> <outcome> [<category>]: <detail>. Regenerate with node_tests.py --update-expected.\n"
                    f"# onnx {onnx.__version__}\n")
            for name in sorted(failing):
                outcome, why = failing[name]
                f.write(f"{name} {outcome} [{classify(outcome, why)}]: {why}\n")
        print(f"wrote {len(failing)} entries to {EXPECTED}")
        return 0
    listed, made_with = {}, None
    if os.path.exists(EXPECTED):
        for line in open(EXPECTED):
            if line.startswith("# onnx "):
                made_with = line.split()[2]
            elif line.strip() and not line.startswith("#"):
                parts = line.split()
                listed[parts[0]] = parts[1] if len(parts) > 1 else ""
    if made_with and made_with != onnx.__version__:
        # Another onnx release has other tests: report, but judge only with the list's own release.
        print(f"note: expected_failures.txt was made with onnx {made_with}, this is {onnx.__version__}; "
              "differences are reported, not failed")
        return 0
    unexpected = sorted(n for n in failing if n not in listed)
    fixed = sorted(n for n in listed if n not in failing and any(n == r[0] for r in results))
    for n in unexpected:
        print(f"UNEXPECTED {n}: {failing[n][0]}: {failing[n][1]}")
    for n in fixed:
        print(f"NOW PASSES (remove from expected_failures.txt): {n}")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
