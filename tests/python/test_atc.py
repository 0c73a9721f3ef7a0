"""atc, the model compiler (tools/atc, docs/atc.md): ATC's command line, ONNX
in, OpenACL .om out.

The models are small ONNX graphs built here with onnx.helper. atc is taken
from <build>/bin/atc (<build> as in conftest.py: $OPENACL_BUILD_DIR, default
build/); the tests skip when it is not built. The last tests load the .om
through acl.mdl and skip until that module exists.
"""
import json
import re
import subprocess

import numpy as np
import pytest

import acl_helpers as H

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ATC = H.build_dir() / "bin" / "atc"

pytestmark = pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")

FAILED = "ATC run failed"
SUCCESS = "ATC run success"


def run_atc(*args, timeout=120):
    proc = subprocess.run([str(ATC), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    proc.output = proc.stdout + proc.stderr
    return proc


def check_ok(proc):
    assert proc.returncode == 0, f"atc failed ({proc.returncode}):\n{proc.output}"
    return proc


def check_fails(proc, *needles):
    assert proc.returncode != 0, f"atc should have failed:\n{proc.output}"
    assert FAILED in proc.stderr, proc.output
    for n in needles:
        assert n in proc.output, f"{n!r} not in:\n{proc.output}"
    return proc


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def make_model(graph, opset=13):
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test_atc")


# ------------------------------------------------------------------- models

W_MLP = np.arange(16 * 8, dtype=np.float32).reshape(16, 8) / 100.0
B_MLP = np.linspace(-1, 1, 8, dtype=np.float32)


def mlp_reference(x):
    return np.maximum(x @ W_MLP + B_MLP, 0)


@pytest.fixture
def mlp(tmp_path):
    """x[1,16] -> MatMul 'mm' -> h -> Add 'add' -> a -> Relu 'relu' -> y[1,8]."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Add", ["h", "B"], ["a"], name="add"),
         helper.make_node("Relu", ["a"], ["y"], name="relu")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        initializer=[numpy_helper.from_array(W_MLP, "W"), numpy_helper.from_array(B_MLP, "B")])
    return save(make_model(g), tmp_path / "mlp.onnx")


@pytest.fixture
def conv(tmp_path):
    """x[1,3,8,8] -> Conv 'conv1' (4 filters, pad 1) -> Relu 'relu1' -> y[1,4,8,8]."""
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu1")],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[numpy_helper.from_array(w, "w")])
    return save(make_model(g), tmp_path / "conv.onnx")


@pytest.fixture
def two_heads(tmp_path):
    """x[1,16] -> MatMul 'mm' -> h (an output, also read by Relu and ArgMax);
    outputs h, y = Relu(h), idx = ArgMax(h) (int64) and p (an input passed through)."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["y"], name="relu"),
         helper.make_node("ArgMax", ["h"], ["idx"], name="am", axis=1)],
        "two_heads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [1, 1]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 2])],
        initializer=[numpy_helper.from_array(W_MLP, "W")])
    return save(make_model(g), tmp_path / "two_heads.onnx")


@pytest.fixture
def symbolic(tmp_path):
    """x[N,16] -> MatMul -> y[N,8]: a dim the ONNX model leaves free."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        "symbolic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])],
        initializer=[numpy_helper.from_array(W_MLP, "W")])
    return save(make_model(g), tmp_path / "symbolic.onnx")


@pytest.fixture
def unknown_ops(tmp_path):
    """Two nodes of op types no runtime knows, between supported ones."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="first_relu"),
         helper.make_node("FrobnicateOp", ["r"], ["f"], name="mystery_one"),
         helper.make_node("Sigmoid", ["f"], ["s"], name="sig"),
         helper.make_node("WibbleOp", ["s"], ["y"], name="mystery_two")],
        "unknown",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = make_model(g)
    onnx.save(model, str(tmp_path / "unknown.onnx"))  # not checker-valid on purpose
    return tmp_path / "unknown.onnx"


def build(model, out, *extra):
    return check_ok(run_atc(f"--model={model}", "--framework=5", f"--output={out}", "--soc_version=Ascend310P3",
                            *extra))


