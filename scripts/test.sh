#!/usr/bin/env bash
# THE test command of OpenACL (README, .ci/run). Runs every test:
#
#   deps         scripts/install-deps.sh (Debian packages + PyPI, only what is missing)
#   build        scripts/build.sh: Release build in build/
#   ctest        every GoogleTest suite registered with CTest (all labels)
#   pytest       tests/python against build/python (it also runs every sample)
#   conformance  ONNX backend node tests executed by the engine, outputs compared
#                (tests/conformance/node_tests.py, expected_failures.txt)
#   conformance-om  the same tests through the .om round trip (optimise, encode,
#                decode, compile: what atc + aclmdlLoad do)
#   models       real models (scripts/make_models.py: ResNet-50, MobileNetV2,
#                BERT-base-like, LR-ASPP segmentation, dynamic-batch ResNet-18)
#                run by the engine and compared with onnxruntime (tests/models)
#   fuzz         the ONNX importer's libFuzzer target for 60 s on a seed corpus
#                (build-fuzz/, clang; skipped with a note when clang is absent)
#   fuzz-om      the .om reader's libFuzzer target for 45 s on .om files atc
#                builds from small node-test models
#   install      scripts/install_check.sh: cmake --install, find_package + pkg-config consumers
#   asan-build   build-asan/: OPENACL_SANITIZE='address;undefined', no Python, no bench
#   asan-ctest   every CTest test under ASan + UBSan (leak detection on)
#   asan-samples the C samples (samples/c) built with ASan + UBSan, run (model_run on a
#                node-test model and on an .om with gears)
#   tsan-build   build-tsan/: OPENACL_SANITIZE=thread, only the library and the
#                concurrency suite (the only one TSan runs)
#   tsan-ctest   `ctest -L concurrency` under ThreadSanitizer
#
#   scripts/test.sh [--quick] [--no-deps]
#     --quick    skip the sanitizer builds (for developers)
#     --no-deps  skip install-deps.sh
#
# A failing step does not stop the others (steps that need a failed one are
# reported as failed without running). Ends with one summary line per step and
# the line "N passed, M failed" counting steps; exits non-zero if any failed.
# Each step's output is also kept in build-logs/STEP.log; before the last line
# the summary repeats the tail of each failed step's log and prints any input
# a fuzzer crashed on (gzip + base64), so a CI view of the end is enough.
#
# Environment: OPENACL_JOBS (build parallelism, default 2), OPENACL_CTEST_JOBS
# (default 1: the suites take seconds, and running them side by side on two
# cores only makes their internal timeouts flaky), OPENACL_TEST_TIMEOUT (per
# test without its own TIMEOUT property, seconds, default 600),
# OPENACL_PYTEST_TIMEOUT (the whole pytest run, seconds, default 1200).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

QUICK=0
DEPS=1
for arg in "$@"; do
  case $arg in
    --quick) QUICK=1 ;;
    --no-deps) DEPS=0 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

CTEST_JOBS=${OPENACL_CTEST_JOBS:-1}
TEST_TIMEOUT=${OPENACL_TEST_TIMEOUT:-600}
PYTEST_TIMEOUT=${OPENACL_PYTEST_TIMEOUT:-1200}
PY=$(command -v python3 || echo python3)

# Sanitizer settings: stop at the first report, report leaks, keep stacks readable.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0:check_initialization_order=1:strict_init_order=1:detect_odr_violation=2}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

LOG_DIR=$ROOT/build-logs
rm -rf "$LOG_DIR" && mkdir -p "$LOG_DIR"
STEP_NAMES=()
STEP_RESULTS=()
STEP_TIMES=()
declare -A STEP_OK=()

# run_step NAME "NEEDS" CMD... — NEEDS: space-separated steps that must have passed.
run_step() {
  local name=$1 needs=$2
  shift 2
  local need
  for need in $needs; do
    if [[ ${STEP_OK[$need]:-0} != 1 ]]; then
      printf '\n==> [%s] not run: needs step "%s", which failed\n' "$name" "$need"
      STEP_NAMES+=("$name"); STEP_RESULTS+=("FAILED (not run: $need failed)"); STEP_TIMES+=(0)
      STEP_OK[$name]=0
      return
    fi
  done
  printf '\n==> [%s] %s\n' "$name" "$*"
  local start rc
  start=$(date +%s)
  # The output also goes to build-logs/NAME.log, whose tail the summary
  # repeats for a failed step (a CI view often shows only the end).
  "$@" 2>&1 | tee "$LOG_DIR/$name.log"
  rc=${PIPESTATUS[0]}
  local took=$(( $(date +%s) - start ))
  STEP_NAMES+=("$name"); STEP_TIMES+=("$took")
  if [[ $rc -eq 0 ]]; then
    STEP_RESULTS+=("passed"); STEP_OK[$name]=1
  else
    STEP_RESULTS+=("FAILED (exit $rc)"); STEP_OK[$name]=0
  fi
  printf '==> [%s] %s in %ss\n' "$name" "${STEP_RESULTS[-1]}" "$took"
}

