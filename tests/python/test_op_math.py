"""The element-wise Ascend ops (src/op/catalog_math.cpp) through acl.op,
each against numpy: every declared dtype, numpy broadcasting, scalars, empty
tensors, attributes at their defaults and set, and bad calls with CANN's codes
(100021 input, 100023 attribute, 100026 dtype).

One table per arity: (op, numpy reference, dtypes, input range, attrs). The
reference is computed in float64 from the very inputs given (float16 inputs
are exact in float64) and compared with the dtype's tolerance; integer results
are compared exactly (numpy's integer arithmetic wraps as the kernels do).
"""
import math
import zlib

import numpy as np
import pytest

from op_util import A, OpError, run_op

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I16, I32, I64, U8 = np.int8, np.int16, np.int32, np.int64, np.uint8
FLOATS = [F32, F16, F64]
REAL = [F32, F16, F64, I8, I16, I32, I64, U8]
SIGNED = [F32, F16, F64, I8, I16, I32, I64]
REAL_BOOL = REAL + [np.bool_]
POW = [F32, F16, F64, I32, I64]
INTS = [I8, I16, I32, I64, U8, np.uint16, np.uint32, np.uint64]
BOOL = [np.bool_]

ERR_INPUT, ERR_ATTR, ERR_DTYPE = 100021, 100023, 100026

# float64: attribute values and the kernels' activation constants are float32
# (aclopSetAttrFloat takes a float), hence 2e-7 rather than double precision.
TOL = {F16: (4e-3, 4e-3), F32: (2e-5, 1e-6), F64: (2e-7, 1e-7)}


def tol(dt):
    return TOL.get(np.dtype(dt).type, (0, 0))