def info(om):
    return check_ok(run_atc("--mode=6", f"--om={om}")).stdout


def io_line(text, name):
    for line in text.splitlines():
        if f"] {name}:" in line:
            return line
    raise AssertionError(f"no line for {name!r} in:\n{text}")


# ------------------------------------------------------------------ basics

def test_help_lists_the_options():
    p = check_ok(run_atc("--help"))
    for opt in ("--model", "--framework", "--output", "--input_shape", "--dynamic_batch_size", "--dynamic_image_size",
                "--dynamic_dims", "--out_nodes", "--output_type", "--input_fp16_nodes", "--precision_mode", "--mode"):
        assert opt in p.stdout
    assert "source model's dtypes" in p.stdout
    assert run_atc("-h").returncode == 0


def test_version():
    p = check_ok(run_atc("--version"))
    assert p.stdout.startswith("atc (OpenACL) ")


def test_static_build_and_info(conv, tmp_path):
    p = build(conv, tmp_path / "conv")
    assert SUCCESS in p.stdout
    om = tmp_path / "conv.om"
    assert om.exists() and om.stat().st_size > 0
    # progress on stderr: import, optimize, compile, write
    for step in ("import", "optimize", "compile", "write"):
        assert f"atc: {step}" in p.stderr, p.stderr
    text = info(om)
    assert "producer: OpenACL" in text
    assert "source: conv.onnx" in text
    assert "--soc_version=Ascend310P3" in text  # the build command is recorded
    assert "soc_version: Ascend310P3" in text
    line = io_line(text, "x")
    assert "float32" in line and "[1,3,8,8]" in line and "NCHW" in line
    line = io_line(text, "y")
    assert "float32" in line and "[1,4,8,8]" in line
    assert "gears: none" in text


def test_om_already_ending_in_om_is_not_doubled(mlp, tmp_path):
    build(mlp, tmp_path / "m.om")
    assert (tmp_path / "m.om").exists() and not (tmp_path / "m.om.om").exists()


def test_space_separated_values(mlp, tmp_path):
    check_ok(run_atc("--model", mlp, "--framework", "5", "--output", tmp_path / "sp"))
    assert (tmp_path / "sp.om").exists()


def test_input_shape_overrides_declared_shape(conv, tmp_path):
    build(conv, tmp_path / "c2", "--input_shape=x:2,3,8,8")
    text = info(tmp_path / "c2.om")
    assert "[2,3,8,8]" in io_line(text, "x")
    assert "[2,4,8,8]" in io_line(text, "y")


def test_input_format_recorded(mlp, tmp_path):
    build(mlp, tmp_path / "m", "--input_format=NHWC")
    assert "NHWC" in io_line(info(tmp_path / "m.om"), "x")
    build(mlp, tmp_path / "m2")
    assert "format ND" in io_line(info(tmp_path / "m2.om"), "x")  # 2-D input: ND by default


# ------------------------------------------------------------------- gears

def test_dynamic_batch(conv, tmp_path):
    p = build(conv, tmp_path / "b", "--input_shape=x:-1,3,8,8", "--dynamic_batch_size=1,2,4")
    assert p.stderr.count("compile  gear") == 3, p.stderr
    text = info(tmp_path / "b.om")
    assert "dynamic batch size" in text and "1; 2; 4" in text
    assert "[-1,3,8,8]" in io_line(text, "x")
    assert "ascend_mbatch_shape_data" in text
    assert "gear dims: x:0" in text
    # what atc planned (largest gear) is what the loader computes
    planned = re.search(r"planned at build: work (\d+) bytes, weights (\d+) bytes", text).groups()
    assert planned[0] != "0"
    assert f"work size: {planned[0]} bytes" in text
    assert f"weight size: {planned[1]} bytes" in text


def test_dynamic_image_size(conv, tmp_path):
    build(conv, tmp_path / "hw", "--input_shape=x:1,3,-1,-1", "--dynamic_image_size=8,8;16,16")
    text = info(tmp_path / "hw.om")
    assert "dynamic image size" in text and "8,8; 16,16" in text
    assert "[1,3,-1,-1]" in io_line(text, "x")