ctest_in() {  # ctest_in BUILD_DIR [ctest args...]
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure --no-tests=error \
    --timeout "$TEST_TIMEOUT" -j "$CTEST_JOBS" "$@"
}

pytest_suite() {
  local rc
  # A hung test must not eat CI's 90 minutes: the whole suite gets a deadline.
  OPENACL_BUILD_DIR=build timeout --kill-after=30 "$PYTEST_TIMEOUT" \
    "$PY" -m pytest tests/python -ra -p no:cacheprovider
  rc=$?
  if [[ $rc -eq 5 ]]; then
    echo "pytest: no tests were collected in tests/python" >&2
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "pytest: still running after ${PYTEST_TIMEOUT}s; stopped" >&2
  fi
  return $rc
}

# The C samples, built in the ASan tree, run under the sanitizers too.
asan_samples() {
  local src name failed=0 ran=0 args
  # Samples that take a model get small ones: an ONNX node test, and an .om
  # with batch gears built by atc from it.
  local om_dir
  om_dir=$(mktemp -d)
  build/bin/atc --model=build/onnx-node-tests/test_relu/model.onnx --framework=5 --output="$om_dir/relu_gears" \
    --input_shape="x:-1,4,5" --dynamic_batch_size="1,3" --log=null >/dev/null 2>&1 || true
  for src in samples/c/*.c; do
    [[ -e $src ]] || continue
    name=$(basename "$src" .c)
    ran=$((ran + 1))
    args=()
    case $name in
      model_run) args=(build/onnx-node-tests/test_conv_with_strides_padding/model.onnx --loop 2) ;;
    esac
    echo "--- build-asan/bin/$name ${args[*]}"
    if ! timeout --kill-after=10 120 "build-asan/bin/$name" "${args[@]}"; then
      echo "--- $name FAILED" >&2
      failed=$((failed + 1))
    fi
    if [[ $name == model_run && -f $om_dir/relu_gears.om ]]; then
      echo "--- build-asan/bin/$name $om_dir/relu_gears.om"
      if ! timeout --kill-after=10 120 "build-asan/bin/$name" "$om_dir/relu_gears.om"; then
        echo "--- $name (gears) FAILED" >&2
        failed=$((failed + 1))
      fi
    fi
  done
  rm -rf "$om_dir"
  echo "asan-samples: $((ran - failed)) of $ran sample programs passed"
  [[ $failed -eq 0 ]]
}

# ThreadSanitizer needs a layout it knows; on kernels with high mmap entropy
# it aborts with "unexpected memory mapping". Running without ASLR avoids it.
tsan_ctest() {
  local prefix=()
  if command -v setarch >/dev/null 2>&1 && setarch "$(uname -m)" -R true 2>/dev/null; then
    prefix=(setarch "$(uname -m)" -R)
  fi
  "${prefix[@]}" ctest --test-dir build-tsan --output-on-failure --no-tests=error \
    --timeout "$TEST_TIMEOUT" -j "$CTEST_JOBS" -L concurrency
}

# Real models: generated once per script version (cached in build/models) by
# the system Python with Debian's torch, then compared with onnxruntime.
real_models() {
  if [[ ! -x /usr/bin/python3 ]] || ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
    echo "models: /usr/bin/python3 lacks torch/torchvision (python3-torch, python3-torchvision)" >&2
    return 1
  fi
  /usr/bin/python3 scripts/make_models.py build/models || return 1
  OPENACL_BUILD_DIR=build timeout --kill-after=30 "$PYTEST_TIMEOUT" \
    "$PY" -m pytest tests/models -ra -p no:cacheprovider
}

# The importer's fuzzer: a short run from the seed corpus (the node-test models).
fuzz_importer() {
  if ! command -v clang++ >/dev/null 2>&1; then
    echo "fuzz: clang++ not installed; skipped" >&2
    return 0
  fi
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DOPENACL_FUZZ=ON -DOPENACL_BUILD_PYTHON=OFF -DOPENACL_BUILD_SAMPLES=OFF \
    -DOPENACL_BUILD_BENCH=OFF -DOPENACL_BUILD_TESTS=OFF >/dev/null || return 1
  ninja -C build-fuzz -j"${OPENACL_JOBS:-2}" fuzz_onnx_import || return 1
  local corpus=build-fuzz/corpus
  mkdir -p "$corpus"
  # The harness's first byte picks the parser (even: a model, odd: a
  # TensorProto), so each seed is a selector byte and then the file.
  local f h p
  find build/onnx-node-tests -name model.onnx -size -8k | sort | awk "NR % 6 == 1" | while read -r f; do
    h=$(echo "$f" | md5sum | cut -c1-16)
    { printf '\x00'; cat "$f"; } > "$corpus/m$h"
    p=$(dirname "$f")/test_data_set_0/input_0.pb
    if [[ -f $p && $(stat -c %s "$p") -lt 8192 ]]; then
      { printf '\x01'; cat "$p"; } > "$corpus/t$h"
    fi
  done
  rm -rf build-fuzz/artifacts && mkdir -p build-fuzz/artifacts
  build-fuzz/bin/fuzz_onnx_import -max_total_time=60 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/importer- "$corpus"
}

# The .om reader's libFuzzer target, seeded with .om files atc builds from
# small node-test models (build-fuzz is configured by fuzz_importer).
fuzz_om() {
  if ! command -v clang++ >/dev/null 2>&1; then
    echo "fuzz-om: clang++ not installed; skipped" >&2
    return 0
  fi
  ninja -C build-fuzz -j"${OPENACL_JOBS:-2}" fuzz_om_reader || return 1
  local corpus=build-fuzz/corpus-om
  mkdir -p "$corpus"
  find build/onnx-node-tests -name model.onnx -size -4k | sort | head -80 | while read -r f; do
    build/bin/atc --model="$f" --framework=5 --output="$corpus/$(echo "$f" | md5sum | cut -c1-16)" \
      --log=null >/dev/null 2>&1 || true
  done
  # One with packed weights (node tests have no constant weights): a 3x3
  # convolution on 8 channels, whose weights oneDNN wants blocked.
  "$PY" -c "import sys; sys.path.insert(0, 'tests/python'); import mdl_models; \
mdl_models.conv_relu('$corpus', height=8, width=8, channels=8, filters=8, name='packed_conv')" &&
    build/bin/atc --model="$corpus/packed_conv.onnx" --framework=5 --output="$corpus/packed_conv" --log=null \
      >/dev/null 2>&1
  rm -f "$corpus/packed_conv.onnx"
  echo "fuzz-om: $(ls "$corpus" | wc -l) seed .om files"
  mkdir -p build-fuzz/artifacts
  build-fuzz/bin/fuzz_om_reader -max_total_time=45 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/om- "$corpus"
}

# -g1: line tables only (a sanitizer report keeps its file:line; the build is
# about a fifth faster than with -g). tests/CMakeLists.txt builds the test code
# itself at -O0 in these trees.
SAN_ARGS=(-DOPENACL_BUILD_PYTHON=OFF -DOPENACL_BUILD_BENCH=OFF
          "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")

TOTAL_START=$(date +%s)

if [[ $DEPS -eq 1 ]]; then
  run_step deps "" bash scripts/install-deps.sh
fi
run_step build "" bash scripts/build.sh build
run_step ctest "build" ctest_in build
run_step pytest "build" pytest_suite
run_step install "build" bash scripts/install_check.sh build
run_step conformance "build" "$PY" tests/conformance/node_tests.py --build build
run_step conformance-om "build" "$PY" tests/conformance/node_tests.py --build build --via-om
run_step models "build" real_models
if [[ $QUICK -eq 0 ]]; then
  run_step fuzz "" fuzz_importer
  run_step fuzz-om "build fuzz" fuzz_om
fi
if [[ $QUICK -eq 0 ]]; then
  run_step asan-build "" env OPENACL_BUILD_TYPE=RelWithDebInfo bash scripts/build.sh build-asan -- \
    "-DOPENACL_SANITIZE=address;undefined" "${SAN_ARGS[@]}"
  run_step asan-ctest "asan-build" ctest_in build-asan
  run_step asan-samples "asan-build conformance" asan_samples
  run_step tsan-build "" env OPENACL_BUILD_TYPE=RelWithDebInfo OPENACL_BUILD_TARGETS=test_capi_concurrency \
    bash scripts/build.sh build-tsan -- \
    "-DOPENACL_SANITIZE=thread" "${SAN_ARGS[@]}"
  run_step tsan-ctest "tsan-build" tsan_ctest
fi

TOTAL=$(( $(date +%s) - TOTAL_START ))
passed=0
failed=0
echo
echo "==> summary (total ${TOTAL}s)"
for i in "${!STEP_NAMES[@]}"; do
  printf '  %-12s %-32s %5ss\n' "${STEP_NAMES[$i]}" "${STEP_RESULTS[$i]}" "${STEP_TIMES[$i]}"
  if [[ ${STEP_OK[${STEP_NAMES[$i]}]} == 1 ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
# The end of each failed step's output, and any input a fuzzer crashed on
# (gzip + base64: `base64 -d | gunzip > crash` reproduces it with the fuzzer).
for i in "${!STEP_NAMES[@]}"; do
  name=${STEP_NAMES[$i]}
  [[ ${STEP_OK[$name]} == 1 || ! -s $LOG_DIR/$name.log ]] && continue
  echo
  echo "==> [$name] failed; the last 40 lines of its output ($LOG_DIR/$name.log):"
  tail -n 40 "$LOG_DIR/$name.log"
done
for f in build-fuzz/artifacts/*; do
  [[ -f $f ]] || continue
  echo
  echo "==> fuzzer input $f ($(stat -c %s "$f") bytes), gzip + base64:"
  gzip -9c "$f" | base64 -w 120
done
echo
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
