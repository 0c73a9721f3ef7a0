"""bool tensors through acl.mdl: every op that real graphs feed masks through
(logic, Where, data movement, reductions, Cast), one node per model, loaded
with acl.mdl.load_from_file, executed on bool inputs (one byte per element,
as ACL_BOOL is) and compared with onnxruntime, or with numpy where
onnxruntime has no bool kernel. Ops whose output shape depends on the data
(NonZero, Compress) are in the engine's tests; here every output is static.
"""
import numpy as np
import pytest

import acl
import acl_helpers as H

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(0)
FEEDS = {
    "x": RNG.random((2, 3, 4)) > 0.5,
    "x2": RNG.random((2, 3, 4)) > 0.5,
    "xs": RNG.random((2, 1, 4)) > 0.5,
    "x4": RNG.random((1, 8, 2, 2)) > 0.5,
}


def i64(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.int64), name)


def boolean(name, value):
    return numpy_helper.from_array(np.array(value, dtype=bool), name)


def depth_to_space(x, b=2):
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)


# name: (op, inputs, attributes, initializers, numpy reference or None for onnxruntime)
CASES = {
    "Not": ("Not", ["x"], {}, [], None),
    "And": ("And", ["x", "x2"], {}, [], None),
    "Or": ("Or", ["x", "x2"], {}, [], None),
    "Xor": ("Xor", ["x", "x2"], {}, [], None),
    "Equal": ("Equal", ["x", "x2"], {}, [], None),
    "Where": ("Where", ["x", "x2", "xs"], {}, [], lambda f: np.where(f["x"], f["x2"], f["xs"])),
    "Identity": ("Identity", ["x"], {}, [], None),
    "Concat": ("Concat", ["x", "x2"], {"axis": 1}, [], None),
    "Transpose": ("Transpose", ["x"], {"perm": [2, 0, 1]}, [], None),
    "Reshape": ("Reshape", ["x", "shape"], {}, [i64("shape", [6, 4])], None),
    "Flatten": ("Flatten", ["x"], {"axis": 1}, [], None),
    "Squeeze": ("Squeeze", ["xs", "axes"], {}, [i64("axes", [1])], None),
    "Unsqueeze": ("Unsqueeze", ["x", "axes"], {}, [i64("axes", [0])], None),
    "Slice": ("Slice", ["x", "starts", "ends"], {}, [i64("starts", [0, 1]), i64("ends", [2, 3])], None),
    "Gather": ("Gather", ["x", "indices"], {"axis": 1}, [i64("indices", [2, 0])], None),
    "GatherElements": ("GatherElements", ["x", "indices"], {"axis": 2},
                       [i64("indices", np.arange(12).reshape(2, 3, 2) % 4)], None),
    "GatherND": ("GatherND", ["x", "indices"], {}, [i64("indices", [[0, 1], [1, 2]])], None),
    "Expand": ("Expand", ["x", "shape"], {}, [i64("shape", [2, 2, 3, 4])], None),
    "Tile": ("Tile", ["x", "repeats"], {}, [i64("repeats", [1, 2, 1])], None),
    "Pad": ("Pad", ["x", "pads"], {}, [i64("pads", [0, 1, 0, 0, 1, 0])], None),
    "ScatterND": ("ScatterND", ["x", "indices", "updates"], {},
                  [i64("indices", [[0, 1]]), boolean("updates", np.ones((1, 4)))], None),
    "ScatterElements": ("ScatterElements", ["x", "indices", "updates"], {"axis": 2},
                        [i64("indices", np.zeros((2, 3, 2))), boolean("updates", np.ones((2, 3, 2)))], None),
    "ReduceMax": ("ReduceMax", ["x"], {"keepdims": 0}, [], None),
    "ReduceMin": ("ReduceMin", ["x"], {"keepdims": 1}, [], None),
    "Trilu": ("Trilu", ["x"], {}, [], None),
    "ReverseSequence": ("ReverseSequence", ["x", "lengths"], {"batch_axis": 0, "time_axis": 1},
                        [i64("lengths", [3, 2])], None),
    "DepthToSpace": ("DepthToSpace", ["x4"], {"blocksize": 2}, [], lambda f: depth_to_space(f["x4"])),
    "CastToFloat": ("Cast", ["x"], {"to": TensorProto.FLOAT}, [], None),
}


def make_model(path, op, inputs, attrs, inits):
    init_names = {t.name for t in inits}
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.BOOL, FEEDS[n].shape)
                    for n in dict.fromkeys(inputs) if n not in init_names]
    node = helper.make_node(op, inputs, ["y"], **attrs)
    graph = helper.make_graph([node], op.lower(), graph_inputs,
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # types the output
    onnx.save(model, str(path))
    return [n for n in dict.fromkeys(inputs) if n not in init_names]


def ok(ret, what):
    assert ret == H.ACL_SUCCESS, f"{what} -> {ret}: {acl.get_recent_err_msg()}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bool_op(name, device, tmp_path):
    op, inputs, attrs, inits, reference = CASES[name]
    path = tmp_path / f"{name}.onnx"
    feed_names = make_model(path, op, inputs, attrs, inits)
    feeds = {n: FEEDS[n] for n in feed_names}
    if reference is None:
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    else:
        want = reference(feeds)

    model_id, ret = acl.mdl.load_from_file(str(path))
    ok(ret, f"load_from_file({name})")
    desc = acl.mdl.create_desc()
    ok(acl.mdl.get_desc(desc, model_id), "get_desc")
    assert acl.mdl.get_output_size_by_index(desc, 0) == want.nbytes
    try:
        out, = H.execute_model(acl, model_id, [feeds[n] for n in feed_names], [want.nbytes])
        np.testing.assert_array_equal(out.view(want.dtype).reshape(want.shape), want)
    finally:
        ok(acl.mdl.destroy_desc(desc), "destroy_desc")
        ok(acl.mdl.unload(model_id), "unload")