def test_dynamic_dims(mlp, tmp_path):
    build(mlp, tmp_path / "d", "--input_shape=x:-1,16", "--dynamic_dims=1;2;4", "--input_format=ND")
    text = info(tmp_path / "d.om")
    assert "dynamic dims" in text and "1; 2; 4" in text
    assert "[-1,16]" in io_line(text, "x")


def test_mode1_json_lists_nodes(conv, tmp_path):
    build(conv, tmp_path / "j", "--input_shape=x:-1,3,8,8", "--dynamic_batch_size=1,2")
    check_ok(run_atc("--mode=1", f"--om={tmp_path / 'j.om'}", f"--json={tmp_path / 'j.json'}"))
    doc = json.loads((tmp_path / "j.json").read_text())
    text = json.dumps(doc)
    assert "Conv" in text and "conv1" in text
    # the JSON names the model's input and output
    assert '"x"' in text and '"y"' in text


def test_mode1_reads_onnx_too(mlp, tmp_path):
    check_ok(run_atc("--mode=1", f"--om={mlp}", f"--json={tmp_path / 'm.json'}"))
    text = (tmp_path / "m.json").read_text()
    json.loads(text)
    assert "MatMul" in text


# -------------------------------------------------------------- check mode

def test_check_mode_lists_every_unsupported_node(unknown_ops, tmp_path):
    p = run_atc("--mode=3", f"--model={unknown_ops}", "--framework=5")
    check_fails(p, "mystery_one", "mystery_two", "FrobnicateOp", "WibbleOp")
    assert not list(tmp_path.glob("*.om"))


def test_check_mode_passes(mlp):
    p = check_ok(run_atc("--mode=3", f"--model={mlp}", "--framework=5"))
    assert "check passed" in p.stderr


def test_build_with_unsupported_nodes_fails(unknown_ops, tmp_path):
    check_fails(run_atc(f"--model={unknown_ops}", "--framework=5", f"--output={tmp_path / 'u'}"),
                "mystery_one", "mystery_two")
    assert not (tmp_path / "u.om").exists()


# ------------------------------------------------------------- graph edits

def test_out_nodes(mlp, tmp_path):
    build(mlp, tmp_path / "o", "--out_nodes=add:0;mm:0")
    text = info(tmp_path / "o.om")
    assert "outputs (2)" in text
    assert text.index("] a:") < text.index("] h:")
    assert "] y:" not in text


def test_output_type_fp16_all(conv, tmp_path):
    build(conv, tmp_path / "h", "--output_type=FP16")
    line = io_line(info(tmp_path / "h.om"), "y")  # the name stays
    assert "float16" in line


def test_output_type_per_node(mlp, tmp_path):
    build(mlp, tmp_path / "h", "--out_nodes=relu:0;mm:0", "--output_type=mm:0:FP16")
    text = info(tmp_path / "h.om")
    assert "float16" in io_line(text, "h")
    assert "float32" in io_line(text, "y")


def test_output_type_leaves_integer_outputs_and_internal_readers(two_heads, tmp_path):
    p = build(two_heads, tmp_path / "t", "--output_type=FP16")
    assert "'idx' (int64) as it is" in p.stderr
    text = info(tmp_path / "t.om")
    assert "float16" in io_line(text, "h")
    assert "float16" in io_line(text, "y")
    assert "int64" in io_line(text, "idx")
    # an input passed straight through gets a cast copy under a new name
    assert "float16" in io_line(text, "p_float16")


def test_output_read_by_a_subgraph_is_not_cast(tmp_path):
    """Casting 'y' in place would change what the If branches read by name."""
    branch = helper.make_graph([helper.make_node("Neg", ["y"], ["t"], name="neg")], "branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])])
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu"),
         helper.make_node("If", ["c"], ["z"], name="if1", then_branch=branch, else_branch=branch)],
        "with_if",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])])
    model = save(make_model(g), tmp_path / "with_if.onnx")
    check_fails(run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}",
                        "--output_type=relu:0:FP16"), "read inside an If/Loop/Scan body")
    build(model, tmp_path / "ok", "--output_type=if1:0:FP16")
    text = info(tmp_path / "ok.om")
    assert "float16" in io_line(text, "z") and "float32" in io_line(text, "y")