def rand(dt, shape, lo, hi, seed):
    """Values of `dt` in [lo, hi] (integers: the range clipped to the type)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind == "f":
        return rng.uniform(lo, hi, size=shape).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(int(math.floor(lo)), info.min), min(int(math.ceil(hi)), info.max)
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


def check(got, want, dt):
    """got (op output) against want (float64 or exact reference), for dtype dt."""
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if np.dtype(dt).kind == "f" and got.dtype.kind == "f":
        rtol, atol = tol(dt)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def f64(x):
    return np.asarray(x).astype(np.float64)


def vec(fn):
    return np.vectorize(fn, otypes=[np.float64])


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.log1p(np.exp(x))


# ------------------------------------------------------------------- unary ops
# (op, reference(x64, attrs) -> result, dtypes, (lo, hi), attrs)
UNARY = [
    ("Exp", lambda x, a: np.exp(x), FLOATS, (-4, 4), {}),
    ("Exp", lambda x, a: 2.0 ** (1 + 0.5 * x), FLOATS, (-4, 4),
     {"base": A.float(2), "scale": A.float(0.5), "shift": A.float(1)}),
    ("Log", lambda x, a: np.log(x), FLOATS, (0.05, 20), {}),
    ("Log", lambda x, a: np.log10(1 + 2 * x), FLOATS, (0.05, 20),
     {"base": A.float(10), "scale": A.float(2), "shift": A.float(1)}),
    ("Log1p", lambda x, a: np.log1p(x), FLOATS, (-0.9, 4), {}),
    ("Log1p", lambda x, a: np.log1p(x), FLOATS, (-1e-4, 1e-4), {}),  # where log(1 + x) would cancel
    ("Expm1", lambda x, a: np.expm1(x), FLOATS, (-3, 3), {}),
    ("Expm1", lambda x, a: np.expm1(x), FLOATS, (-1e-4, 1e-4), {}),
    ("Sqrt", lambda x, a: np.sqrt(x), FLOATS, (0, 50), {}),
    ("Rsqrt", lambda x, a: 1 / np.sqrt(x), FLOATS, (0.1, 50), {}),
    ("Reciprocal", lambda x, a: 1 / x, FLOATS, (0.25, 8), {}),
    ("Abs", lambda x, a: np.abs(x), REAL, (-50, 50), {}),
    ("Neg", lambda x, a: -x, SIGNED, (-50, 50), {}),
    ("Square", lambda x, a: x * x, REAL, (-11, 11), {}),
    ("Floor", lambda x, a: np.floor(x), FLOATS, (-10, 10), {}),
    ("Ceil", lambda x, a: np.ceil(x), FLOATS, (-10, 10), {}),
    ("Round", lambda x, a: np.round(x), FLOATS, (-10, 10), {}),
    ("Sign", lambda x, a: np.sign(x), REAL, (-5, 5), {}),
    ("Sin", lambda x, a: np.sin(x), FLOATS, (-6, 6), {}),
    ("Cos", lambda x, a: np.cos(x), FLOATS, (-6, 6), {}),
    ("Tan", lambda x, a: np.tan(x), FLOATS, (-1.2, 1.2), {}),
    ("Asin", lambda x, a: np.arcsin(x), FLOATS, (-1, 1), {}),
    ("Acos", lambda x, a: np.arccos(x), FLOATS, (-1, 1), {}),
    ("Atan", lambda x, a: np.arctan(x), FLOATS, (-10, 10), {}),
    ("Sinh", lambda x, a: np.sinh(x), FLOATS, (-4, 4), {}),
    ("Cosh", lambda x, a: np.cosh(x), FLOATS, (-4, 4), {}),
    ("Asinh", lambda x, a: np.arcsinh(x), FLOATS, (-10, 10), {}),
    ("Acosh", lambda x, a: np.arccosh(x), FLOATS, (1, 10), {}),
    ("Atanh", lambda x, a: np.arctanh(x), FLOATS, (-0.95, 0.95), {}),
    ("Erf", lambda x, a: vec(math.erf)(x), FLOATS, (-3, 3), {}),
    ("Erfc", lambda x, a: vec(math.erfc)(x), FLOATS, (-3, 3), {}),
    ("Relu", lambda x, a: np.maximum(x, 0), SIGNED, (-10, 10), {}),
    ("Relu6", lambda x, a: np.clip(x, 0, 6), REAL, (-10, 10), {}),
    ("LeakyRelu", lambda x, a: np.where(x >= 0, x, 0.0), FLOATS, (-5, 5), {}),  # slope defaults to 0
    ("LeakyRelu", lambda x, a: np.where(x >= 0, x, 0.2 * x), FLOATS, (-5, 5), {"negative_slope": A.float(0.2)}),
    ("Elu", lambda x, a: np.where(x > 0, x, np.expm1(x)), FLOATS, (-5, 5), {}),
    ("Elu", lambda x, a: np.where(x > 0, x, 0.5 * np.expm1(x)), FLOATS, (-5, 5), {"alpha": A.float(0.5)}),
    ("Selu", lambda x, a: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), FLOATS,
     (-5, 5), {}),
    ("Sigmoid", lambda x, a: sigmoid(x), FLOATS, (-8, 8), {}),
    ("Tanh", lambda x, a: np.tanh(x), FLOATS, (-4, 4), {}),
    ("Gelu", lambda x, a: gelu_tanh(x), FLOATS, (-5, 5), {}),
    ("GeluV2", lambda x, a: 0.5 * x * (1 + vec(math.erf)(x / math.sqrt(2))), FLOATS, (-5, 5), {}),
    ("GeluV2", lambda x, a: gelu_tanh(x), FLOATS, (-5, 5), {"approximate": A.str("tanh")}),
    ("FastGelu", lambda x, a: x * sigmoid(1.702 * x), FLOATS, (-5, 5), {}),
    ("Swish", lambda x, a: x * sigmoid(x), FLOATS, (-5, 5), {}),
    ("Swish", lambda x, a: x * sigmoid(2.5 * x), FLOATS, (-5, 5), {"scale": A.float(2.5)}),
    ("HardSigmoid", lambda x, a: np.clip(x / 6 + 0.5, 0, 1), FLOATS, (-5, 5), {}),
    ("HardSigmoid", lambda x, a: np.clip(0.2 * x + 0.3, 0, 1), FLOATS, (-5, 5),
     {"alpha": A.float(0.2), "beta": A.float(0.3)}),
    ("HardSwish", lambda x, a: x * np.clip(x / 6 + 0.5, 0, 1), FLOATS, (-5, 5), {}),
    ("Mish", lambda x, a: x * np.tanh(softplus(x)), FLOATS, (-5, 5), {}),
    ("Softplus", lambda x, a: softplus(x), FLOATS, (-5, 5), {}),
    ("Softsign", lambda x, a: x / (1 + np.abs(x)), FLOATS, (-5, 5), {}),
    ("LogicalNot", lambda x, a: ~x.astype(bool), BOOL, (0, 1), {}),
    ("Inv", lambda x, a: 1 / x, FLOATS, (0.25, 8), {}),
    ("Invert", lambda x, a: ~x, INTS, (-100, 100), {}),
    ("LogSigmoid", lambda x, a: -softplus(-x), FLOATS, (-8, 8), {}),
    ("SoftplusV2", lambda x, a: softplus(x), FLOATS, (-5, 5), {}),
    ("SoftplusV2", lambda x, a: np.where(2 * x > 3, x, softplus(2 * x) / 2), FLOATS, (-5, 5),
     {"beta": A.float(2), "threshold": A.float(3)}),
    ("HardShrink", lambda x, a: np.where(np.abs(x) > 0.5, x, 0), FLOATS, (-2, 2), {}),
    ("HardShrink", lambda x, a: np.where(np.abs(x) > 1.25, x, 0), FLOATS, (-2, 2), {"lambd": A.float(1.25)}),
    ("SoftShrink", lambda x, a: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)), FLOATS, (-2, 2), {}),
    ("SoftShrink", lambda x, a: np.where(x > 1, x - 1, np.where(x < -1, x + 1, 0)), FLOATS, (-2, 2),
     {"lambd": A.float(1)}),
    ("Fills", lambda x, a: np.full(x.shape, 2.5), FLOATS, (-2, 2), {"value": A.float(2.5)}),
    ("Fills", lambda x, a: np.full(x.shape, -3, x.dtype), [I8, I16, I32, I64], (-2, 2), {"value": A.float(-3)}),
]


def unary_cases_gen():
    for k, (op, ref, dtypes, rng, attrs) in enumerate(UNARY):
        for dt in dtypes:
            yield pytest.param(op, ref, dt, rng, attrs, (2, 3, 4), id=f"{op}{k}-{np.dtype(dt).name}")
        # Scalars and empty tensors, on the first dtype.
        yield pytest.param(op, ref, dtypes[0], rng, attrs, (), id=f"{op}{k}-scalar")
        yield pytest.param(op, ref, dtypes[0], rng, attrs, (0, 5), id=f"{op}{k}-empty")


def unary_cases():
    return list(unary_cases_gen())


@pytest.mark.parametrize("op,ref,dt,rng,attrs,shape", unary_cases())
def test_unary(device, op, ref, dt, rng, attrs, shape):
    x = rand(dt, shape, *rng, seed=zlib.crc32(op.encode()))
    y, = run_op(op, [x], attrs)
    want = ref(x if np.dtype(dt).kind in "iub" else f64(x), attrs)
    if np.dtype(dt).kind == "f":
        want = f64(want)
    check(y, want, dt)
    if op not in ("LogicalNot",):
        assert y.dtype == np.dtype(dt)


# ------------------------------------------------------------------ binary ops
def trunc_div(a, b):
    """Integer division truncated toward zero, x / 0 = 0 (the kernels' rule)."""
    safe = np.where(b == 0, 1, b)
    q = np.trunc(f64(a) / f64(safe))
    return np.where(b == 0, 0, q)


def div_ref(a, b):
    if a.dtype.kind == "f":
        return f64(a) / f64(b)
    return trunc_div(a, b).astype(a.dtype)


def div_no_nan_ref(a, b):
    if a.dtype.kind == "f":
        safe = np.where(b == 0, 1, f64(b))
        return np.where(b == 0, 0.0, f64(a) / safe)
    return trunc_div(a, b).astype(a.dtype)


def floor_div_ref(a, b):
    if a.dtype.kind == "f":
        # floor of the quotient as the type computes it (TensorFlow's FloorDiv on floats).
        return np.floor((a / b).astype(a.dtype))
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.floor_divide(a, safe)).astype(a.dtype)


