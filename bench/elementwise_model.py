#!/usr/bin/env python3
"""Writes an ONNX model that chains element-wise ops the graph engine does not
fuse into a convolution (activations, math, Softmax on two axes, Where,
broadcasts, Transpose, Concat, Slice, Resize, a plain MaxPool) over a
[1, 64, 112, 112] float32 tensor, to compare them node by node with
onnxruntime:

    python3 bench/elementwise_model.py build/models/elementwise.onnx
    python3 bench/node_times.py build/models/elementwise.onnx --threads 1 --runs 20 --top 40

Values stay finite: each op's input range suits it (Log after Clip, ...).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def build():
    shape = [1, 64, 112, 112]
    inits, nodes = [], []

    def const(name, arr):
        dt = TensorProto.FLOAT if arr.dtype == np.float32 else TensorProto.INT64
        inits.append(helper.make_tensor(name, dt, list(arr.shape), arr.flatten().tolist()))
        return name

    def op(kind, inputs, out, **attrs):
        nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    f32 = lambda v: np.array(v, np.float32)  # noqa: E731
    a = op("Erf", [op("Tanh", [op("Exp", [op("Sigmoid", ["x"], "sigmoid")], "exp")], "tanh")], "erf")
    a = op("Softplus", [a], "softplus")
    a = op("Mish", [a], "mish")
    a = op("LeakyRelu", [a], "leakyrelu", alpha=0.1)
    a = op("HardSigmoid", [op("HardSwish", [a], "hardswish")], "hardsigmoid")
    a = op("Clip", [a, const("lo", f32(0.1)), const("hi", f32(0.9))], "clip")
    a = op("Log", [a], "log")
    a = op("Sqrt", [op("Abs", [a], "abs")], "sqrt")
    a = op("Pow", [a, const("two", f32(2.0))], "pow")
    a = op("Softmax", [a], "softmax_last", axis=-1)
    a = op("Softmax", [a], "softmax_channels", axis=1)
    a = op("Elu", [a], "elu")
    a = op("Reciprocal", [op("Add", [op("Neg", [a], "neg"), const("one", f32(1.5))], "add")], "reciprocal")
    a = op("Where", [op("Greater", [a, const("z", f32(0.6))], "greater"), a, "x"], "where")
    a = op("ReduceMean", [a, const("axes", np.array([2, 3], np.int64))], "reducemean", keepdims=1)
    b = op("Mul", ["x", a], "mul_broadcast")
    b = op("Transpose", [op("Transpose", [b], "to_nhwc", perm=[0, 2, 3, 1])], "to_nchw", perm=[0, 3, 1, 2])
    b = op("Concat", [b, "x"], "concat", axis=1)
    b = op("Slice", [b, const("st", np.array([32], np.int64)), const("en", np.array([96], np.int64)),
                     const("sax", np.array([1], np.int64))], "slice")
    b = op("Resize", [b, "", const("scales", f32([1, 1, 2, 2]))], "resize", mode="linear")
    b = op("MaxPool", [b], "maxpool", kernel_shape=[2, 2], strides=[2, 2])
    b = op("Sin", [b], "sin")
    nodes.append(helper.make_node("Mul", [b, b], ["y"], name="square"))
    graph = helper.make_graph(nodes, "elementwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: elementwise_model.py OUT.onnx")
    onnx.save(build(), sys.argv[1])
