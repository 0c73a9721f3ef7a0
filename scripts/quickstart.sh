#!/usr/bin/env bash
# The README's one command for a fresh machine (Debian 12, root or sudo):
#   1. installs every dependency (scripts/install-deps.sh: Debian packages, PyPI),
#   2. builds the tree (scripts/build.sh -> build/),
#   3. installs OpenACL for the python3 on PATH: `python3 -m pip install .`
#      (the `acl` module, libascendcl.so, headers and tools, via scikit-build-core),
#   4. runs the main job with what was installed, from a directory outside the
#      repository (so nothing from the build tree is picked up): ResNet-50 from
#      scripts/make_models.py compiled by `atc` into an .om, then classified by
#      samples/python/resnet50_classify.py through acl.mdl (top 5, latency, the
#      largest difference from onnxruntime); then the runtime walk in Python
#      and in C (build/bin/runtime_walk); the classification again under
#      build/bin/openacl-msprof, leaving a profile in build/quickstart-profile.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=$(command -v python3) || { echo "quickstart: python3 not found" >&2; exit 1; }

step() { printf '\n==> %s\n' "$*"; }

step "1/4 dependencies"
bash scripts/install-deps.sh

step "2/4 build (build/)"
bash scripts/build.sh build

step "3/4 $PY -m pip install .  (acl module, libascendcl.so, headers, tools)"
# pyproject.toml keeps scikit-build-core's build directory under build/, so a
# second run is incremental.
"$PY" -m pip install --disable-pip-version-check "$ROOT"

step "4/4 main job: image classification with pyACL (ResNet-50 -> atc -> .om -> acl.mdl)"
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/openacl-quickstart.XXXXXX")
trap 'rm -rf "$RUN_DIR"' EXIT
# The model: torchvision's ResNet-50 exported to ONNX with seeded weights by
# Debian's python3-torch (cached in build/models).
/usr/bin/python3 scripts/make_models.py "$ROOT/build/models" --only resnet50
ATC=$(command -v atc || echo "$ROOT/build/bin/atc")
"$ATC" --model="$ROOT/build/models/resnet50.onnx" --framework=5 --output="$RUN_DIR/resnet50" \
  --input_shape="input:1,3,224,224" --soc_version=Ascend310P3
cp "$ROOT/samples/python/resnet50_classify.py" "$ROOT/samples/python/runtime_walk.py" "$RUN_DIR/"
(
  cd "$RUN_DIR"
  unset PYTHONPATH OPENACL_BUILD_DIR
  "$PY" -c 'import acl, os; print("acl module:", os.path.realpath(acl.__file__))'
  "$PY" resnet50_classify.py resnet50.om --onnx "$ROOT/build/models/resnet50.onnx"
  echo
  # The same job profiled, unmodified, msprof-style: CSV summaries and a
  # timeline to open in https://ui.perfetto.dev (docs/profiling.md).
  rm -rf "$ROOT/build/quickstart-profile"
  "$PY" "$ROOT/build/bin/openacl-msprof" --output="$ROOT/build/quickstart-profile" \
    "$PY" resnet50_classify.py resnet50.om --runs 3 >/dev/null
  echo "profile of the main job: $(ls -d "$ROOT"/build/quickstart-profile/PROF_*/timeline/msprof_*.json)"
  echo
  "$PY" runtime_walk.py
)
echo
"$ROOT/build/bin/runtime_walk"

echo
echo "quickstart: done. Run every test with scripts/test.sh"
