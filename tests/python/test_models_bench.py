"""bench/models_bench.py end to end on a tiny generated model (Conv+Relu+Gemm):
the harness's structure, its FLOP count and its agreement check. Timings are
never asserted. OpenVINO's rows are checked only where `import openvino` works."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import acl_helpers as H

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

BENCH = H.REPO_ROOT / "bench" / "models_bench.py"
HAVE_OPENVINO = importlib.util.find_spec("openvino") is not None


def bench_module():
    """bench/models_bench.py as a module, for its pure functions."""
    spec = importlib.util.spec_from_file_location("models_bench", BENCH)
    mb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mb)
    return mb


def tiny_model(path, batch=2):
    """x [batch,3,8,8] -> Conv 4x3x3x3 (pad 1) -> Relu -> Flatten -> Gemm 256->10."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32), "w"),
             numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "b"),
             numpy_helper.from_array((rng.standard_normal((10, 256)) * 0.1).astype(np.float32), "gw"),
             numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "gb")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_models_bench_quick_on_a_model_file(tmp_path):
    build = H.build_dir()
    for exe in ("atc", "model_bench", "peak_flops"):
        if not (build / "bin" / exe).exists():
            pytest.skip(f"{build / 'bin' / exe} not built (ninja -C {build} {exe})")
    model = tmp_path / "tiny.onnx"
    tiny_model(model)
    out_json, out_md = tmp_path / "models.json", tmp_path / "models.md"
    runtimes = ["openacl_py", "openacl_c", "onnxruntime"] + (["openvino"] if HAVE_OPENVINO else [])
    env = dict(os.environ, OPENACL_BUILD_DIR=str(build))
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--model-file", str(model), "--threads", "1",
                           "--runtimes", ",".join(runtimes), "--json", str(out_json), "--md", str(out_md)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]

    doc = json.loads(out_json.read_text())
    for key in ("cpu", "avx2", "avx512f", "loadavg_before", "loadavg_after", "versions", "commit"):
        assert key in doc["machine"], key
    assert doc["peak"]["gflops"]["1"] > 0
    # Conv: 2x4x8x8 outputs x 27 MACs; Gemm: 2x10 outputs x 256 MACs; 2 FLOPs per MAC.
    info = doc["models"]["tiny (batch 2)"]
    assert info["gflop_per_execute"] * 1e9 == pytest.approx(2 * (2 * 4 * 8 * 8 * 27 + 2 * 10 * 256))
    assert info["unknown_ops"] == 0

    [cell] = doc["cells"]
    assert (cell["model"], cell["batch"], cell["threads"]) == ("tiny", 2, 1)
    assert cell["reference"] == "onnxruntime"
    assert list(cell["runtimes"]) == runtimes
    for rt, r in cell["runtimes"].items():
        assert "error" not in r, (rt, r)
        # --quick: 2 rounds of 2 timed executes, each turn's first (the turn warm-up) apart.
        assert r["executes"] == 4 and 0 < r["median_ms"] <= r["p90_ms"]
        assert r["turn_first_median_ms"] > 0
        assert r["throughput"] == pytest.approx(2 / (r["median_ms"] / 1e3))
        assert r["peak_rss_mb"] > 0 and r["load_ms"] > 0
        assert r["gflops"] > 0 and r["pct_peak"] > 0
        if rt != "onnxruntime":
            assert r["agree"] is True, (rt, r)
            assert r["max_abs_diff"] < 1e-4
    for rt in ("openacl_py", "openacl_c"):
        assert cell["runtimes"][rt]["ratio_vs_best_peer"] > 0
    assert cell["runtimes"]["openacl_py"]["onnx_load_ms"] > 0

    md = out_md.read_text()
    assert "| model | batch | threads | runtime | median ms |" in md
    # One row per runtime, and the cell's row in the ceiling table.
    assert md.count("| tiny | 2 | 1 |") == len(runtimes) + 1
    assert cell["ceiling_ratio"] > 0 and f"| {cell['ceiling_ratio']:.2f} |" in md
    assert "MISMATCH" not in md


