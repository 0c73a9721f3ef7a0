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
import re
import subprocess
import sys

import numpy as np
import pytest

BUILD = os.path.abspath(os.environ.get("OPENACL_BUILD_DIR", "build"))
MODELS = os.environ.get("OPENACL_MODELS_DIR", os.path.join(BUILD, "models"))
RUNNER = os.path.join(BUILD, "bin", "openacl-run")
ATC = os.path.join(BUILD, "bin", "atc")
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


def alloc_counts(name, repeat, extra=(), env_extra=None):
    """openacl-run --count-allocs on the saved inputs: (OpenACL's, oneDNN's,
    the tool's output) for the last of `repeat` runs, on two threads;
    env_extra: more environment (switches of our kernels)."""
    info = INFO[name]
    cmd = [RUNNER, os.path.join(MODELS, info["model"]), "--quiet", "--count-allocs", "--repeat", str(repeat)]
    for input_name, f in info["inputs"].items():
        cmd += ["--input", f"{input_name}={os.path.join(MODELS, f)}"]
    env = dict(os.environ, OMP_NUM_THREADS="2", **(env_extra or {}))
    proc = subprocess.run(cmd + list(extra), capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"openacl-run failed on {name}:\n{proc.stdout}\n{proc.stderr}"
    m = re.search(r"heap allocations in run \d+: (\d+) by OpenACL, (\d+) inside oneDNN", proc.stdout)
    assert m, proc.stdout
    return int(m.group(1)), int(m.group(2)), proc.stdout


@pytest.mark.parametrize("name", sorted(n for n in INFO if "dynamic" not in n))
def test_steady_execute_allocates_nothing(name):
    """DESIGN.md: once the first run has sized what is kept, executing a
    static model allocates nothing on the heap in OpenACL, on any thread
    (oneDNN's primitive execute builds its argument map on the heap: counted
    apart, not ours to remove). The first run's count shows the counter
    counts. Through the .om, as atc and acl.mdl.load_from_file run it."""
    first, _, out = alloc_counts(name, 1)
    assert first > 0, f"{name}: the first run counted no allocation: the counter is not counting\n{out}"
    ours, _, out = alloc_counts(name, 3, ["--via-om"])
    assert ours == 0, f"{name}: {ours} heap allocations per execute in OpenACL (sites for addr2line):\n{out}"


@pytest.mark.parametrize(
    "name,switches",
    [
        ("mobilenet_v2", {"OPENACL_CONV_1X1": "0"}),
        ("lraspp_mobilenet", {"OPENACL_CONV_DW": "0"}),
        ("mobilenet_v2", {"OPENACL_CONV_1X1": "0", "OPENACL_CONV_DW": "0"}),
        ("bert_base", {"OPENACL_ATTENTION_TILES": "0"}),
    ],
)
def test_fallback_forms_allocate_nothing(name, switches):
    """The forms that run where our own loops do not (a CPU without AVX2,
    or the loops switched off): a fused block chained through the plain
    kernels of its parts, the Attention on oneDNN's sgemm. They allocate
    nothing per execute either."""
    if name not in INFO:
        pytest.skip("model not generated")
    ours, _, out = alloc_counts(name, 3, ["--via-om"], switches)
    assert ours == 0, f"{name} with {switches}: {ours} heap allocations per execute in OpenACL:\n{out}"


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


def test_packed_om_with_batch_gears(tmp_path):
    """atc's .om of the dynamic-batch ResNet-18, with batch gears and the
    weights packed for this machine's kernels (each gear's layouts), loaded
    from the file through acl.mdl (the packed weights used in place): every
    gear matches onnxruntime."""
    name = "resnet18_dynamic"
    if name not in INFO:
        pytest.skip("model not generated")
    info = INFO[name]
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    import acl_helpers as H
    sys.path.insert(0, str(H.python_dir()))
    acl = pytest.importorskip("acl")
    model = os.path.join(MODELS, info["model"])
    proc = subprocess.run([ATC, f"--model={model}", "--framework=5", f"--output={tmp_path / 'r18'}",
                           "--input_shape=input:-1,3,224,224", "--dynamic_batch_size=1,3", "--log=null"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    om = tmp_path / "r18.om"
    assert om.stat().st_size > 2 * os.path.getsize(model)  # the packed weights are in
    x = np.load(os.path.join(MODELS, info["inputs"]["input"]))
    assert acl.init() == H.ACL_SUCCESS
    try:
        assert acl.rt.set_device(0) == H.ACL_SUCCESS
        model_id, ret = acl.mdl.load_from_file(str(om))
        assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
        desc = acl.mdl.create_desc()
        try:
            assert acl.mdl.get_desc(desc, model_id) == H.ACL_SUCCESS
            gear_index, ret = acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data")
            assert ret == H.ACL_SUCCESS
            sizes = [acl.mdl.get_input_size_by_index(desc, i) for i in range(acl.mdl.get_num_inputs(desc))]
            out_size = acl.mdl.get_output_size_by_index(desc, 0)  # the largest gear's
            for batch in (1, 3):
                xb = np.ascontiguousarray(np.concatenate([x] * 3)[:batch])
                inputs = [xb if i != gear_index else sizes[i] for i in range(len(sizes))]
                (out,) = H.execute_model(acl, model_id, inputs, [out_size], gear=(gear_index, batch))
                want = run_ort(info, {"input": xb})
                got = out[:want[0].nbytes].view(np.float32).reshape(want[0].shape)
                assert_close(f"{name}.om@{batch}", [got], want)
        finally:
            acl.mdl.destroy_desc(desc)
            acl.mdl.unload(model_id)
    finally:
        acl.rt.reset_device(0)
        acl.finalize()
