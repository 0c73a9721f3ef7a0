#!/usr/bin/env bash
# Runs the per-call overhead micro-benchmarks (docs/benchmarks.md), C and Python,
# prints their tables and writes JSON to bench/results/:
#   rt_overhead_c.json, rt_overhead_python.json, machine.json (date, CPU, commit)
#
#   scripts/bench.sh [--quick] [extra args for both benchmarks, e.g. --batches 51]
#
# Builds build/ first if the benchmark binary or the Python module is missing.
# Not part of scripts/test.sh: timings are reported, never asserted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${OPENACL_BUILD_DIR:-build}
OUT=$ROOT/bench/results
PY=$(command -v python3)
ARGS=("$@")

if [[ ! -x $BUILD_DIR/bin/rt_overhead ]] || ! compgen -G "$BUILD_DIR/python/acl*.so" >/dev/null; then
  bash scripts/build.sh "$BUILD_DIR"
fi
mkdir -p "$OUT"

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || echo unknown)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)
dirty=$(git -C "$ROOT" status --porcelain 2>/dev/null | head -n 1)
"$PY" - "$OUT/machine.json" "$cpu" "$commit" "${dirty:+dirty}" <<'EOF'
import json, os, platform, sys, datetime
out, cpu, commit, dirty = sys.argv[1:5]
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "cpu": cpu,
    "cores": os.cpu_count(),
    "kernel": platform.release(),
    "python": platform.python_version(),
    "commit": commit + ("+" + dirty if dirty else ""),
}, open(out, "w"), indent=2)
EOF

echo "==> C: $BUILD_DIR/bin/rt_overhead --json ${ARGS[*]}"
"$BUILD_DIR/bin/rt_overhead" --json "${ARGS[@]}" >"$OUT/rt_overhead_c.json"
echo "==> Python: bench/rt_overhead.py --json ${ARGS[*]}"
OPENACL_BUILD_DIR=$BUILD_DIR "$PY" bench/rt_overhead.py --json "${ARGS[@]}" >"$OUT/rt_overhead_python.json"

"$PY" - "$OUT/rt_overhead_c.json" "$OUT/rt_overhead_python.json" <<'EOF'
import json, sys
def fmt(ns):
    return f"{ns:.0f} ns" if ns < 1e3 else f"{ns / 1e3:.2f} us" if ns < 1e6 else f"{ns / 1e6:.2f} ms"
for path in sys.argv[1:]:
    doc = json.load(open(path))
    print(f"\n{doc['suite']} ({doc['language']}), {doc['batches']} batches, per call")
    print(f"  {'benchmark':22} {'median':>10} {'p90':>10} {'min':>10}  target")
    for r in doc["results"]:
        t = "-" if r["target_ns"] is None else \
            f"<= {fmt(r['target_ns'])} {'met' if r['meets_target'] else 'MISSED'}"
        print(f"  {r['name']:22} {fmt(r['median_ns']):>10} {fmt(r['p90_ns']):>10} "
              f"{fmt(r['min_ns']):>10}  {t}")
EOF
echo
echo "wrote $OUT/{machine,rt_overhead_c,rt_overhead_python}.json"