def test_models_bench_marks_a_mismatch(tmp_path):
    """A mismatch and a runtime that failed to start are marked in the table,
    not fatal: derive() and markdown() on a crafted result (pure functions)."""
    mb = bench_module()
    doc = {"machine": {"cpu": "x", "cores": 1, "commit": "c", "loadavg_before": [0.0], "loadavg_after": [0.0]},
           "peak": {"isa": "avx2+fma", "gflops": {"1": 100.0}},
           "models": {"m (batch 1)": {"gflop_per_sample": 1.0, "unknown_ops": 0, "atc_s": 0.1}},
           "cells": [{"model": "m", "batch": 1, "threads": 1, "reference": "onnxruntime", "runtimes": {
               "openacl_py": {"median_ms": 10.0, "p90_ms": 11.0, "throughput": 100.0, "agree": False,
                              "max_abs_diff": 0.5},
               "onnxruntime": {"median_ms": 5.0, "p90_ms": 6.0, "throughput": 200.0},
               "openvino": {"error": "exited with 1: no module"}}}]}
    mb.derive(doc["cells"][0], 1e9, doc["peak"])
    r = doc["cells"][0]["runtimes"]["openacl_py"]
    assert r["ratio_vs_best_peer"] == pytest.approx(0.5)
    assert r["gflops"] == pytest.approx(100.0) and r["pct_peak"] == pytest.approx(100.0)
    # 1 GFLOP at 100 GFLOP/s takes 10 ms; the faster peer takes 5: at most 0.5.
    assert doc["cells"][0]["at_peak_ms"] == pytest.approx(10.0)
    assert doc["cells"][0]["ceiling_ratio"] == pytest.approx(0.5)
    md = mb.markdown(doc)
    assert "**MISMATCH** (5.0e-01)" in md
    assert "unavailable: exited with 1" in md
    assert "| m | 1 | 1 | – / 0.50 | 5.00 | 10.00 | 0.50 |" in md


def test_models_bench_agreement_scales_to_small_outputs():
    """outputs_agree: 1e-4 absolute passes anything near 1e-9 (MobileNetV2's
    logits with seeded random weights), so the absolute tolerance scales
    down to an output's largest magnitude below 1; outputs of magnitude 1 or
    more keep rtol 1e-3, atol 1e-4."""
    mb = bench_module()
    layout = [("float32", [2, 3]), ("float32", [4])]
    big = np.array([1, -2, 3, 40, 0, 6], np.float32)
    tiny = np.array([1e-9, -2e-9, 3e-9, 5e-10], np.float32)
    ref = np.concatenate([big.view(np.uint8), tiny.view(np.uint8)])

    def agree(b, t):
        return mb.outputs_agree(ref, np.concatenate([b.astype(np.float32).view(np.uint8),
                                                     t.astype(np.float32).view(np.uint8)]), layout)
    ok, worst = agree(big, tiny * (1 + 1e-6))
    assert ok and worst < 1e-14
    ok, _ = agree(big, tiny * 1.1)  # 10% off: passed before the scaling
    assert not ok
    ok, worst = agree(big + 5e-5, tiny)  # within atol 1e-4 at scale 40
    assert ok and worst == pytest.approx(5e-5, rel=0.1)
    ok, _ = agree(big + [0, 0, 0, 0, 3e-4, 0], tiny)
    assert not ok


def test_models_bench_page_cache_before_loads(tmp_path):
    """model_files names an ONNX model's external-data files too;
    set_page_cache reads them into the page cache, or (--cold-load) drops
    them from it, before a runtime's timed load."""
    mb = bench_module()
    model = tmp_path / "tiny.onnx"
    tiny_model(model)
    assert mb.model_files(model) == (model,)
    m = onnx.load(str(model))
    onnx.save(m, str(tmp_path / "ext.onnx"), save_as_external_data=True, location="ext.data", size_threshold=0)
    assert mb.model_files(tmp_path / "ext.onnx") == (tmp_path / "ext.onnx", tmp_path / "ext.data")
    om = tmp_path / "x.om"
    om.write_bytes(os.urandom(1 << 20))

    def resident():
        r = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES", str(om)],
                           capture_output=True, text=True)
        return int(r.stdout.split()[0]) if r.returncode == 0 and r.stdout.strip() else None

    mb.set_page_cache([om], cold=True)
    before = resident()
    mb.set_page_cache([om], cold=False)
    after = resident()
    if before is None or after is None:
        pytest.skip("fincore cannot report page-cache residency here")
    assert before == 0 and after == 1 << 20