def floor_mod_ref(a, b):
    if a.dtype.kind == "f":
        return np.mod(f64(a), f64(b))
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.mod(a, safe)).astype(a.dtype)


def mod_ref(a, b):
    if a.dtype.kind == "f":
        return np.fmod(f64(a), f64(b))
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.fmod(a, safe)).astype(a.dtype)


def arith(fn):
    """fn on float64 for floats, in the integer type itself (wrapping) for ints."""
    def ref(a, b):
        if a.dtype.kind == "f":
            return fn(f64(a), f64(b))
        with np.errstate(over="ignore"):
            return fn(a, b).astype(a.dtype)
    return ref


def nonzero(lo, hi):
    """An input range marker: values in [lo, hi] with zeros replaced by 1."""
    return ("nonzero", lo, hi)


# (op, reference(a, b), dtypes, x1 range, x2 range)
BINARY = [
    ("Sub", arith(np.subtract), REAL, (-20, 20), (-20, 20)),
    ("Mul", arith(np.multiply), REAL, (-11, 11), (-11, 11)),
    ("RealDiv", div_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("Div", div_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("DivNoNan", div_no_nan_ref, REAL, (-50, 50), (-3, 3)),
    ("FloorDiv", floor_div_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("FloorMod", floor_mod_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("Mod", mod_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("Pow", arith(np.power), [F32, F16, F64], (0.5, 3), (-2, 2)),
    ("Pow", arith(np.power), [I32, I64], (-5, 5), (0, 4)),
    ("Maximum", arith(np.maximum), REAL, (-20, 20), (-20, 20)),
    ("Minimum", arith(np.minimum), REAL, (-20, 20), (-20, 20)),
    ("SquaredDifference", arith(lambda a, b: (a - b) * (a - b)), REAL, (-8, 8), (-8, 8)),
    ("Equal", lambda a, b: a == b, REAL_BOOL, (-2, 2), (-2, 2)),
    ("NotEqual", lambda a, b: a != b, REAL_BOOL, (-2, 2), (-2, 2)),
    ("Less", lambda a, b: a < b, REAL, (-2, 2), (-2, 2)),
    ("LessEqual", lambda a, b: a <= b, REAL, (-2, 2), (-2, 2)),
    ("Greater", lambda a, b: a > b, REAL, (-2, 2), (-2, 2)),
    ("GreaterEqual", lambda a, b: a >= b, REAL, (-2, 2), (-2, 2)),
    ("LogicalAnd", lambda a, b: a & b, BOOL, (0, 1), (0, 1)),
    ("LogicalOr", lambda a, b: a | b, BOOL, (0, 1), (0, 1)),
    ("TruncateDiv", lambda a, b: np.trunc((a / b).astype(a.dtype)) if a.dtype.kind == "f"
     else trunc_div(a, b).astype(a.dtype), REAL, (-50, 50), nonzero(-9, 9)),
    ("TruncateMod", mod_ref, REAL, (-50, 50), nonzero(-9, 9)),
    ("Xlogy", lambda a, b: np.where(a == 0, 0, f64(a) * np.log(f64(b))), FLOATS, (-3, 3), (0.1, 5)),
    ("Xdivy", lambda a, b: np.where(a == 0, 0, f64(a) / f64(b)), FLOATS, (-3, 3), nonzero(-4, 4)),
    ("BitwiseAnd", lambda a, b: a & b, INTS, (-100, 100), (-100, 100)),
    ("BitwiseOr", lambda a, b: a | b, INTS, (-100, 100), (-100, 100)),
    ("BitwiseXor", lambda a, b: a ^ b, INTS, (-100, 100), (-100, 100)),
    ("LeftShift", lambda a, b: np.left_shift(a, b), INTS, (-100, 100), (0, 7)),
    ("RightShift", lambda a, b: np.right_shift(a, b), INTS, (-100, 100), (0, 7)),
]

# (x1 shape, x2 shape): same, broadcast both ways, scalar, empty.
SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)), ((4, 1, 5), (3, 1)), ((), (2, 3)), ((0, 3), (3,))]


def make_input(dt, shape, rng, seed):
    if rng[0] == "nonzero":
        x = rand(dt, shape, rng[1], rng[2], seed)
        return np.where(x == 0, np.ones_like(x), x)
    x = rand(dt, shape, *rng, seed)
    if np.dtype(dt).kind == "f" and rng[0] < 0 < rng[1]:
        # Integral values half the time, so comparisons and DivNoNan meet equal values and zeros.
        x = np.where(np.arange(x.size).reshape(x.shape) % 2 == 0, np.round(x), x).astype(dt)
    return x


def binary_cases_gen():
    for k, (op, ref, dtypes, r1, r2) in enumerate(BINARY):
        for dt in dtypes:
            yield pytest.param(op, ref, dt, r1, r2, SHAPES[1], id=f"{op}{k}-{np.dtype(dt).name}")
        for s, shapes in enumerate(SHAPES):
            if s != 1:
                yield pytest.param(op, ref, dtypes[0], r1, r2, shapes, id=f"{op}{k}-shape{s}")
        if len(dtypes) > 3 and dtypes[0] != I8:  # an integer type through every shape too
            for s, shapes in enumerate(SHAPES):
                if s != 1:
                    yield pytest.param(op, ref, dtypes[5], r1, r2, shapes, id=f"{op}{k}-shape{s}-int")


def binary_cases():
    return list(binary_cases_gen())


@pytest.mark.parametrize("op,ref,dt,r1,r2,shapes", binary_cases())
def test_binary(device, op, ref, dt, r1, r2, shapes):
    a = make_input(dt, shapes[0], r1, seed=1)
    b = make_input(dt, shapes[1], r2, seed=2)
    y, = run_op(op, [a, b])
    want = np.asarray(ref(a, b))
    assert y.shape == np.broadcast_shapes(a.shape, b.shape)
    if want.dtype == np.bool_:
        assert y.dtype == np.bool_
        np.testing.assert_array_equal(y, want)
    else:
        assert y.dtype == np.dtype(dt)
        check(y, want, dt)


def test_shift_out_of_range(device):
    """Shifts by a negative amount or by the bit width or more: 0 left, the sign fill right."""
    x = np.array([5, -5, 5, -5, 1], np.int8)
    n = np.array([8, 8, -1, 100, 7], np.int8)
    assert run_op("LeftShift", [x, n])[0].tolist() == [0, 0, 0, 0, -128]
    assert run_op("RightShift", [x, n])[0].tolist() == [0, -1, 0, -1, 0]


@pytest.mark.parametrize("dt", FLOATS)
def test_lerp(device, dt):
    start = rand(dt, (2, 3, 4), -5, 5, seed=21)
    end = rand(dt, (3, 1), -5, 5, seed=22)
    weight = rand(dt, (4,), 0, 1, seed=23)
    y, = run_op("Lerp", [start, end, weight])
    check(y, f64(start) + f64(weight) * (f64(end) - f64(start)), dt)


def test_div_integer_rules(device):
    """Integers: truncation toward zero; x / 0 = 0; FloorDiv/FloorMod floor; Mod truncates."""
    a = np.array([7, -7, 7, -7, 5, 0], np.int32)
    b = np.array([2, 2, -2, -2, 0, 3], np.int32)
    assert run_op("RealDiv", [a, b])[0].tolist() == [3, -3, -3, 3, 0, 0]
    assert run_op("Div", [a, b])[0].tolist() == [3, -3, -3, 3, 0, 0]
    assert run_op("FloorDiv", [a, b])[0].tolist() == [3, -4, -4, 3, 0, 0]
    assert run_op("FloorMod", [a, b])[0].tolist() == [1, 1, -1, -1, 0, 0]
    assert run_op("Mod", [a, b])[0].tolist() == [1, -1, 1, -1, 0, 0]
    assert run_op("DivNoNan", [a, b])[0].tolist() == [3, -3, -3, 3, 0, 0]


def test_float_special_values(device):
    """NaN and inf through the composed ops."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.5], np.float32)
    zero = np.zeros_like(x)
    assert run_op("DivNoNan", [x, zero])[0].tolist() == [0.0] * 7
    check(run_op("DivNoNan", [x, np.full_like(x, 2)])[0], f64(x) / 2, F32)
    np.testing.assert_array_equal(run_op("IsNan", [x])[0], np.isnan(x))
    np.testing.assert_array_equal(run_op("IsInf", [x])[0], np.isinf(x))
    np.testing.assert_array_equal(run_op("IsFinite", [x])[0], np.isfinite(x))
    with np.errstate(all="ignore"):
        check(run_op("Log1p", [np.array([-1, -2, np.inf, np.nan, 0, -0.0], np.float32)])[0],
              np.log1p(np.array([-1, -2, np.inf, np.nan, 0, -0.0])), F32)
        check(run_op("Expm1", [np.array([-np.inf, np.inf, np.nan, 0, 100, -100], np.float32)])[0],
              np.expm1(np.array([-np.inf, np.inf, np.nan, 0, 100, -100], np.float32)), F32)
        check(run_op("Rsqrt", [np.array([0, -1, np.inf], np.float32)])[0], [np.inf, np.nan, 0], F32)
    # Maximum / Minimum propagate NaN (numpy.maximum).
    y = np.array([1.0] * 7, np.float32)
    check(run_op("Maximum", [x, y])[0], np.maximum(x, y), F32)
    check(run_op("Minimum", [x, y])[0], np.minimum(x, y), F32)
    # ZerosLike / OnesLike ignore the values (NaN and inf too).
    assert run_op("ZerosLike", [x])[0].tolist() == [0.0] * 7
    assert run_op("OnesLike", [x])[0].tolist() == [1.0] * 7
    # NaN compares unequal to itself.
    assert run_op("NotEqual", [x, x])[0].tolist() == [False] * 4 + [True] + [False] * 2
    # Round halves to even.
    h = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
    assert run_op("Round", [h])[0].tolist() == [0, 2, 2, -0.0, -2]


@pytest.mark.parametrize("op,ref", [("Log1p", np.log1p), ("Expm1", np.expm1)])
def test_small_argument_accuracy(device, op, ref):
    """Where 1 + x rounds (|x| below float32's epsilon and a bit above), the
    result keeps x's own precision: relative error, no absolute slack."""
    x = np.array([1e-7, -3e-7, 2e-6, -5e-5, 1e-3, 0.3, -0.45, 1e-30], np.float32)
    y, = run_op(op, [x])
    np.testing.assert_allclose(f64(y), ref(f64(x)), rtol=3e-7, atol=0)
    x64 = np.array([1e-17, -3e-12, 2e-9, 0.2], np.float64)
    np.testing.assert_allclose(run_op(op, [x64])[0], ref(x64), rtol=2e-15, atol=0)


@pytest.mark.parametrize("dt", REAL_BOOL)
@pytest.mark.parametrize("op,value", [("ZerosLike", 0), ("OnesLike", 1)])
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 4)])
def test_fill_like(device, op, value, dt, shape):
    x = rand(dt, shape, -5, 5, seed=3)
    y, = run_op(op, [x])
    assert y.dtype == np.dtype(dt) and y.shape == x.shape
    np.testing.assert_array_equal(y, np.full(shape, value, dtype=dt))


