"""Pieces of LR-ASPP (MobileNetV3's segmentation net), compiled by atc into
an .om, loaded with acl.mdl.load_from_file and executed through
acl.mdl.execute, against onnxruntime on the same ONNX file:

- its segmentation head: convolutions around float32 bilinear Resize nodes
  with constant scales or sizes (the head's 2x upsampling between two
  convolutions, which the engine keeps in channel blocks, and the final
  upsampling into a graph output, plain), and a legacy Upsample;
- a squeeze-excite gate: convolutions over a 1x1 plane (run as
  matrix-vector products, no oneDNN primitive), one with a residual Add and
  a HardSigmoid fused into it, another without bias.
"""
import numpy as np
import pytest

import acl
import acl_helpers as H
import mdl_models

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ATC = H.build_dir() / "bin" / "atc"
N, C, HW, CLASSES = 2, 32, 9, 5
OUT = 8 * 2 * HW  # 9 -> 18 (scales) -> 144 (sizes)


def head_model(path, coord):
    rng = np.random.default_rng(11)

    def f32(name, *shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Resize", ["r1", "", "scales"], ["up1"], mode="linear",
                         coordinate_transformation_mode=coord),
        helper.make_node("Conv", ["up1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c2", "w3", "b3"], ["logits"]),
        helper.make_node("Resize", ["logits", "", "", "sizes"], ["y"], mode="linear",
                         coordinate_transformation_mode=coord),
    ]
    inits = [f32("w1", C, C, 3, 3), f32("b1", C), f32("w2", 16, C, 3, 3), f32("b2", 16),
             f32("w3", CLASSES, 16, 1, 1), f32("b3", CLASSES),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             numpy_helper.from_array(np.array([N, CLASSES, OUT, OUT], np.int64), "sizes")]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, HW, HW])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, CLASSES, OUT, OUT])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def upsample_model(path):
    w = numpy_helper.from_array((np.random.default_rng(12).standard_normal((16, 16, 1, 1)) * 0.3).astype(np.float32),
                                "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Upsample", ["c", "scales"], ["u"], mode="linear"),
             helper.make_node("Conv", ["u", "w"], ["y"])]
    graph = helper.make_graph(
        nodes, "upsample", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 5, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 10, 21])],
        [w, numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    onnx.save(model, str(path))


def run_om(tmp_path, path, x, out_shape):
    proc = mdl_models.run_atc(ATC, path, tmp_path / "model")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "model.om"))
    assert ret == H.ACL_SUCCESS, f"load_from_file -> {ret}: {acl.get_recent_err_msg()}"
    try:
        out, = H.execute_model(acl, model_id, [x], [int(np.prod(out_shape)) * 4])
        return out.view(np.float32).reshape(out_shape)
    finally:
        assert acl.mdl.unload(model_id) == H.ACL_SUCCESS


@pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")
@pytest.mark.parametrize("coord", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
def test_segmentation_head_matches_onnxruntime(coord, device, tmp_path):
    path = tmp_path / "head.onnx"
    head_model(path, coord)
    x = np.random.default_rng(13).standard_normal((N, C, HW, HW)).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = run_om(tmp_path, path, x, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")
def test_legacy_upsample_matches_onnxruntime(device, tmp_path):
    path = tmp_path / "upsample.onnx"
    upsample_model(path)
    x = np.random.default_rng(14).standard_normal((1, 16, 5, 7)).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = run_om(tmp_path, path, x, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def squeeze_excite_model(path):
    rng = np.random.default_rng(21)

    def f32(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["a"]),
        helper.make_node("GlobalAveragePool", ["a"], ["gap"]),
        helper.make_node("Conv", ["gap", "wf1", "bf1"], ["f1"]),
        helper.make_node("Relu", ["f1"], ["r1"]),
        helper.make_node("Conv", ["r1", "wf2", "bf2"], ["f2"]),
        helper.make_node("Add", ["f2", "gap"], ["s"]),
        helper.make_node("HardSigmoid", ["s"], ["gate"]),
        helper.make_node("Mul", ["a", "gate"], ["m"]),
        helper.make_node("Conv", ["m", "w2", "b2"], ["y"]),
        helper.make_node("GlobalAveragePool", ["y"], ["pooled"]),
        helper.make_node("Conv", ["pooled", "wc"], ["cls"]),
    ]
    inits = [f32("w1", 40, 24, 3, 3), f32("b1", 40), f32("wf1", 16, 40, 1, 1), f32("bf1", 16),
             f32("wf2", 40, 16, 1, 1), f32("bf2", 40), f32("w2", 24, 40, 1, 1), f32("b2", 24),
             f32("wc", 5, 24, 1, 1)]
    graph = helper.make_graph(nodes, "se", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 24, 7, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 24, 7, 7]),
                               helper.make_tensor_value_info("cls", TensorProto.FLOAT, [2, 5, 1, 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")
def test_squeeze_excite_gate_matches_onnxruntime(device, tmp_path):
    path = tmp_path / "se.onnx"
    squeeze_excite_model(path)
    x = np.random.default_rng(22).standard_normal((2, 24, 7, 7)).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    proc = mdl_models.run_atc(ATC, path, tmp_path / "model")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "model.om"))
    assert ret == H.ACL_SUCCESS, f"load_from_file -> {ret}: {acl.get_recent_err_msg()}"
    try:
        outs = H.execute_model(acl, model_id, [x], [w.nbytes for w in want])
    finally:
        assert acl.mdl.unload(model_id) == H.ACL_SUCCESS
    for got, ref in zip(outs, want):
        got = got.view(np.float32).reshape(ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))
