"""Runs every sample: Python ones with this interpreter, C ones from <build>/bin."""
import importlib.util
import os
import subprocess
import sys
import time

import pytest

import acl_helpers as H

SAMPLES = H.REPO_ROOT / "samples"

# sample -> lines its output must contain
PYTHON_SAMPLES = {
    "runtime_walk.py": ["runtime_walk: OK", "data verified", "callback ran once in thread"],
    "resource_lifecycle.py": ["resource_lifecycle: OK", "1 reference(s) left"],
    "memcpy_sync_async.py": ["memcpy_sync_async: OK", "2-D crop device -> device -> numpy"],
    "memory_pool.py": ["memory_pool: OK", "no overlap", "every block verified"],
    "two_devices_event.py": ["two_devices_event: OK", "data verified"],
    "async_callback.py": ["async_callback: OK", "BLOCK    :", "NO_BLOCK :"],
    "model_sync_async.py": ["model_sync_async: OK", "output matches numpy", "outputs checked against numpy"],
    "model_multi_batch.py": ["model_multi_batch: OK", "2 padding row(s) ignored", "every score matches numpy"],
    "model_chain.py": ["model_chain: OK", "execute      : probabilities", "execute_async: probabilities"],
    "model_dynamic.py": ["model_dynamic: OK", "batch 4  : images 0..3", "image 24x32: output dims [1, 4, 24, 32]"],
    "model_dynamic_shape.py": ["model_dynamic_shape: OK", "[-1, 3, -1, -1]",
                               "input [2, 3, 5, 12]: output dims [2, 4, 5, 12], matches numpy"],
    "op_add.py": ["op_add: OK", "matches numpy (first call", "three times in stream order"],
    "op_dynamic_shape.py": ["op_dynamic_shape: OK", "infer_shape  : y dims [-1], idx dims [10]",
                            "dim 0 in [1, 10]", "execute_v2   : y dims [5], idx dims [10]"],
    "op_cast_argmax.py": ["op_cast_argmax: OK", "cast         : float32 -> float16",
                          "classes match numpy"],
    "prof_subscribe.py": ["prof_subscribe: OK", "per execution", "ops of one execution: conv1"],
    "prof_collect.py": ["prof_collect: OK", "ops per execution, streams ['0', '1']", "in https://ui.perfetto.dev"],
}

# Exit status of a sample that cannot run in this build (e.g. an op the
# catalogue lacks): the test skips with the sample's explanation.
SAMPLE_SKIPPED = 77

# Samples that take a model argument: run by test_python_sample_with_model.
MODEL_ARGUMENT_SAMPLES = {
    "resnet50_classify.py": ["resnet50_classify: OK", "top 5 (class: probability):", "execute median"],
}

# Samples that need build/bin/atc (they find it through $OPENACL_ATC).
NEEDS_ATC = {"model_dynamic.py"}

C_SAMPLES = {
    "runtime_walk": ["runtime_walk: OK", "data verified", "3 host functions"],
    "op_add": ["op_add: OK", "aclopExecuteV2 : Add[3,4] float32 verified", "small output   : refused with 100022",
               "y += x2 twice, verified"],
}

TIME_LIMIT_S = 10  # each sample is meant to run in a second or two


def test_every_python_sample_is_listed():
    on_disk = {p.name for p in (SAMPLES / "python").glob("*.py")}
    assert on_disk == set(PYTHON_SAMPLES) | set(MODEL_ARGUMENT_SAMPLES)


# C samples that take a model argument: run by test_c_sample_with_model.
C_MODEL_ARGUMENT_SAMPLES = {"model_run"}


def test_every_c_sample_is_listed():
    on_disk = {p.stem for p in (SAMPLES / "c").glob("*.c")}
    assert on_disk == set(C_SAMPLES) | C_MODEL_ARGUMENT_SAMPLES


def _check(proc, expected, elapsed):
    if proc.returncode == SAMPLE_SKIPPED:
        pytest.skip(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "sample skipped")
    report = f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, report
    for line in expected:
        assert line in proc.stdout, f"missing {line!r}\n{report}"
    assert elapsed < TIME_LIMIT_S