# -------------------------------------------------------- scalar-attribute ops
@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("op,fn", [("Adds", np.add), ("Subs", np.subtract), ("Muls", np.multiply)])
def test_scalar_attr_ops(device, op, fn, dt):
    x = rand(dt, (3, 4), -10, 10, seed=4)
    value = 2.75
    y, = run_op(op, [x], {"value": A.float(value)})
    assert y.dtype == np.dtype(dt)
    if np.dtype(dt).kind == "f":
        check(y, fn(f64(x), np.float64(np.asarray(value, dt))), dt)
    else:
        # The value takes x's type: integers truncate it (2.75 -> 2).
        with np.errstate(over="ignore"):
            check(y, fn(x, np.asarray(2, dt)).astype(dt), dt)


@pytest.mark.parametrize("dt", REAL)
def test_axpy(device, dt):
    a = rand(dt, (2, 3, 4), -5, 5, seed=5)
    b = rand(dt, (3, 1), -5, 5, seed=6)
    y, = run_op("Axpy", [a, b], {"alpha": A.float(3.0)})
    if np.dtype(dt).kind == "f":
        check(y, f64(a) * 3 + f64(b), dt)
    else:
        with np.errstate(over="ignore"):
            check(y, (a * np.asarray(3, dt) + b).astype(dt), dt)


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("set_n", [True, False])
def test_addn(device, dt, n, set_n):
    xs = [rand(dt, (2, 3), -10, 10, seed=10 + i) for i in range(n)]
    y, = run_op("AddN", xs, {"N": A.int(n)} if set_n else None)
    if np.dtype(dt).kind == "f":
        check(y, sum(f64(x) for x in xs), dt)
    else:
        with np.errstate(over="ignore"):
            want = xs[0].copy()
            for x in xs[1:]:
                want = (want + x).astype(dt)
        check(y, want, dt)


