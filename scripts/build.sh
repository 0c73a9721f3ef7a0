#!/usr/bin/env bash
# Configures and builds OpenACL (Release, Ninja) into build/.
#
#   scripts/build.sh [BUILD_DIR] [-- EXTRA_CMAKE_ARGS...]
#
# BUILD_DIR defaults to $OPENACL_BUILD_DIR or "build" (relative to the repo root).
# Parallelism: $OPENACL_JOBS, default 2 (the project's machines have 2 cores).
# Build type: $OPENACL_BUILD_TYPE, default Release. Tests, Python module, samples
# and benchmarks are all on unless EXTRA_CMAKE_ARGS turn them off.
# Targets: $OPENACL_BUILD_TARGETS (space-separated ninja targets), default all.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

BUILD_DIR=${OPENACL_BUILD_DIR:-build}
if [[ $# -gt 0 && $1 != -- ]]; then
  BUILD_DIR=$1
  shift
fi
[[ ${1:-} == -- ]] && shift
EXTRA_ARGS=("$@")

JOBS=${OPENACL_JOBS:-2}
BUILD_TYPE=${OPENACL_BUILD_TYPE:-Release}

# Every part on explicitly, so a cache left by an earlier configure with a part
# off cannot silently drop it; EXTRA_CMAKE_ARGS come later and win.
cmake_args=(-S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
            -DOPENACL_BUILD_TESTS=ON -DOPENACL_BUILD_PYTHON=ON
            -DOPENACL_BUILD_SAMPLES=ON -DOPENACL_BUILD_BENCH=ON -DOPENACL_SANITIZE=)
# Build the extension for the python3 that runs the tests and the samples.
if PY=$(command -v python3); then
  cmake_args+=(-DPython_EXECUTABLE="$PY" -DPython3_EXECUTABLE="$PY")
fi

echo "[build] cmake ${cmake_args[*]} ${EXTRA_ARGS[*]}"
cmake "${cmake_args[@]}" "${EXTRA_ARGS[@]}"
read -r -a targets <<< "${OPENACL_BUILD_TARGETS:-}"
echo "[build] ninja -C $BUILD_DIR -j$JOBS ${targets[*]}"
ninja -C "$BUILD_DIR" -j"$JOBS" "${targets[@]}"