def _sample_env(name, extra=None):
    """The child environment; samples that run atc get $OPENACL_ATC (skip when
    it is not built)."""
    env = dict(extra or {})
    if name in NEEDS_ATC:
        atc = H.build_dir() / "bin" / "atc"
        if not atc.exists():
            pytest.skip(f"{atc} not built")
        env["OPENACL_ATC"] = str(atc)
    return H.child_env(env)


@pytest.mark.parametrize("name", sorted(PYTHON_SAMPLES))
def test_python_sample(name):
    env = _sample_env(name)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(SAMPLES / "python" / name)], env=env,
                          cwd=str(H.REPO_ROOT), capture_output=True, text=True, timeout=60)
    _check(proc, PYTHON_SAMPLES[name], time.monotonic() - t0)


def test_python_sample_with_model(tmp_path):
    """resnet50_classify.py on a small classifier built here (any model taking one
    NCHW float32 image will do; scripts/quickstart.sh runs it on ResNet-50)."""
    import mdl_models
    model = mdl_models.classifier(tmp_path, size=32, classes=10)
    args = [str(model.path), "--runs", "2"]
    if importlib.util.find_spec("onnxruntime") is not None:
        args += ["--onnx", str(model.path)]
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(SAMPLES / "python" / "resnet50_classify.py"), *args],
                          env=H.child_env(), cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    _check(proc, MODEL_ARGUMENT_SAMPLES["resnet50_classify.py"], time.monotonic() - t0)
    if "--onnx" in args:
        assert "largest difference from onnxruntime" in proc.stdout


def _c_env():
    env = H.child_env()
    lib_dir = H.build_dir() / "lib"
    env["LD_LIBRARY_PATH"] = str(lib_dir) + (os.pathsep + env["LD_LIBRARY_PATH"]
                                             if env.get("LD_LIBRARY_PATH") else "")
    return env


@pytest.mark.parametrize("name", sorted(C_SAMPLES))
def test_c_sample(name):
    exe = H.build_dir() / "bin" / name
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    t0 = time.monotonic()
    proc = subprocess.run([str(exe)], env=_c_env(), capture_output=True, text=True, timeout=60)
    _check(proc, C_SAMPLES[name], time.monotonic() - t0)


def test_c_sample_with_model(tmp_path):
    """model_run on an ONNX model with two outputs, then on a gear .om from atc."""
    import mdl_models
    exe = H.build_dir() / "bin" / "model_run"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    model = mdl_models.two_outputs(tmp_path)
    t0 = time.monotonic()
    proc = subprocess.run([str(exe), str(model.path), "--loop", "2"], env=_c_env(), capture_output=True,
                          text=True, timeout=60)
    _check(proc, ["model_run: OK", "output 0 'sum': dims [2,3]", "output 1 'prod': dims [2,3]", "2 run(s)"],
           time.monotonic() - t0)
    atc = H.build_dir() / "bin" / "atc"
    if not atc.exists():
        return
    dyn = mdl_models.linear(tmp_path, batch="N", name="linear_gears")
    built = mdl_models.run_atc(atc, dyn.path, tmp_path / "linear_gears", "--input_shape=x:-1,4",
                               "--dynamic_batch_size=2,4", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    t0 = time.monotonic()
    proc = subprocess.run([str(exe), str(tmp_path / "linear_gears.om")], env=_c_env(), capture_output=True,
                          text=True, timeout=60)
    _check(proc, ["model_run: OK", "2 input(s), 1 output(s)", "dynamic batch: running batch 2"],
           time.monotonic() - t0)


def test_python_sample_fails_loudly_without_devices():
    """Samples check every ret: with one device, the two-device sample exits non-zero."""
    proc = subprocess.run([sys.executable, str(SAMPLES / "python" / "two_devices_event.py")],
                          env=H.child_env({"OPENACL_DEVICE_COUNT": "1"}), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "two_devices_event: FAILED" in proc.stderr


@pytest.mark.parametrize("name", sorted(PYTHON_SAMPLES))
def test_python_sample_strict_mode(name):
    """The samples are correct programs: strict mode has nothing to reject."""
    env = _sample_env(name, {"OPENACL_STRICT": "1"})
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(SAMPLES / "python" / name)],
                          env=env, cwd=str(H.REPO_ROOT),
                          capture_output=True, text=True, timeout=60)
    _check(proc, PYTHON_SAMPLES[name], time.monotonic() - t0)
