"""Small ONNX models for the acl.mdl tests, built with onnx.helper, each with a
numpy reference.

Every builder writes `<dir>/<name>.onnx` and returns a Model: its path, the
input and output names and shapes (a str for a free dimension), and
`reference(*inputs) -> [outputs]`. Weights come from a seeded generator, so a
model and its reference always agree.
"""
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Tuple

import numpy as np

import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


@dataclass
class Model:
    path: Path
    inputs: List[Tuple[str, list]]
    outputs: List[Tuple[str, list]]
    reference: Callable = field(repr=False)

    def input_bytes(self, i, **dims):
        return _nbytes(self.inputs[i][1], dims)

    def output_bytes(self, i, **dims):
        return _nbytes(self.outputs[i][1], dims)


def _nbytes(shape, dims):
    n = 4  # float32
    for d in shape:
        n *= dims[d] if isinstance(d, str) else d
    return n


def _save(graph, directory, name):
    path = Path(directory) / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), str(path))
    return path


def linear(directory, in_features=4, out_features=3, batch=1, relu=True, name="linear_relu", seed=0,
           input_name="x", output_name="y"):
    """y = relu(x @ W + b) (or without relu); x [batch, in_features]; `batch` may
    be a str, making the batch dimension free."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (in_features, out_features)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, out_features).astype(np.float32)
    nodes = [helper.make_node("MatMul", [input_name, "W"], ["xw"], name="matmul"),
             helper.make_node("Add", ["xw", "B"], ["lin" if relu else output_name], name="add")]
    if relu:
        nodes.append(helper.make_node("Relu", ["lin"], [output_name], name="relu"))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, [batch, in_features])],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, [batch, out_features])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])

    def reference(x):
        y = x.astype(np.float32) @ w + b
        return [np.maximum(y, 0) if relu else y]

    return Model(_save(graph, directory, name), [(input_name, [batch, in_features])],
                 [(output_name, [batch, out_features])], reference)


def conv_relu(directory, height=8, width=8, channels=3, filters=2, name="conv_relu", seed=1):
    """y = relu(conv3x3(x, pad 1) + bias), NCHW, x [1, channels, height, width];
    height/width may be strs (free dims, for --dynamic_image_size)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (filters, channels, 3, 3)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, filters).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, height, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, filters, height, width])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])

    def reference(x):
        n, c, h, wd = x.shape
        padded = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, filters, h, wd), np.float32)
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,fc->nfhw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
        return [np.maximum(out + b[None, :, None, None], 0)]

    return Model(_save(graph, directory, name), [("x", [1, channels, height, width])],
                 [("y", [1, filters, height, width])], reference)


def two_outputs(directory, name="two_outputs", seed=2):
    """sum = x + c, prod = x * c; x [2, 3]."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "C"], ["sum"], name="add"),
         helper.make_node("Mul", ["x", "C"], ["prod"], name="mul")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("prod", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(c, "C")])
    return Model(_save(graph, directory, name), [("x", [2, 3])], [("sum", [2, 3]), ("prod", [2, 3])],
                 lambda x: [x + c, x * c])


def two_inputs(directory, name="two_inputs"):
    """z = a - b; a, b [2, 2] (index-by-name tests need two inputs)."""
    graph = helper.make_graph(
        [helper.make_node("Sub", ["a", "b"], ["z"], name="sub")], name,
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 2])])
    return Model(_save(graph, directory, name), [("a", [2, 2]), ("b", [2, 2])], [("z", [2, 2])],
                 lambda a, b: [a - b])


def classifier(directory, size=32, classes=10, name="classifier", seed=3):
    """scores[1, classes] = Gemm(Flatten(GlobalAveragePool(Relu(Conv3x3 stride 2(x))))),
    x [1, 3, size, size]: the shape of an image classifier, small."""
    rng = np.random.default_rng(seed)
    cw = rng.uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32)
    cb = rng.uniform(-0.5, 0.5, 8).astype(np.float32)
    fw = rng.uniform(-1, 1, (8, classes)).astype(np.float32)
    fb = rng.uniform(-0.5, 0.5, classes).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "CW", "CB"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                          strides=[2, 2]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "FW", "FB"], ["scores"], name="fc")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, classes])],
        [numpy_helper.from_array(a, n) for a, n in ((cw, "CW"), (cb, "CB"), (fw, "FW"), (fb, "FB"))])
    return Model(_save(graph, directory, name), [("x", [1, 3, size, size])], [("scores", [1, classes])], None)


def embedding(directory, rows=16384, cols=256, ids=512, name="embedding", seed=4):
    """y[ids, cols] = Gather(table[rows, cols], i) + b, i int64 [ids]: an
    embedding lookup, its table large (16 MiB by default)."""
    rng = np.random.default_rng(seed)
    table = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, cols).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "i"], ["rows"], name="gather", axis=0),
         helper.make_node("Add", ["rows", "b"], ["y"], name="add")],
        name,
        [helper.make_tensor_value_info("i", TensorProto.INT64, [ids])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ids, cols])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(b, "b")])
    return Model(_save(graph, directory, name), [("i", [ids])], [("y", [ids, cols])],
                 lambda i: [table[i] + b])


def run_atc(atc, model, output, *options, cwd=None):
    """Runs `atc --model=<model> --framework=5 --output=<output> --soc_version=Ascend310 <options>`;
    returns the CompletedProcess (<output>.om is written on success)."""
    cmd = [str(atc), f"--model={model}", "--framework=5", f"--output={output}", "--soc_version=Ascend310",
           *options]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)
