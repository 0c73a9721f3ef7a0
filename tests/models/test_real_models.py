"""Real models through the engine, checked against onnxruntime.

The models come from scripts/make_models.py (PyTorch's exporter, seeded random
weights), generated into <build>/models by the test command's `models` step.
Each is run by `openacl-run` on the saved inputs; its outputs must match
onnxruntime's on the same inputs within 1e-4 relative:

    max |openacl - ort|  <=  1e-4 * max |ort|

(relative to the output's scale: elementwise relative error is meaningless
for values that are near zero by chance).
"""
import json
import os
import subprocess

import numpy as np
import pytest

BUILD = os.path.abspath(os.environ.get("OPENACL_BUILD_DIR", "build"))
MODELS = os.environ.get("OPENACL_MODELS_DIR", os.path.join(BUILD, "models"))
RUNNER = os.path.join(BUILD, "bin", "openacl-run")
RTOL = 1e-4


def model_info():
    path = os.path.join(MODELS, "models.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


INFO = model_info()
pytestmark = pytest.mark.skipif(not INFO, reason=f"no models in {MODELS} (run scripts/make_models.py)")


def run_openacl(name, info, tmp_path, extra=()):
    cmd = [RUNNER, os.path.join(MODELS, info["model"]), "--quiet", "--output-dir", str(tmp_path)]
    for input_name, f in info["inputs"].items():
        cmd += ["--input", f"{input_name}={os.path.join(MODELS, f)}"]
    proc = subprocess.run(cmd + list(extra), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"openacl-run failed on {name}:\n{proc.stdout}\n{proc.stderr}"
    outs = []
    i = 0
    while os.path.exists(tmp_path / f"output_{i}.npy"):
        outs.append(np.load(tmp_path / f"output_{i}.npy"))
        i += 1
    return outs


def run_ort(info, inputs=None):
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count() or 1
    sess = ort.InferenceSession(os.path.join(MODELS, info["model"]), opts, providers=["CPUExecutionProvider"])
    if inputs is None:
        inputs = {k: np.load(os.path.join(MODELS, f)) for k, f in info["inputs"].items()}
    return sess.run(None, inputs)


def assert_close(name, got, want):
    assert len(got) == len(want), f"{name}: {len(got)} outputs, onnxruntime gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{name} output {i}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))) if w.size else 0.0
        assert err <= RTOL * scale, f"{name} output {i}: max abs diff {err:.3g} > {RTOL} x scale {scale:.3g}"


@pytest.mark.parametrize("name", sorted(INFO))
def test_matches_onnxruntime(name, tmp_path):
    info = INFO[name]
    assert_close(name, run_openacl(name, info, tmp_path), run_ort(info))


def test_dynamic_batch_other_sizes(tmp_path):
    """The dynamic-batch model runs at batch sizes other than the saved one."""
    name = "resnet18_dynamic"
    if name not in INFO:
        pytest.skip("model not generated")
    info = INFO[name]
    x = np.load(os.path.join(MODELS, info["inputs"]["input"]))
    for batch in (1, 3):
        f = tmp_path / f"x{batch}.npy"
        xb = np.concatenate([x] * 2)[:batch]
        np.save(f, xb)
        one = dict(info, inputs={"input": str(f)})
        out_dir = tmp_path / f"out{batch}"
        out_dir.mkdir()
        got = run_openacl(name, one, out_dir)
        assert_close(f"{name}@{batch}", got, run_ort(info, {"input": xb}))
