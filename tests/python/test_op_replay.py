"""The ONNX backend node tests of element-wise ops, replayed through acl.op.

Every single-node test (from the case definitions inside the `onnx` package,
as tests/conformance/generate_node_tests.py collects them) whose ONNX op maps
onto an Ascend op of the element-wise catalogue is translated (op type,
attribute names and defaults) and run through run_op (infer_shape,
execute_v2); each output is compared with the test's expected tensor as the
ONNX backend runner does (dtype, shape, values within the case's rtol/atol).

Cases that do not translate are skipped with a reason (an input type the
Ascend op does not take, ONNX semantics the Ascend op does not have); the
summary prints how many ran, passed and were skipped, and the run must pass
every case it runs and at least FLOOR of them.
"""
import collections
import warnings

import numpy as np
import pytest

from op_util import ACL_DT, OpError, run_op

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

# Cases that must pass: 209 passed when written (onnx 1.23); the slack is for an
# onnx release that drops or changes a few.
FLOOR = 200

ERR_DTYPE = 100026

# ONNX op -> Ascend op, for ops whose ONNX attributes (if any) need no translation.
DIRECT = {
    "Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "RealDiv", "Abs": "Abs", "Neg": "Neg", "Exp": "Exp",
    "Log": "Log", "Sqrt": "Sqrt", "Reciprocal": "Reciprocal", "Floor": "Floor", "Ceil": "Ceil", "Round": "Round",
    "Sign": "Sign", "Sin": "Sin", "Cos": "Cos", "Tan": "Tan", "Asin": "Asin", "Acos": "Acos", "Atan": "Atan",
    "Sinh": "Sinh", "Cosh": "Cosh", "Asinh": "Asinh", "Acosh": "Acosh", "Atanh": "Atanh", "Erf": "Erf",
    "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Softplus": "Softplus", "Softsign": "Softsign", "Mish": "Mish",
    "HardSwish": "HardSwish", "Relu": "Relu", "IsNaN": "IsNan", "Equal": "Equal", "Less": "Less",
    "LessOrEqual": "LessEqual", "Greater": "Greater", "GreaterOrEqual": "GreaterEqual", "And": "LogicalAnd",
    "Or": "LogicalOr", "Not": "LogicalNot", "Where": "SelectV2",
}


class Skip(Exception):
    pass


def _f(v):
    return ("float", float(v))


def onnx_attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def translate(node, inputs, opset):
    """(Ascend op, inputs, attrs) for one ONNX node, or Skip(reason)."""
    op, a = node.op_type, onnx_attrs(node)
    if op in DIRECT:
        if a:
            raise Skip(f"attributes {sorted(a)}")
        return DIRECT[op], inputs, {}
    if op == "Pow":
        if inputs[0].dtype != inputs[1].dtype:
            raise Skip("exponent of another type (Ascend Pow takes one type)")
        return "Pow", inputs, {}
    if op in ("Max", "Min"):
        if len(inputs) != 2:
            raise Skip(f"{len(inputs)} inputs (Maximum/Minimum take 2)")
        return ("Maximum" if op == "Max" else "Minimum"), inputs, {}
    if op == "Sum":
        return "AddN", inputs, {"N": ("int", len(inputs))}
    if op == "Mod":
        return ("Mod" if a.get("fmod", 0) else "FloorMod"), inputs, {}
    if op == "Selu":
        if abs(a.get("alpha", 1.67326319217681884765625) - 1.6732632) > 1e-6 or \
                abs(a.get("gamma", 1.05070102214813232421875) - 1.0507010) > 1e-6:
            raise Skip("non-default alpha/gamma (Ascend Selu has none)")
        return "Selu", inputs, {}
    if op == "Elu":
        return "Elu", inputs, {"alpha": _f(a.get("alpha", 1.0))}
    if op == "LeakyRelu":
        return "LeakyRelu", inputs, {"negative_slope": _f(a.get("alpha", 0.01))}
    if op == "HardSigmoid":
        return "HardSigmoid", inputs, {"alpha": _f(a.get("alpha", 0.2)), "beta": _f(a.get("beta", 0.5))}
    if op == "PRelu":
        x, slope = inputs
        if slope.ndim != x.ndim and slope.size != 1:
            raise Skip("slope broadcast against the last dim (Ascend's weight is per channel, dim 1)")
        return "PRelu", inputs, {}
    if op == "IsInf":
        if a.get("detect_positive", 1) != 1 or a.get("detect_negative", 1) != 1:
            raise Skip("detect_positive/detect_negative (Ascend IsInf detects both)")
        return "IsInf", inputs, {}
    if op == "Clip":
        x = inputs[0]
        if opset < 11:
            lo, hi = a.get("min"), a.get("max")
        else:
            lo = inputs[1] if len(inputs) > 1 and inputs[1] is not None else None
            hi = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
        if x.dtype.kind == "f":
            lo = np.asarray(-np.inf if lo is None else lo, x.dtype)
            hi = np.asarray(np.inf if hi is None else hi, x.dtype)
        else:
            info = np.iinfo(x.dtype)
            lo = np.asarray(info.min if lo is None else lo, x.dtype)
            hi = np.asarray(info.max if hi is None else hi, x.dtype)
        return "ClipByValue", [x, lo, hi], {}
    if op in ("Softmax", "LogSoftmax"):
        x = inputs[0]
        axis = a.get("axis", -1 if opset >= 13 else 1)
        if axis < 0:
            axis += x.ndim
        if opset < 13 and axis != x.ndim - 1:
            raise Skip("opset < 13 softmax over the flattened trailing dims")
        return ("SoftmaxV2" if op == "Softmax" else "LogSoftmaxV2"), inputs, {"axes": ("list_int", [axis])}
    if op == "Gelu":
        approx = a.get("approximate", b"none")
        approx = approx.decode() if isinstance(approx, bytes) else approx
        return "GeluV2", inputs, {"approximate": ("string", approx)}
    if op == "Swish":
        return "Swish", inputs, {"scale": _f(a.get("alpha", 1.0))}
    raise Skip("no Ascend element-wise op")


