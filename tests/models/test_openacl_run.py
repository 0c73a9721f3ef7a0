"""openacl-run, the developer tool: runs a model on given or random inputs,
prints outputs, the plan and per-node times, writes outputs, and fails
clearly on bad input. Models are built here with onnx.helper."""
import os
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

BUILD = os.path.abspath(os.environ.get("OPENACL_BUILD_DIR", "build"))
RUNNER = os.path.join(BUILD, "bin", "openacl-run")


def run(*args):
    return subprocess.run([RUNNER, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def add_relu(tmp_path):
    """y = Relu(x + w), w a constant; x has a free batch dim N."""
    w = numpy_helper.from_array(np.array([1, -2, 3], dtype=np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["s"], name="add"), helper.make_node("Relu", ["s"], ["y"], name="relu")],
        "add_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], [w])
    path = tmp_path / "add_relu.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_given_input_outputs_written(add_relu, tmp_path):
    x = np.array([[0, 1, -4], [-2, 3, 1]], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    p = run(add_relu, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out", "--plan", "--times")
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), np.maximum(x + [1, -2, 3], 0))
    assert "output 'y': float32[2,3]" in p.stdout
    assert "memory plan" in p.stdout and "work arena" in p.stdout
    assert "per-node times" in p.stdout and "Relu 'relu'" in p.stdout


def test_random_input_needs_free_dims(add_relu):
    p = run(add_relu)
    assert p.returncode == 2
    assert "give its shape with --input x:" in p.stderr
    p = run(add_relu, "--input", "x:4,3", "--repeat", "3", "--times")
    assert p.returncode == 0, p.stderr
    # Per-node times are each node's median over the runs, one line per node.
    assert "per-node times (median of 3 run(s))" in p.stdout
    assert p.stdout.count("Relu 'relu'") == 1
    assert "float32[4,3]" in p.stdout and "ran 3 time(s)" in p.stdout


def test_input_of_another_name_or_a_missing_file_is_refused(add_relu, tmp_path):
    # Not random data in its place: a typo in a name would time or check the wrong input.
    np.save(tmp_path / "x.npy", np.zeros((1, 3), np.float32))
    p = run(add_relu, "--input", f"input_0={tmp_path / 'x.npy'}")
    assert p.returncode == 2
    assert "--input input_0: the model has no input of that name (its inputs: 'x')" in p.stderr
    p = run(add_relu, "--input", "z:4,3")
    assert p.returncode == 2 and "no input of that name" in p.stderr
    p = run(add_relu, "--input", f"x={tmp_path / 'missing.npy'}")
    assert p.returncode == 2
    assert "missing.npy: no such file" in p.stderr


def test_check_against_expected(add_relu, tmp_path):
    x = np.ones((1, 3), dtype=np.float32)
    data = tmp_path / "set"
    data.mkdir()
    (data / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(np.array([[2, 0, 4]], np.float32), "y").SerializeToString())
    assert run(add_relu, "--data", data, "--check").returncode == 0
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(np.array([[2, 0, 5]], np.float32), "y").SerializeToString())
    p = run(add_relu, "--data", data, "--check")
    assert p.returncode == 3
    assert "MISMATCH output 0 'y': 1 of 3 values differ" in p.stdout


def test_bad_input_is_a_clear_error(add_relu, tmp_path):
    p = run(tmp_path / "missing.onnx")
    assert p.returncode == 1 and "cannot open model file" in p.stderr
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07garbage" * 10)
    p = run(tmp_path / "junk.onnx")
    assert p.returncode == 1 and "import" in p.stderr
    np.save(tmp_path / "wrong.npy", np.ones((2, 4), np.float32))
    p = run(add_relu, "--input", f"x={tmp_path / 'wrong.npy'}")
    assert p.returncode == 1
    assert "'x'" in p.stderr or "[2,4]" in p.stderr, p.stderr
    assert run(add_relu, "--bogus").returncode == 2


def test_unsupported_ops_listed_together(tmp_path):
    g = helper.make_graph(
        [helper.make_node("NoSuchOpA", ["x"], ["a"], name="first"),
         helper.make_node("NoSuchOpB", ["a"], ["y"], name="second")],
        "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    p = run(path)
    assert p.returncode == 1
    assert "2 node(s) cannot run" in p.stderr
    assert "'first'" in p.stderr and "'second'" in p.stderr