def test_addn_broadcasts(device):
    xs = [np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32), np.float32(5)]
    y, = run_op("AddN", xs, {"N": A.int(3)})
    check(y, 1 + np.arange(3) + 5 + np.zeros((2, 3)), F32)


@pytest.mark.parametrize("dt", REAL)
def test_clip_by_value(device, dt):
    x = rand(dt, (3, 4), -20, 20, seed=7)
    lo, hi = np.asarray(-3, dt) if np.dtype(dt).kind != "u" else np.asarray(2, dt), np.asarray(6, dt)
    y, = run_op("ClipByValue", [x, lo, hi])
    check(y, np.minimum(np.maximum(x, lo), hi), dt)
    # Tensor bounds that broadcast against x.
    lo_t = rand(dt, (4,), 0, 4, seed=8)
    hi_t = rand(dt, (3, 1), 5, 9, seed=9)
    y, = run_op("ClipByValue", [x, lo_t, hi_t])
    check(y, np.minimum(np.maximum(x, lo_t), hi_t), dt)


# ---------------------------------------------------------------------- PRelu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("xshape,wshape", [((2, 3, 4, 5), (3,)), ((2, 3, 4, 5), (1,)), ((2, 3, 4), (3,)),
                                           ((4, 3), (3,)), ((2, 3, 4, 5), (3, 1, 1)), ((0, 3, 2), (3,))])
