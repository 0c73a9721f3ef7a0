"""Encoder self-attention written out per head, as PyTorch exports BERT-style
layers (Split into q/k/v, Reshape + Transpose to heads, MatMul, Div by
sqrt(d), Add of the padding mask, Softmax, MatMul, Transpose + Reshape back):
compiled by atc into an .om, loaded with acl.mdl.load_from_file and executed
through acl.mdl.execute, against onnxruntime on the same ONNX file. The
engine turns the pattern into one Attention node (graph::fuse_attention);
openacl-run's per-node times show it did.
"""
import subprocess

import numpy as np
import pytest

import acl
import acl_helpers as H
import mdl_models

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ATC = H.build_dir() / "bin" / "atc"
RUN = H.build_dir() / "bin" / "openacl-run"
B, S, HEADS, D = 2, 24, 4, 8
HIDDEN = HEADS * D


def i64(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.int64), name)


def f32(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def attention_model(path, scale_op):
    rng = np.random.default_rng(5)
    w_qkv = (rng.standard_normal((HIDDEN, 3 * HIDDEN)) * 0.2).astype(np.float32)
    b_qkv = (rng.standard_normal(3 * HIDDEN) * 0.1).astype(np.float32)
    w_out = (rng.standard_normal((HIDDEN, HIDDEN)) * 0.2).astype(np.float32)
    scale = [8 ** 0.5] if scale_op == "Div" else [8 ** -0.5]
    nodes = [
        helper.make_node("MatMul", ["x", "w_qkv"], ["qkv0"]),
        helper.make_node("Add", ["b_qkv", "qkv0"], ["qkv"]),
        helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=-1),
        helper.make_node("Reshape", ["q", "heads"], ["q4"]),
        helper.make_node("Reshape", ["k", "heads"], ["k4"]),
        helper.make_node("Reshape", ["v", "heads"], ["v4"]),
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kt"], ["scores"]),
        helper.make_node(scale_op, ["scores", "scale"], ["scaled"]),
        # mask [B, S] int64 (1 = token, 0 = padding) -> (1 - mask) * -10000 as [B, 1, 1, S]
        helper.make_node("Unsqueeze", ["mask", "axes12"], ["mask4"]),
        helper.make_node("Cast", ["mask4"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "maskf"], ["inv"]),
        helper.make_node("Mul", ["inv", "big"], ["bias"]),
        helper.make_node("Add", ["scaled", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "vh"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merged"], ["ctx3"]),
        helper.make_node("MatMul", ["ctx3", "w_out"], ["y"]),
    ]
    inits = [f32("w_qkv", w_qkv), f32("b_qkv", b_qkv), f32("w_out", w_out), i64("split", [HIDDEN] * 3),
             i64("heads", [B, S, HEADS, D]), i64("merged", [B, S, HIDDEN]), f32("scale", scale),
             i64("axes12", [1, 2]), f32("one", 1.0), f32("big", -10000.0)]
    graph = helper.make_graph(
        nodes, "encoder_attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, HIDDEN]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, [B, S])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, HIDDEN])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def execute(om, feeds):
    model_id, ret = acl.mdl.load_from_file(str(om))
    assert ret == H.ACL_SUCCESS, f"load_from_file -> {ret}: {acl.get_recent_err_msg()}"
    try:
        out, = H.execute_model(acl, model_id, feeds, [B * S * HIDDEN * 4])
        return out.view(np.float32).reshape(B, S, HIDDEN)
    finally:
        assert acl.mdl.unload(model_id) == H.ACL_SUCCESS


@pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")
@pytest.mark.parametrize("scale_op", ["Div", "Mul"])
def test_written_out_attention_matches_onnxruntime(scale_op, device, tmp_path):
    path = tmp_path / "attention.onnx"
    attention_model(path, scale_op)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((B, S, HIDDEN)).astype(np.float32)
    mask = np.ones((B, S), dtype=np.int64)
    mask[1, S - 7:] = 0  # the second sequence is padded
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x, "mask": mask})[0]

    proc = mdl_models.run_atc(ATC, path, tmp_path / "attention")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = execute(tmp_path / "attention.om", [x, mask])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    times = subprocess.run([str(RUN), str(path), "--times"], capture_output=True, text=True, timeout=60)
    assert times.returncode == 0, times.stderr
    assert "Attention '" in times.stdout and "Softmax '" not in times.stdout, times.stdout