def test_symbolic_dims_stay_free(symbolic, tmp_path):
    p = build(symbolic, tmp_path / "s")
    assert "shapes resolved at execution" in p.stderr
    text = info(tmp_path / "s.om")
    assert "[-1,16]" in io_line(text, "x")
    assert "work size: 0 bytes" in text


def test_gears_on_a_symbolic_dim(symbolic, tmp_path):
    build(symbolic, tmp_path / "g", "--input_shape=x:-1,16", "--dynamic_batch_size=2,3")
    text = info(tmp_path / "g.om")
    assert "2 gears: 2; 3" in text
    assert "work size: 0" not in text


def test_input_fp16_nodes(conv, tmp_path):
    build(conv, tmp_path / "i", "--input_fp16_nodes=x")
    text = info(tmp_path / "i.om")
    assert "float16" in io_line(text, "x")
    assert "float32" in io_line(text, "y")


def test_precision_mode_recorded(mlp, tmp_path):
    p = build(mlp, tmp_path / "p", "--precision_mode=allow_mix_precision")
    assert "source model's dtypes" in p.stderr
    text = info(tmp_path / "p.om")
    assert "precision_mode: allow_mix_precision" in text
    assert "float32" in io_line(text, "y")  # computation keeps the dtype


def test_ignored_ascend_option_is_reported(mlp, tmp_path):
    p = build(mlp, tmp_path / "ig", "--op_select_implmode=high_precision")
    assert "--op_select_implmode has no effect" in p.stderr


def test_input_shape_range_leaves_dims_free_within_bounds(mlp, tmp_path):
    build(mlp, tmp_path / "r", "--input_shape_range=x:[1~8,16]")
    line = io_line(info(tmp_path / "r.om"), "x")
    assert "[-1,16]" in line and "range [1~8,16]" in line
    build(mlp, tmp_path / "o", "--input_shape=x:2~-1,16")  # open upper bound
    line = io_line(info(tmp_path / "o.om"), "x")
    assert "range [2~-1,16]" in line and "size known at execution" in line


# -------------------------------------------------------------- error paths