def test_prelu(device, dt, xshape, wshape):
    x = rand(dt, xshape, -5, 5, seed=11)
    w = rand(dt, wshape, 0.05, 0.5, seed=12)
    y, = run_op("PRelu", [x, w])
    # Ascend PRelu: weight per channel = dim 1 (for rank >= 2 ND/NCHW).
    wb = f64(w)
    if len(wshape) == 1 and len(xshape) > 2:
        wb = wb.reshape((-1,) + (1,) * (len(xshape) - 2))
    check(y, np.where(f64(x) >= 0, f64(x), f64(x) * wb), dt)


# -------------------------------------------------------------------- softmax
def softmax_ref(x, axes, log=False):
    x = f64(x)
    m = np.max(x, axis=tuple(axes), keepdims=True)
    e = np.exp(x - m)
    s = np.sum(e, axis=tuple(axes), keepdims=True)
    return (x - m - np.log(s)) if log else e / s


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["SoftmaxV2", "Softmax", "LogSoftmaxV2"])
@pytest.mark.parametrize("axes", [None, [-1], [0], [1], [0, 2], [-1, -2], [0, 1, 2]])
def test_softmax(device, op, dt, axes):
    x = rand(dt, (2, 3, 4), -4, 4, seed=13)
    attrs = {"axes": A.ints(axes)} if axes is not None else None
    y, = run_op(op, [x], attrs)
    check(y, softmax_ref(x, axes or [-1], log=op.startswith("Log")), dt)