def collect():
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    ops = set(DIRECT) | {"Pow", "Max", "Min", "Sum", "Mod", "Selu", "Elu", "LeakyRelu", "HardSigmoid", "PRelu",
                         "IsInf", "Clip", "Softmax", "LogSoftmax", "Gelu", "Swish"}
    out = []
    for case in cases:
        g = case.model.graph
        if len(g.node) != 1 or g.node[0].op_type not in ops or g.node[0].domain not in ("", "ai.onnx"):
            continue
        out.append(case)
    return out


def as_array(v):
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)


def run_case(case):
    """'pass', or ('skip' | 'fail', reason)."""
    g = case.model.graph
    node = g.node[0]
    opset = next((o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")), 1)
    if not all(v.type.HasField("tensor_type") for v in list(g.input) + list(g.output)):
        return "skip", "non-tensor inputs/outputs"
    graph_inputs = [i.name for i in g.input]
    results = []
    for data_inputs, data_outputs in case.data_sets:
        by_name = dict(zip(graph_inputs, (as_array(v) for v in data_inputs)))
        inputs = []
        for name in node.input:
            if name == "":
                inputs.append(None)
            elif name in by_name:
                inputs.append(by_name[name])
            else:
                return "skip", f"input {name} is not a graph input"
        while inputs and inputs[-1] is None:
            inputs.pop()
        try:
            op, ins, attrs = translate(node, inputs, opset)
        except Skip as s:
            return "skip", str(s)
        if any(x is None for x in ins):
            return "skip", "omitted input in the middle"
        expected = [as_array(v) for v in data_outputs]
        for arr in list(ins) + expected:
            if np.asarray(arr).dtype not in ACL_DT:
                return "skip", f"element type {np.asarray(arr).dtype} (no aclDataType in the tests)"
        try:
            got = run_op(op, ins, attrs, out_dtypes=[e.dtype for e in expected])
        except OpError as e:
            if e.ret == ERR_DTYPE:
                return "skip", f"{ins[0].dtype} input (not a type the Ascend op declares)"
            return "fail", f"{op}: {e}"
        for k, (y, want) in enumerate(zip(got, expected)):
            if y.dtype != want.dtype or y.shape != want.shape:
                return "fail", f"{op} output {k}: {y.dtype}{list(y.shape)} != {want.dtype}{list(want.shape)}"
            if want.dtype.kind in "iub":
                ok = np.array_equal(y, want)
            else:
                ok = np.allclose(y.astype(np.float64), want.astype(np.float64), rtol=case.rtol, atol=case.atol,
                                 equal_nan=True)
            if not ok:
                return "fail", f"{op} output {k}: values differ (max |diff| " \
                               f"{np.nanmax(np.abs(y.astype(np.float64) - want.astype(np.float64)))})"
        results.append(True)
    return ("pass", "") if results else ("skip", "no data sets")


def test_replay_node_tests(device, capsys):
    cases = collect()
    outcome = {}
    for case in cases:
        outcome[case.name] = run_case(case)
    counts = collections.Counter(o for o, _ in outcome.values())
    skips = collections.Counter(r for o, r in outcome.values() if o == "skip")
    failures = {n: r for n, (o, r) in outcome.items() if o == "fail"}
    with capsys.disabled():
        print(f"\nONNX node tests replayed through acl.op: {len(cases)} element-wise cases, "
              f"{counts['pass'] + counts['fail']} run, {counts['pass']} passed, {counts['fail']} failed, "
              f"{counts['skip']} skipped")
        for reason, n in skips.most_common():
            print(f"  skipped {n:3d}: {reason}")
        for name, reason in sorted(failures.items()):
            print(f"  FAILED {name}: {reason}")
    assert not failures, f"{len(failures)} replayed node tests failed: {failures}"
    assert counts["pass"] >= FLOOR, f"only {counts['pass']} node tests passed (floor {FLOOR})"