ERROR_CASES = [
    # (id, args after --model (None: no --model), expected substrings)
    ("no_framework", ["--output={out}"], ["--framework is required"]),
    ("caffe", ["--framework=0", "--output={out}"], ["not supported by OpenACL", "ONNX"]),
    ("tensorflow", ["--framework=3", "--output={out}"], ["TensorFlow", "not supported by OpenACL", "export"]),
    ("bad_framework", ["--framework=9", "--output={out}"], ["--framework=9"]),
    ("no_output", ["--framework=5"], ["--output is required"]),
    ("output_is_a_folder", ["--framework=5", "--output={tmp}/"], ["names a folder"]),
    ("output_folder_missing", ["--framework=5", "--output={tmp}/nope/m"], ["does not exist"]),
    ("unknown_option", ["--framework=5", "--output={out}", "--input_shap=x:1,16"],
     ["unknown option '--input_shap'", "--input_shape"]),
    ("option_without_value", ["--framework=5", "--output"], ["needs a value"]),
    ("input_not_in_model", ["--framework=5", "--output={out}", "--input_shape=xx:1,16"],
     ["'xx' is not an input", "'x'"]),
    ("rank_mismatch", ["--framework=5", "--output={out}", "--input_shape=x:1,16,1"], ["rank 2", "3 dim(s)"]),
    ("bad_dim", ["--framework=5", "--output={out}", "--input_shape=x:1,abc"], ["'abc'"]),
    ("minus_one_without_gear", ["--framework=5", "--output={out}", "--input_shape=x:-1,16"],
     ["needs a gear option"]),
    ("gear_without_minus_one", ["--framework=5", "--output={out}", "--input_shape=x:1,16",
                                "--dynamic_batch_size=1,2"], ["needs --input_shape with -1"]),
    ("gear_without_input_shape", ["--framework=5", "--output={out}", "--dynamic_batch_size=1,2"],
     ["needs --input_shape with -1"]),
    ("two_gear_kinds", ["--framework=5", "--output={out}", "--input_shape=x:-1,16", "--dynamic_batch_size=1,2",
                        "--dynamic_dims=1;2"], ["cannot be used together"]),
    ("batch_not_axis0", ["--framework=5", "--output={out}", "--input_shape=x:1,-1", "--dynamic_batch_size=1,2"],
     ["only on the batch axis"]),
    ("image_needs_two", ["--framework=5", "--output={out}", "--input_shape=x:1,-1", "--dynamic_image_size=1,2;3,4"],
     ["exactly two"]),
    ("image_gear_pairs", ["--framework=5", "--output={out}", "--input_shape=x:-1,-1", "--dynamic_image_size=1,2,3"],
     ["height,width"]),
    ("dims_count", ["--framework=5", "--output={out}", "--input_shape=x:-1,16", "--dynamic_dims=1,2;3,4"],
     ["one value per -1 dim"]),
    ("gear_not_positive", ["--framework=5", "--output={out}", "--input_shape=x:-1,16", "--dynamic_batch_size=0,2"],
     ["not a positive size"]),
    ("gear_twice", ["--framework=5", "--output={out}", "--input_shape=x:-1,16", "--dynamic_batch_size=2,2"],
     ["twice"]),
    ("one_gear", ["--framework=5", "--output={out}", "--input_shape=x:-1,16", "--dynamic_batch_size=4"],
     ["--dynamic_batch_size"]),
    ("range_and_gears", ["--framework=5", "--output={out}", "--input_shape_range=x:[1~4,16]",
                         "--dynamic_batch_size=1,2"], ["cannot be combined"]),
    ("shape_and_range", ["--framework=5", "--output={out}", "--input_shape=x:1,16", "--input_shape_range=x:[1~4,16]"],
     ["cannot be used together"]),
    ("bad_precision_mode", ["--framework=5", "--output={out}", "--precision_mode=force_fp61"],
     ["not a precision mode", "force_fp16"]),
    ("aipp", ["--framework=5", "--output={out}", "--insert_op_conf=aipp.cfg"], ["AIPP", "not supported yet"]),
    ("singleop_with_model", ["--singleop=ops.json", "--output={out}"], ["--singleop and --model do not go together"]),
    ("out_node_unknown", ["--framework=5", "--output={out}", "--out_nodes=ad:0"], ["no node 'ad'", "'add'"]),
    ("out_node_index", ["--framework=5", "--output={out}", "--out_nodes=add:3"], ["index 3 does not exist"]),
    ("output_type_word", ["--framework=5", "--output={out}", "--output_type=FP64"], ["'FP64' is not FP32"]),
    ("output_type_not_output", ["--framework=5", "--output={out}", "--output_type=mm:0:FP16"],
     ["not a graph output", "relu:0"]),
    ("fp16_input_unknown", ["--framework=5", "--output={out}", "--input_fp16_nodes=z"], ["'z' is not an input"]),
    ("bad_log", ["--framework=5", "--output={out}", "--log=loud"], ["--log=loud"]),
    ("bad_mode", ["--framework=5", "--output={out}", "--mode=7"], ["--mode=7 is not supported"]),
    ("bad_input_format", ["--framework=5", "--output={out}", "--input_format=NC1HWC0"],
     ["--input_format=NC1HWC0 is not supported"]),
    ("stray_argument", ["--framework=5", "--output={out}", "model.onnx"], ["unexpected argument"]),
    ("bad_pack_weights", ["--framework=5", "--output={out}", "--pack_weights=maybe"],
     ["--pack_weights=maybe", "true or false"]),
]