def test_softmax_empty_and_large(device):
    x = np.zeros((0, 4), np.float32)
    assert run_op("SoftmaxV2", [x])[0].shape == (0, 4)
    # Large logits: the max subtraction keeps exp in range (multi-axis path too).
    x = np.array([[1000.0, 1001.0], [-1000.0, -999.0]], np.float32)
    check(run_op("SoftmaxV2", [x], {"axes": A.ints([0, 1])})[0], softmax_ref(x, [0, 1]), F32)
    check(run_op("LogSoftmaxV2", [x], {"axes": A.ints([0, 1])})[0], softmax_ref(x, [0, 1], log=True), F32)


# --------------------------------------------------------------------- Select
@pytest.mark.parametrize("dt", REAL_BOOL)
def test_select(device, dt):
    x1 = rand(dt, (3, 4), -9, 9, seed=14)
    x2 = rand(dt, (3, 4), -9, 9, seed=15)
    cond = rand(np.bool_, (3, 4), 0, 1, seed=16)
    np.testing.assert_array_equal(run_op("Select", [cond, x1, x2])[0], np.where(cond, x1, x2))
    # A vector condition picks whole rows.
    rows = np.array([True, False, True])
    np.testing.assert_array_equal(run_op("Select", [rows, x1, x2])[0], np.where(rows[:, None], x1, x2))
    # SelectV2 broadcasts all three.
    c2 = rand(np.bool_, (2, 1, 4), 0, 1, seed=17)
    then = rand(dt, (3, 1), -9, 9, seed=18)
    y, = run_op("SelectV2", [c2, then, x2])
    np.testing.assert_array_equal(y, np.where(c2, then, x2))
    assert y.dtype == np.dtype(dt)


def test_select_scalar_and_empty(device):
    np.testing.assert_array_equal(run_op("Select", [np.bool_(True), np.float32(1), np.float32(2)])[0], 1)
    e = np.zeros((0, 2), np.float32)
    assert run_op("SelectV2", [np.zeros((0, 2), bool), e, np.float32(1)])[0].shape == (0, 2)


# ------------------------------------------------------------------ bad calls
def expect(code, op, inputs, attrs=None, words=()):
    with pytest.raises(OpError) as err:
        run_op(op, inputs, attrs)
    assert err.value.ret == code, err.value
    assert op in err.value.msg, err.value.msg
    for w in words:
        assert w in err.value.msg, err.value.msg


F = np.ones((2, 3), np.float32)
I = np.ones((2, 3), np.int32)
B = np.ones((2, 3), bool)


@pytest.mark.parametrize("op,inputs", [
    ("Exp", [I]), ("Sqrt", [I]), ("Sigmoid", [I]), ("SoftmaxV2", [I]), ("Neg", [np.ones(3, np.uint8)]),
    ("Sub", [B, B]), ("Less", [B, B]), ("Pow", [np.ones(3, np.int8), np.ones(3, np.int8)]),
    ("LogicalAnd", [F, F]), ("LogicalNot", [I]), ("Select", [F, F, F]), ("IsNan", [I]),
    ("Abs", [np.ones(3, np.uint16)]), ("Relu6", [B]), ("Invert", [F]), ("BitwiseAnd", [F, F]),
    ("Xlogy", [I, I]), ("Lerp", [I, I, I]),
])
def test_unsupported_dtype(device, op, inputs):
    expect(ERR_DTYPE, op, inputs, words=("takes",))


@pytest.mark.parametrize("op,inputs", [
    ("Sub", [F, I]), ("Mul", [I, F]), ("Maximum", [F, np.ones(3, np.float16)]), ("Equal", [F, B]),
    ("ClipByValue", [F, np.float32(0), np.int32(1)]), ("AddN", [F, F, I]), ("PRelu", [F, np.ones(3, np.float16)]),
    ("Select", [B, F, I]), ("SelectV2", [B, I, F]), ("Axpy", [F, I]),
])
def test_mixed_dtypes(device, op, inputs):
    attrs = {"alpha": A.float(1)} if op == "Axpy" else None
    with pytest.raises(OpError) as err:
        run_op(op, inputs, attrs)
    assert err.value.ret in (ERR_INPUT, ERR_DTYPE), err.value
    assert op in err.value.msg


@pytest.mark.parametrize("op,inputs", [
    ("Sub", [F]), ("Sub", [F, F, F]), ("Exp", [F, F]), ("Exp", []), ("Select", [B, F]), ("ClipByValue", [F, F]),
    ("SelectV2", [B, F, F, F]), ("LogicalNot", [B, B]),
])
def test_wrong_input_count(device, op, inputs):
    expect(ERR_INPUT, op, inputs)


