"""bench/node_times.py on a tiny generated model: two layers of Conv+Relu, then
Gemm. Each of our nodes gets a row, onnxruntime's (or OpenVINO's) times are
joined to them by name (unnamed nodes are named first), --group sums the two
layers into one row, and a bad input is a clear error. Timings are never
compared."""
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

TOOL = H.REPO_ROOT / "bench" / "node_times.py"


def two_layer_model(path):
    rng = np.random.default_rng(3)
    inits, nodes, x = [], [], "x"
    for i in range(2):
        inits += [numpy_helper.from_array((rng.standard_normal((4, 4 if i else 3, 3, 3)) * 0.3).astype(np.float32),
                                          f"w{i}"),
                  numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"/layer.{i}/conv", pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"/layer.{i}/relu")]
        x = f"r{i}"
    inits.append(numpy_helper.from_array((rng.standard_normal((10, 256)) * 0.1).astype(np.float32), "gw"))
    nodes += [helper.make_node("Flatten", [x], ["f"], name="/flatten"),
              helper.make_node("Gemm", ["f", "gw"], ["y"], name="/head/gemm", transB=1)]
    graph = helper.make_graph(nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def run_tool(*args):
    build = H.build_dir()
    if not (build / "bin" / "openacl-run").exists():
        pytest.skip(f"{build / 'bin' / 'openacl-run'} not built")
    env = dict(os.environ, OPENACL_BUILD_DIR=str(build))
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def test_rows_joined_by_name(tmp_path):
    model = tmp_path / "two.onnx"
    two_layer_model(model)
    out = tmp_path / "rows.json"
    proc = run_tool(model, "--runs", 3, "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["openacl_median_ms"] > 0
    rows = {r["name"]: r for r in doc["rows"]}
    # Relu is fused into each Conv on our side: the Conv rows carry it.
    for name in ("/layer.0/conv", "/layer.1/conv", "/head/gemm"):
        assert name in rows, sorted(rows)
        # The 1x10 Gemm (a dot product per output) may take under the 0.5 us
        # that openacl-run's three decimals of a millisecond show.
        assert rows[name]["openacl_ms"] > 0 or name == "/head/gemm"
    assert rows["/head/gemm"]["op"] == "Gemm"
    assert rows["/head/gemm"]["peer_ms"] > 0  # onnxruntime keeps the Gemm's name
    assert "/head/gemm" in proc.stdout


def test_openvino_as_the_peer(tmp_path):
    pytest.importorskip("openvino")
    model = tmp_path / "two.onnx"
    two_layer_model(model)
    out = tmp_path / "rows.json"
    proc = run_tool(model, "--peer", "openvino", "--runs", 3, "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["peer"] == "openvino"
    rows = {r["name"]: r for r in doc["rows"]}
    # OpenVINO names a Conv's node ".../WithoutBiases" and the Gemm after its
    # output "y": both are joined to the ONNX node.
    assert rows["/layer.1/conv"]["peer_ms"] > 0, doc
    assert rows["/head/gemm"]["peer_ms"] is not None, doc
    assert "openvino" in proc.stdout


def test_group_sums_layers(tmp_path):
    model = tmp_path / "two.onnx"
    two_layer_model(model)
    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 3, 8, 8), np.float32))
    out = tmp_path / "rows.json"
    proc = run_tool(model, "--input", f"x={x}", "--runs", 3, "--group", r"layer\.\d+", "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["/*/conv"]["nodes"] == 2
    assert rows["/head/gemm"]["nodes"] == 1


def test_unnamed_nodes_are_named(tmp_path):
    model = tmp_path / "unnamed.onnx"
    w = numpy_helper.from_array(np.ones((8, 16), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "unnamed",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], [w])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(model))
    out = tmp_path / "rows.json"
    proc = run_tool(model, "--runs", 2, "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [row] = json.loads(out.read_text())["rows"]
    assert row["name"] == "MatMul_0" and row["peer_ms"] > 0


def test_free_dimension_needs_an_input(tmp_path):
    model = tmp_path / "free.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "free",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(model))
    proc = run_tool(model, "--runs", 2)
    assert proc.returncode != 0
    assert "free dimension" in proc.stderr and "--input" in proc.stderr