@pytest.mark.parametrize("args,needles", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_error_paths(mlp, tmp_path, args, needles):
    out = tmp_path / "out"
    argv = [f"--model={mlp}"] + [a.format(out=out, tmp=tmp_path) for a in args]
    check_fails(run_atc(*argv), *needles)
    assert not (tmp_path / "out.om").exists()


def test_missing_model_option(tmp_path):
    check_fails(run_atc("--framework=5", f"--output={tmp_path / 'o'}"), "--model is required")


def test_model_file_missing(tmp_path):
    check_fails(run_atc(f"--model={tmp_path / 'none.onnx'}", "--framework=5", f"--output={tmp_path / 'o'}"),
                "does not exist")


def test_model_not_onnx(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_text("this is not a model\n")
    check_fails(run_atc(f"--model={bad}", "--framework=5", f"--output={tmp_path / 'o'}"), "not an ONNX model")


def test_om_as_model_is_refused(mlp, tmp_path):
    build(mlp, tmp_path / "m")
    check_fails(run_atc(f"--model={tmp_path / 'm.om'}", "--framework=5", f"--output={tmp_path / 'o'}"),
                "already an OpenACL .om")


def test_mode1_needs_om_and_json(tmp_path):
    check_fails(run_atc("--mode=1"), "--om")
    check_fails(run_atc("--mode=1", f"--om={tmp_path / 'x.om'}"), "--json")


def test_mode6_needs_om():
    check_fails(run_atc("--mode=6"), "--om")


def test_mode6_rejects_garbage(tmp_path):
    bad = tmp_path / "bad.om"
    bad.write_bytes(b"OACLOM\r\n" + b"\0" * 100)
    check_fails(run_atc("--mode=6", f"--om={bad}"))


# --------------------------------------------------- load and run via acl.mdl

def _acl_mdl():
    import acl
    if not hasattr(acl, "mdl"):
        pytest.skip("acl.mdl is not built yet")
    return acl


def _run_model(acl, model_id, feeds, gear=None):
    """Executes with numpy inputs (in model order); returns the outputs as numpy
    arrays of the model's output sizes (bytes, to view by the caller)."""
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == H.ACL_SUCCESS
    freed = []
    try:
        inputs = acl.mdl.create_dataset()
        n_in = acl.mdl.get_num_inputs(desc)
        for i in range(n_in):
            size = acl.mdl.get_input_size_by_index(desc, i)
            ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == H.ACL_SUCCESS
            freed.append(ptr)
            if i < len(feeds):
                H.write_device(acl, ptr, feeds[i])
                size = feeds[i].nbytes
            buf = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(inputs, buf)
            assert ret == H.ACL_SUCCESS
        if gear is not None:
            idx, ret = acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data")
            assert ret == H.ACL_SUCCESS
            assert acl.mdl.set_dynamic_batch_size(model_id, inputs, idx, gear) == H.ACL_SUCCESS
        outputs = acl.mdl.create_dataset()
        sizes = []
        for i in range(acl.mdl.get_num_outputs(desc)):
            size = acl.mdl.get_output_size_by_index(desc, i)
            ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == H.ACL_SUCCESS
            freed.append(ptr)
            sizes.append((ptr, size))
            _, ret = acl.mdl.add_dataset_buffer(outputs, acl.create_data_buffer(ptr, size))
            assert ret == H.ACL_SUCCESS
        ret = acl.mdl.execute(model_id, inputs, outputs)
        assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
        results = [H.read_device(acl, ptr, size) for ptr, size in sizes]
        for ds in (inputs, outputs):
            for i in range(acl.mdl.get_dataset_num_buffers(ds)):
                acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(ds, i))
            acl.mdl.destroy_dataset(ds)
        return results
    finally:
        for ptr in freed:
            acl.rt.free(ptr)
        acl.mdl.destroy_desc(desc)


def test_om_runs_through_acl(mlp, tmp_path, device):
    acl = _acl_mdl()
    build(mlp, tmp_path / "run")
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "run.om"))
    assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
    try:
        x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
        (y,) = _run_model(acl, model_id, [x])
        np.testing.assert_allclose(y.view(np.float32).reshape(1, 8), mlp_reference(x), rtol=1e-5, atol=1e-6)
    finally:
        acl.mdl.unload(model_id)