@pytest.mark.parametrize("op,inputs", [
    ("Select", [B, F, np.ones((3, 2), np.float32)]),           # x1 and x2 differ
    ("Select", [np.ones(3, bool), F, F]),                     # vector condition: one per row (2)
    ("Select", [np.ones((3, 2), bool), F, F]),                 # condition shape
    ("PRelu", [np.ones((2, 3, 4), np.float32), np.ones(4, np.float32)]),  # 4 slopes, 3 channels
    ("Sub", [F, np.ones((4,), np.float32)]),                   # does not broadcast
    ("SelectV2", [B, F, np.ones((4,), np.float32)]),
])
def test_bad_shapes(device, op, inputs):
    expect(ERR_INPUT, op, inputs)


@pytest.mark.parametrize("op,inputs,attrs", [
    ("LeakyRelu", [F], {"negative_slope": A.int(1)}),          # float attribute given as int
    ("SoftmaxV2", [F], {"axes": A.int(-1)}),                   # list given as int
    ("Swish", [F], {"scale": A.str("2")}),
    ("GeluV2", [F], {"approximate": A.int(0)}),
    ("AddN", [F, F], {"N": A.float(2)}),
    ("Adds", [F], {"value": A.int(1)}),
    ("Adds", [F], None),                                       # value is required
    ("Axpy", [F, F], None),                                    # alpha is required
    ("AddN", [F, F], {"N": A.int(3)}),                         # N is not the input count
    ("SoftmaxV2", [F], {"axes": A.ints([2])}),                 # out of range for rank 2
    ("LogSoftmaxV2", [F], {"axes": A.ints([0, -2])}),          # the same axis twice
    ("SoftmaxV2", [F], {"axes": A.ints([])}),
    ("Exp", [F], {"base": A.float(0)}),
    ("Exp", [F], {"base": A.float(-2)}),
    ("Log", [F], {"base": A.float(1)}),
    ("GeluV2", [F], {"approximate": A.str("erf")}),
    ("Adds", [np.ones(3, np.int8)], {"value": A.float(1000)}),  # does not fit int8
    ("Muls", [np.ones(3, np.uint8)], {"value": A.float(-1)}),
    ("Axpy", [np.ones(3, np.int32), np.ones(3, np.int32)], {"alpha": A.float(1e10)}),
    ("SoftplusV2", [F], {"beta": A.float(0)}),
    ("HardShrink", [F], {"lambd": A.float(-1)}),
    ("SoftShrink", [F], {"lambd": A.float(float("nan"))}),
    ("Fills", [F], None),
    ("Fills", [np.ones(3, np.uint8)], {"value": A.float(300)}),
])
def test_bad_attrs(device, op, inputs, attrs):
    expect(ERR_ATTR, op, inputs, attrs)


def test_messages_name_the_fix(device):
    expect(ERR_INPUT, "Sub", [F, I], words=("float32", "int32", "Cast"))
    expect(ERR_ATTR, "AddN", [F, F], {"N": A.int(3)}, words=("N", "3", "2"))
    expect(ERR_ATTR, "SoftmaxV2", [F], {"axes": A.ints([5])}, words=("5", "rank 2"))


def test_output_desc_of_the_wrong_type(device):
    """Comparisons produce bool; an output described as float32 is refused (100022)."""
    with pytest.raises(OpError) as err:
        run_op("Equal", [F, F], out_dtypes=[np.float32])
    assert err.value.ret == 100022 and "Equal" in err.value.msg


@pytest.mark.parametrize("op,inputs,ref", [
    ("ClipByValue", [np.linspace(-5, 5, 12, dtype=np.float32).reshape(3, 4), np.float32(-1), np.float32(2)],
     lambda x, lo, hi: np.clip(x, lo, hi)),
    ("Pow", [np.linspace(0.5, 3, 12, dtype=np.float32).reshape(3, 4), np.float32(2)], lambda x, p: x ** p),
    ("DivNoNan", [np.linspace(-5, 5, 6, dtype=np.float32), np.array([0, 1, 2, 0, -1, 4], np.float32)],
     lambda a, b: np.where(b == 0, 0, a / np.where(b == 0, 1, b))),
    ("Select", [np.array([True, False, True]), np.ones((3, 2), np.int32), np.zeros((3, 2), np.int32)],
     lambda c, a, b: np.where(c[:, None], a, b)),
])
def test_constant_inputs(device, op, inputs, ref):
    """Inputs after the first given as host constants (aclSetTensorConst) are folded in; same results."""
    consts = tuple(range(1, len(inputs)))
    y, = run_op(op, inputs, consts=consts)
    check(y, ref(*[f64(x) if x.dtype.kind == "f" else x for x in map(np.asarray, inputs)]), np.asarray(inputs[0]).dtype)