def test_fp16_edits_run_through_acl(mlp, tmp_path, device):
    acl = _acl_mdl()
    build(mlp, tmp_path / "h", "--input_fp16_nodes=x", "--output_type=FP16")
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "h.om"))
    assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
    try:
        x = np.linspace(-1, 1, 16, dtype=np.float16).reshape(1, 16)
        (y,) = _run_model(acl, model_id, [x])
        expected = mlp_reference(x.astype(np.float32))
        np.testing.assert_allclose(y.view(np.float16).reshape(1, 8).astype(np.float32), expected, rtol=2e-3,
                                   atol=2e-3)
    finally:
        acl.mdl.unload(model_id)


def test_batch_gears_run_through_acl(mlp, tmp_path, device):
    acl = _acl_mdl()
    build(mlp, tmp_path / "g", "--input_shape=x:-1,16", "--dynamic_batch_size=1,2,4")
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "g.om"))
    assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
    try:
        for batch in (1, 2, 4):
            x = np.linspace(-1, 1, 16 * batch, dtype=np.float32).reshape(batch, 16)
            (y,) = _run_model(acl, model_id, [x], gear=batch)
            got = y.view(np.float32)[:batch * 8].reshape(batch, 8)
            np.testing.assert_allclose(got, mlp_reference(x), rtol=1e-5, atol=1e-6)
    finally:
        acl.mdl.unload(model_id)


def test_packed_weights_every_load_agrees(tmp_path, device):
    """atc stores the weights packed for this machine's kernels (a 3x3
    convolution's Winograd transform, here) besides the originals; the .om
    is larger, and every way of loading it (from the file: the packed bytes
    used in place; from memory: the .om copied whole and the packed bytes
    used from the copy, so the caller's buffer may be overwritten at once;
    with the weights in the caller's memory, from either) gives the outputs
    of the .om without them."""
    acl = _acl_mdl()
    import mdl_models
    # 128 channels: where Winograd applies on every machine (128 on those
    # with full-width AVX-512, 32 elsewhere).
    model = mdl_models.conv_relu(tmp_path, height=16, width=16, channels=128, filters=128)
    build(model.path, tmp_path / "packed")
    build(model.path, tmp_path / "plain", "--pack_weights=false")
    packed, plain = tmp_path / "packed.om", tmp_path / "plain.om"
    # U is 36/9 = 4x the 3x3 weights (128*128*9 floats).
    assert packed.stat().st_size >= plain.stat().st_size + 4 * 128 * 128 * 9 * 4
    assert re.search(r"packed weights: [1-9]\d* blobs", info(packed)), info(packed)
    assert "packed weights: none" in info(plain)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 128, 16, 16)).astype(np.float32)
    want = model.reference(x)[0]
    results = []
    for path in (plain, packed):
        _, weight_size, ret = acl.mdl.query_size(str(path))
        assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
        weight_ptr, ret = acl.rt.malloc(weight_size, 0)
        assert ret == H.ACL_SUCCESS, acl.get_recent_err_msg()
        for how in ("file", "mem", "file_with_mem", "mem_with_mem"):
            if how.startswith("file"):
                model_id, ret = (acl.mdl.load_from_file(str(path)) if how == "file" else
                                 acl.mdl.load_from_file_with_mem(str(path), 0, 0, weight_ptr, weight_size))
            else:  # the bytes are only lent for the call
                data = np.fromfile(path, dtype=np.uint8)
                model_id, ret = (acl.mdl.load_from_mem(data.ctypes.data, data.nbytes) if how == "mem" else
                                 acl.mdl.load_from_mem_with_mem(data.ctypes.data, data.nbytes, 0, 0, weight_ptr,
                                                                weight_size))
                data[:] = 0x5A
            assert ret == H.ACL_SUCCESS, (how, acl.get_recent_err_msg())
            try:
                (y,) = _run_model(acl, model_id, [x])
            finally:
                acl.mdl.unload(model_id)
            y = y.view(np.float32).reshape(want.shape)
            # Sums of 1152 products reach about 30: Winograd's error is a few
            # 1e-6 of that.
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-3)
            results.append(y)
        acl.rt.free(weight_ptr)
    for y in results[1:]:
        np.testing.assert_array_equal(y, results[0])
