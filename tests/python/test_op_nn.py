"""acl.op: the neural-network and reduction ops of the catalogue
(src/op/catalog_nn.cpp) against numpy references, through the pyACL
dynamic-shape flow (op_util.run_op: infer_shape -> execute_v2)."""
import numpy as np
import pytest

import acl
import op_util
from op_util import A, OpError, run_op

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE = 100026

F32, F16 = np.float32, np.float16
FLOATS = [F32, F16]


def rng(seed=0):
    return np.random.default_rng(seed)


def rand(shape, dt, seed=0, lo=-1.0, hi=1.0):
    r = rng(seed)
    if np.issubdtype(np.dtype(dt), np.integer):
        return r.integers(-5 if np.dtype(dt).kind == "i" else 0, 6, size=shape).astype(dt)
    return r.uniform(lo, hi, size=shape).astype(dt)


def distinct(shape, dt, seed=0):
    """Values without ties (arg-max / top-k are then unambiguous)."""
    n = int(np.prod(shape))
    v = rng(seed).permutation(n).astype(np.float64)
    if np.dtype(dt) == np.uint8:
        v = v % 256
    return (v - (0 if np.dtype(dt).kind == "u" else n // 2)).reshape(shape).astype(dt)


def check(got, want, dt):
    dt = np.dtype(dt)
    if dt == np.float16:
        np.testing.assert_allclose(got.astype(np.float32), np.asarray(want, np.float32), rtol=2e-2, atol=2e-2)
    elif dt.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)
    assert got.dtype == dt


def f32(a):
    return np.asarray(a).astype(np.float32)


def expect_error(code, fn, *words):
    with pytest.raises(OpError) as e:
        fn()
    assert e.value.ret == code, e.value
    for w in words:
        assert w in e.value.msg, e.value.msg
    return e.value


# --------------------------------------------------------------------------
# Matrix products

MM_TYPES = [F32, F16, np.int32]


def _t(a, flag):
    return np.swapaxes(a, -1, -2) if flag else a


@pytest.mark.parametrize("dt", MM_TYPES)
@pytest.mark.parametrize("op", ["MatMul", "MatMulV2"])
@pytest.mark.parametrize("t1,t2", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul(device, op, dt, t1, t2):
    a, b = rand((3, 4), dt, 1), rand((4, 5), dt, 2)
    a_in, b_in = _t(a, t1).copy(), _t(b, t2).copy()
    bias = rand((5,), dt, 3)
    attrs = {"transpose_x1": A.bool(t1), "transpose_x2": A.bool(t2)}
    y, = run_op(op, [a_in, b_in, bias], attrs)
    want = f32(a) @ f32(b) + f32(bias) if dt != np.int32 else a.astype(np.int64) @ b + bias
    check(y, want, dt)
    y, = run_op(op, [a_in, b_in], attrs)  # bias omitted (trailing optional)
    check(y, f32(a) @ f32(b) if dt != np.int32 else a.astype(np.int64) @ b, dt)


def test_matmul_omitted_bias_placeholder(device):
    a, b = rand((2, 3), F32, 1), rand((3, 4), F32, 2)
    y, = run_op("MatMulV2", [a, b, None, None])
    check(y, a @ b, F32)


@pytest.mark.parametrize("dt", MM_TYPES)
@pytest.mark.parametrize("op", ["BatchMatMul", "BatchMatMulV2"])
@pytest.mark.parametrize("adj1,adj2", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("s1,s2", [((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((3, 4), (2, 4, 5))])
def test_batch_matmul(device, op, dt, adj1, adj2, s1, s2):
    a, b = rand(s1, dt, 4), rand(s2, dt, 5)
    attrs = {"adj_x1": A.bool(adj1), "adj_x2": A.bool(adj2)}
    y, = run_op(op, [_t(a, adj1).copy(), _t(b, adj2).copy()], attrs)
    want = np.matmul(f32(a), f32(b)) if dt != np.int32 else np.matmul(a.astype(np.int64), b)
    check(y, want, dt)


def test_batch_matmul_v2_bias(device):
    a, b, bias = rand((2, 3, 4), F32, 1), rand((4, 5), F32, 2), rand((5,), F32, 3)
    y, = run_op("BatchMatMulV2", [a, b, bias])
    check(y, a @ b + bias, F32)


def test_matmul_errors(device):
    a3, b = rand((2, 3, 4), F32), rand((4, 5), F32)
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH, lambda: run_op("MatMul", [a3, b]), "x1", "2-D")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH, lambda: run_op("BatchMatMul", [rand((4,), F32), b]), "rank >= 2")
    # transpose_x1 given as an int: wrong kind
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("MatMul", [b.T.copy(), b], {"transpose_x1": A.int(1)}),
                 "transpose_x1")
    expect_error(ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE,
                 lambda: run_op("MatMulV2", [a3[0], b, None, np.zeros((5,), np.int8)]), "offset_w")
    # Inner dims that do not match: the engine's shape check, reported against the op.
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH, lambda: run_op("MatMulV2", [rand((3, 4), F32), rand((5, 6), F32)]),
                 "MatMulV2")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH, lambda: run_op("MatMul", [rand((3, 4), F32), rand((4, 5), F16)]),
                 "same dtype")


def test_mixed_precision_parameters(device):
    """float32 bias / gamma / beta with float16 data (as CANN allows) are cast to the data's type."""
    a, b, bias = rand((3, 4), F16, 1), rand((4, 5), F16, 2), rand((5,), F32, 3)
    y, = run_op("MatMulV2", [a, b, bias])
    check(y, f32(a) @ f32(b) + bias, F16)
    x, g, be = rand((2, 6), F16, 4), rand((6,), F32, 5), rand((6,), F32, 6)
    y, _, _ = run_op("LayerNorm", [x, g, be], {"begin_norm_axis": A.int(1), "begin_params_axis": A.int(1)},
                     num_outputs=3)
    check(y, layer_norm_ref(x, g, be, 1, 1, 1e-7)[0], F16)


@pytest.mark.parametrize("dt", [F32, F16, np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW", None])
def test_bias_add(device, dt, fmt):
    x = rand((2, 3, 4, 5), dt, 1)
    attrs = {} if fmt is None else {"data_format": A.str(fmt)}
    c = 3 if fmt == "NCHW" else 5
    bias = rand((c,), dt, 2)
    y, = run_op("BiasAdd", [x, bias], attrs)
    want = x + (bias.reshape(3, 1, 1) if fmt == "NCHW" else bias)
    check(y, want, dt)


def test_bias_add_bad_format(device):
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("BiasAdd", [rand((2, 3), F32), rand((3,), F32)], {"data_format": A.str("HWC")}),
                 "data_format", "HWC")


# --------------------------------------------------------------------------
# Convolution


def conv_ref(x, w, strides, pads, dil, groups):
    """x NCHW, w OIHW; pads [top, bottom, left, right]."""
    x = np.pad(f32(x), ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    w = f32(w)
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd - dil[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), np.float32)
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dil[0], j * dil[1]
                patch = xs[:, :, r0:r0 + strides[0] * (oh - 1) + 1:strides[0], c0:c0 + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out


def nhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))


def nchw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def in_format(v, fmt):
    """A [h, w] pair as a 4-list in data_format order."""
    return [1, 1, v[0], v[1]] if fmt == "NCHW" else [1, v[0], v[1], 1]


CONV_CASES = [  # strides, pads, dilations, groups, bias
    ((1, 1), (0, 0, 0, 0), (1, 1), 1, False),
    ((2, 1), (1, 0, 2, 1), (1, 1), 1, True),
    ((1, 2), (1, 1, 1, 1), (2, 1), 2, True),
]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("strides,pads,dil,groups,with_bias", CONV_CASES)
def test_conv2d(device, dt, fmt, strides, pads, dil, groups, with_bias):
    x = rand((2, 4, 7, 6), dt, 1)           # NCHW
    w = rand((6, 4 // groups, 3, 2), dt, 2)  # OIHW
    bias = rand((6,), dt, 3) if with_bias else None
    attrs = {"strides": A.ints(in_format(strides, fmt)), "pads": A.ints(pads),
             "dilations": A.ints(in_format(dil, fmt)), "groups": A.int(groups), "data_format": A.str(fmt)}
    want = conv_ref(x, w, strides, pads, dil, groups)
    if with_bias:
        want += f32(bias).reshape(1, -1, 1, 1)
    if fmt == "NCHW":
        y, = run_op("Conv2D", [x, w] + ([bias] if with_bias else []), attrs)
        check(y, want, dt)
    else:
        # NHWC data; an ND filter follows data_format: [Cout, kH, kW, Cin/g].
        y, = run_op("Conv2D", [nhwc(x), nhwc(w)] + ([bias] if with_bias else []), attrs)
        check(y, nhwc(want), dt)


def test_conv2d_default_format_is_nhwc(device):
    x, w = rand((1, 3, 5, 5), F32, 1), rand((2, 3, 3, 3), F32, 2)
    y, = run_op("Conv2D", [nhwc(x), nhwc(w)], {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([1, 1, 1, 1])})
    check(y, nhwc(conv_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)), F32)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_depthwise_conv2d(device, dt, fmt):
    x = rand((2, 3, 6, 5), dt, 1)      # NCHW
    wf = rand((3, 2, 3, 2), dt, 2)     # [kH, kW, C, K]
    c, k = 3, 2
    # Equivalent grouped conv: output channel c*K + k, weights [C*K, 1, kH, kW].
    w = np.transpose(wf, (2, 3, 0, 1)).reshape(c * k, 1, 3, 2)
    want = conv_ref(x, w, (1, 2), (1, 1, 0, 1), (1, 1), c)
    attrs = {"strides": A.ints(in_format((1, 2), fmt)), "pads": A.ints([1, 1, 0, 1]), "data_format": A.str(fmt)}
    y, = run_op("DepthwiseConv2D", [x if fmt == "NCHW" else nhwc(x), wf], attrs)
    check(y, want if fmt == "NCHW" else nhwc(want), dt)


def conv_t_ref(x, w, strides, pads, groups, out_hw):
    """Transposed conv: x NCHW [N, Cx, H, W], w [Cx, Cy/g, kH, kW]; crops to out_hw."""
    x, w = f32(x), f32(w)
    n, cx, h, wd = x.shape
    _, cyg, kh, kw = w.shape
    cxg = cx // groups
    canvas = np.zeros((n, cyg * groups, max((h - 1) * strides[0] + kh, pads[0] + out_hw[0]),
                       max((wd - 1) * strides[1] + kw, pads[2] + out_hw[1])), np.float32)
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                canvas[:, g * cyg:(g + 1) * cyg, i:i + strides[0] * (h - 1) + 1:strides[0],
                       j:j + strides[1] * (wd - 1) + 1:strides[1]] += np.einsum(
                           "nchw,co->nohw", x[:, g * cxg:(g + 1) * cxg], w[g * cxg:(g + 1) * cxg, :, i, j])
    return canvas[:, :, pads[0]:pads[0] + out_hw[0], pads[2]:pads[2] + out_hw[1]]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("groups,out_hw", [(1, (6, 7)), (2, (5, 8))])
def test_conv2d_transpose(device, dt, fmt, groups, out_hw):
    x = rand((2, 4, 3, 4), dt, 1)              # NCHW, 4 channels
    w = rand((4, 6 // groups, 3, 3), dt, 2)    # [Cx, Cy/g, kH, kW]
    bias = rand((6,), dt, 3)
    pads = (1, 1, 1, 1)
    want = conv_t_ref(x, w, (2, 2), pads, groups, out_hw) + f32(bias).reshape(1, -1, 1, 1)
    size = [2, 6, out_hw[0], out_hw[1]] if fmt == "NCHW" else [2, out_hw[0], out_hw[1], 6]
    attrs = {"strides": A.ints(in_format((2, 2), fmt)), "pads": A.ints(pads), "groups": A.int(groups),
             "data_format": A.str(fmt)}
    xin, win = (x, w) if fmt == "NCHW" else (nhwc(x), nhwc(w))
    y, = run_op("Conv2DTranspose", [np.array(size, np.int32), xin, win, bias], attrs, consts=(0,))
    check(y, want if fmt == "NCHW" else nhwc(want), dt)


def test_conv2d_transpose_errors(device):
    x, w = rand((1, 2, 3, 3), F32), rand((2, 2, 3, 3), F32)
    attrs = {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([0, 0, 0, 0]), "data_format": A.str("NCHW")}
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("Conv2DTranspose", [np.array([1, 2, 9, 5], np.int32), x, w], attrs, consts=(0,)),
                 "input_size", "out of reach")
    expect_error(ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE,
                 lambda: run_op("Conv2DTranspose", [np.array([1, 2, 5, 5], np.int32), x, w], attrs), "constant")


ACL_FORMAT_NCHW, ACL_FORMAT_NHWC, ACL_FORMAT_HWCN = 0, 1, 16


class _DescFormats:
    """Stands in for the acl module inside op_util.run_op so that the first
    input descs it creates get the given formats (None: ND, as run_op does)."""

    def __init__(self, formats):
        self._formats = list(formats)

    def __getattr__(self, name):
        return getattr(acl, name)

    def create_tensor_desc(self, dtype, dims, fmt):
        if self._formats:
            f = self._formats.pop(0)
            fmt = fmt if f is None else f
        return acl.create_tensor_desc(dtype, dims, fmt)


def run_op_formats(monkeypatch, formats, *args, **kwargs):
    monkeypatch.setattr(op_util, "acl", _DescFormats(formats))
    try:
        return run_op(*args, **kwargs)
    finally:
        monkeypatch.setattr(op_util, "acl", acl)


FILTER_FORMATS = [  # data_format, filter desc format, OIHW -> that layout
    ("NCHW", ACL_FORMAT_NCHW, lambda w: w),
    ("NCHW", ACL_FORMAT_NHWC, nhwc),
    ("NHWC", ACL_FORMAT_HWCN, lambda w: np.ascontiguousarray(np.transpose(w, (2, 3, 1, 0)))),
    ("NHWC", ACL_FORMAT_NCHW, lambda w: w),
]


@pytest.mark.parametrize("fmt,wfmt,layout", FILTER_FORMATS)
def test_conv2d_filter_formats(device, monkeypatch, fmt, wfmt, layout):
    x, w = rand((1, 4, 5, 6), F32, 1), rand((3, 4, 3, 2), F32, 2)
    want = conv_ref(x, w, (1, 1), (1, 0, 0, 1), (1, 1), 1)
    attrs = {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([1, 0, 0, 1]), "data_format": A.str(fmt)}
    y, = run_op_formats(monkeypatch, [None, wfmt], "Conv2D", [x if fmt == "NCHW" else nhwc(x), layout(w)], attrs)
    check(y, want if fmt == "NCHW" else nhwc(want), F32)


def test_image_ops_take_layout_from_x_desc(device, monkeypatch):
    """Without data_format an x described as NCHW is NCHW (the default is NHWC)."""
    x, w = rand((1, 4, 5, 6), F32, 1), rand((3, 4, 3, 3), F32, 2)
    y, = run_op_formats(monkeypatch, [ACL_FORMAT_NCHW, ACL_FORMAT_NCHW], "Conv2D", [x, w],
                        {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([0, 0, 0, 0])})
    check(y, conv_ref(x, w, (1, 1), (0, 0, 0, 0), (1, 1), 1), F32)
    y, = run_op_formats(monkeypatch, [ACL_FORMAT_NCHW], "MaxPool", [x],
                        {"ksize": A.ints([1, 1, 2, 2]), "strides": A.ints([1, 1, 2, 2]), "padding": A.str("VALID")})
    check(y, pool_ref(x, (2, 2), (2, 2), (0, 0, 0, 0), "max"), F32)
    y, = run_op_formats(monkeypatch, [ACL_FORMAT_NHWC], "MaxPoolV3", [nhwc(x)],
                        {"ksize": A.ints([1, 2, 2, 1]), "strides": A.ints([1, 2, 2, 1])})
    check(y, nhwc(pool_ref(x, (2, 2), (2, 2), (0, 0, 0, 0), "max")), F32)


CONV_BAD = [  # attrs overriding good ones, expected words in the message
    ({"strides": A.ints([1, 1])}, ["strides", "4 entries"]),
    ({"strides": A.ints([2, 1, 1, 1])}, ["strides", "N and C"]),
    ({"strides": A.ints([1, 1, 0, 1])}, ["strides", ">= 1"]),
    ({"pads": A.ints([0, 0, 0])}, ["pads", "top, bottom, left, right"]),
    ({"pads": A.ints([0, -1, 0, 0])}, ["pads", ">= 0"]),
    ({"dilations": A.ints([1, 1, 1])}, ["dilations"]),
    ({"groups": A.int(0)}, ["groups"]),
    ({"data_format": A.str("NCDHW")}, ["data_format", "NCDHW"]),
    ({"strides": A.int(1)}, ["strides"]),            # wrong kind
    ({"data_format": A.ints([1])}, ["data_format"]),  # wrong kind
]


@pytest.mark.parametrize("bad,words", CONV_BAD)
def test_conv2d_bad_attrs(device, bad, words):
    x, w = rand((1, 2, 4, 4), F32), rand((2, 2, 3, 3), F32)
    attrs = {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([0, 0, 0, 0]), "data_format": A.str("NCHW")}
    attrs.update(bad)
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("Conv2D", [x, w], attrs), *words)


@pytest.mark.parametrize("missing", ["strides", "pads"])
def test_conv2d_missing_required(device, missing):
    attrs = {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([0, 0, 0, 0]), "data_format": A.str("NCHW")}
    del attrs[missing]
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("Conv2D", [rand((1, 2, 4, 4), F32), rand((2, 2, 3, 3), F32)], attrs), missing)


def test_conv2d_bad_inputs(device):
    attrs = {"strides": A.ints([1, 1, 1, 1]), "pads": A.ints([0, 0, 0, 0]), "data_format": A.str("NCHW")}
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,  # 3 channels, the filter takes 2
                 lambda: run_op("Conv2D", [rand((1, 3, 4, 4), F32), rand((2, 2, 3, 3), F32)], attrs), "Conv2D")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,  # window larger than the padded image
                 lambda: run_op("Conv2D", [rand((1, 2, 2, 2), F32), rand((2, 2, 3, 3), F32)], attrs), "Conv2D")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("Conv2D", [rand((2, 4, 4), F32), rand((2, 2, 3, 3), F32)], attrs), "4-D")
    expect_error(ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE,
                 lambda: run_op("Conv2D", [rand((1, 2, 4, 4), np.int32), rand((2, 2, 3, 3), np.int32)], attrs))


# --------------------------------------------------------------------------
# Pooling


def pool_ref(x, k, s, pads, kind, ceil=False, count_pad=False):
    """x NCHW; pads [top, bottom, left, right] (explicit); the last window must
    start inside the input or the leading pad (ceil mode)."""
    x = f32(x)
    n, c, h, w = x.shape
    dims = []
    for size, kk, ss, pb, pe in ((h, k[0], s[0], pads[0], pads[1]), (w, k[1], s[1], pads[2], pads[3])):
        span = size + pb + pe - kk
        o = (-(-span // ss) if ceil else span // ss) + 1
        if ceil and (o - 1) * ss >= size + pb:
            o -= 1
        dims.append(o)
    out = np.zeros((n, c, dims[0], dims[1]), np.float32)
    for i in range(dims[0]):
        for j in range(dims[1]):
            r0, c0 = i * s[0] - pads[0], j * s[1] - pads[2]
            r1, c1 = min(r0 + k[0], h + pads[1]), min(c0 + k[1], w + pads[3])
            win = x[:, :, max(r0, 0):min(r1, h), max(c0, 0):min(c1, w)]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = (r1 - r0) * (c1 - c0) if count_pad else win.shape[2] * win.shape[3]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


def same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


POOL_CASES = [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((3, 2), (1, 2), "SAME"), ((2, 3), (2, 1), "VALID")]


@pytest.mark.parametrize("op,kind,types", [("MaxPool", "max", [F32, F16, np.int8, np.uint8]),
                                           ("AvgPool", "avg", FLOATS)])
@pytest.mark.parametrize("k,s,padding", POOL_CASES)
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_pool(device, op, kind, types, k, s, padding, fmt):
    for dt in types:
        x = rand((2, 3, 7, 6), dt, 7)  # NCHW
        pads = (0, 0, 0, 0) if padding == "VALID" else same_pads(7, k[0], s[0]) + same_pads(6, k[1], s[1])
        want = pool_ref(x, k, s, pads, kind)
        attrs = {"ksize": A.ints(in_format(k, fmt)), "strides": A.ints(in_format(s, fmt)),
                 "padding": A.str(padding), "data_format": A.str(fmt)}
        y, = run_op(op, [x if fmt == "NCHW" else nhwc(x)], attrs)
        if np.dtype(dt).kind in "iu":
            want = want.astype(dt)
        check(y, want if fmt == "NCHW" else nhwc(want), dt)


V2_CASES = [  # ksize, strides, pads, ceil_mode
    ((3, 3), (2, 2), (1, 1, 1, 1), False),
    ((3, 3), (2, 2), (0, 1, 1, 0), True),
    ((2, 3), (1, 2), (1, 0, 0, 2), False),
]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("k,s,pads,ceil", V2_CASES)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_pool_v2_calculated(device, dt, k, s, pads, ceil, fmt):
    x = rand((1, 2, 7, 8), dt, 3)
    base = {"ksize": A.ints(in_format(k, fmt)), "strides": A.ints(in_format(s, fmt)), "pads": A.ints(pads),
            "ceil_mode": A.bool(ceil), "data_format": A.str(fmt)}
    xin = x if fmt == "NCHW" else nhwc(x)
    y, = run_op("MaxPoolV3", [xin], base)
    want = pool_ref(x, k, s, pads, "max", ceil)
    check(y, want if fmt == "NCHW" else nhwc(want), dt)
    for exclusive in (True, False):
        y, = run_op("AvgPoolV2", [xin], dict(base, exclusive=A.bool(exclusive)))
        want = pool_ref(x, k, s, pads, "avg", ceil, count_pad=not exclusive)
        check(y, want if fmt == "NCHW" else nhwc(want), dt)


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_max_pool_v3_integers(device, dt):
    x = rand((1, 2, 5, 6), dt, 8)
    attrs = {"ksize": A.ints([1, 1, 3, 3]), "strides": A.ints([1, 1, 2, 2]), "pads": A.ints([1, 1, 1, 1]),
             "ceil_mode": A.bool(True)}
    y, = run_op("MaxPoolV3", [x], attrs)
    check(y, pool_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), "max", True).astype(dt), dt)


@pytest.mark.parametrize("mode", ["SAME", "VALID"])
def test_pool_v2_padding_modes(device, mode):
    x = rand((1, 2, 7, 6), F32, 4)
    k, s = (3, 2), (2, 2)
    pads = (0, 0, 0, 0) if mode == "VALID" else same_pads(7, 3, 2) + same_pads(6, 2, 2)
    attrs = {"ksize": A.ints([1, 1, 3, 2]), "strides": A.ints([1, 1, 2, 2]), "padding_mode": A.str(mode),
             "pads": A.ints([5, 5, 5, 5])}  # ignored outside CALCULATED
    y, = run_op("MaxPoolV3", [x], attrs)
    check(y, pool_ref(x, k, s, pads, "max"), F32)
    y, = run_op("AvgPoolV2", [x], attrs)
    check(y, pool_ref(x, k, s, pads, "avg"), F32)


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_pool_v2_global(device, fmt):
    x = rand((2, 3, 5, 4), F32, 5)
    xin = x if fmt == "NCHW" else nhwc(x)
    attrs = {"ksize": A.ints([1, 1, 2, 2]), "strides": A.ints([1, 1, 1, 1]), "global_pooling": A.bool(True),
             "data_format": A.str(fmt)}
    axes = (2, 3) if fmt == "NCHW" else (1, 2)
    y, = run_op("MaxPoolV3", [xin], attrs)
    check(y, xin.max(axis=axes, keepdims=True), F32)
    y, = run_op("AvgPoolV2", [xin], attrs)
    check(y, xin.mean(axis=axes, keepdims=True), F32)


def test_avg_pool_v2_divisor_override(device):
    x = rand((1, 2, 6, 6), F32, 6)
    attrs = {"ksize": A.ints([1, 1, 3, 3]), "strides": A.ints([1, 1, 3, 3]), "pads": A.ints([0, 0, 0, 0]),
             "divisor_override": A.int(4)}
    y, = run_op("AvgPoolV2", [x], attrs)
    check(y, pool_ref(x, (3, 3), (3, 3), (0, 0, 0, 0), "avg") * 9 / 4, F32)


@pytest.mark.parametrize("dt", FLOATS)
def test_global_average_pool(device, dt):
    x = rand((2, 3, 4, 5), dt, 2)
    y, = run_op("GlobalAveragePool", [x])
    check(y, f32(x).mean(axis=(2, 3), keepdims=True), dt)


POOL_BAD = [
    ("MaxPool", {"padding": A.str("CALCULATED")}, ["padding", "CALCULATED"]),
    ("MaxPool", {"ksize": A.ints([1, 2, 2])}, ["ksize", "4 entries"]),
    ("AvgPool", {"strides": A.ints([1, 1, 2, 2, 1])}, ["strides", "4 entries"]),
    ("AvgPool", {"ksize": A.ints([2, 2, 2, 2])}, ["ksize", "N and C"]),
    ("MaxPoolV3", {"padding_mode": A.str("FULL")}, ["padding_mode", "FULL"]),
    ("MaxPoolV3", {"pads": A.ints([2, 0, 0, 0])}, ["pads", "smaller than the window"]),
    ("AvgPoolV2", {"padding_mode": A.str("SAME"), "ceil_mode": A.bool(True)}, ["ceil_mode"]),
    ("AvgPoolV2", {"pads": A.ints([0, 0])}, ["pads"]),
    ("AvgPoolV2", {"exclusive": A.int(1)}, ["exclusive"]),  # wrong kind
]


@pytest.mark.parametrize("op,bad,words", POOL_BAD)
def test_pool_bad_attrs(device, op, bad, words):
    attrs = {"ksize": A.ints([1, 1, 2, 2]), "strides": A.ints([1, 1, 1, 1]), "data_format": A.str("NCHW")}
    if op in ("MaxPool", "AvgPool"):
        attrs["padding"] = A.str("VALID")
    attrs.update(bad)
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op(op, [rand((1, 2, 5, 5), F32)], attrs), *words)


@pytest.mark.parametrize("op", ["MaxPool", "AvgPool"])
def test_pool_missing_padding(device, op):
    attrs = {"ksize": A.ints([1, 2, 2, 1]), "strides": A.ints([1, 1, 1, 1])}
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op(op, [rand((1, 5, 5, 2), F32)], attrs), "padding")


# --------------------------------------------------------------------------
# Reductions

REDUCE = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min,
          "ReduceProd": np.prod}
REDUCE_TYPES = [F32, F16, np.int32, np.int64, np.int8, np.uint8]
AXES_CASES = [[1], [-1], [0, 2], [-3, -1], [0, 1, 2]]


def reduce_input(op, dt):
    # Small magnitudes keep products and int8 sums in range.
    if op == "ReduceProd":
        if np.dtype(dt).kind == "f":
            return rand((2, 3, 2), dt, 1, 0.5, 1.5)
        x = np.ones((2, 3, 2), dt)
        x.flat[0], x.flat[5], x.flat[7] = 2, 3, (-1 if np.dtype(dt).kind == "i" else 2)
        return x
    return rand((2, 3, 4), dt, 1)


@pytest.mark.parametrize("op", list(REDUCE))
@pytest.mark.parametrize("dt", REDUCE_TYPES)
def test_reduce(device, op, dt):
    x = reduce_input(op, dt)
    ref = REDUCE[op]
    for axes in AXES_CASES:
        for keep in (False, True):
            want = ref(f32(x) if np.dtype(dt).kind == "f" else x.astype(np.int64), axis=tuple(axes), keepdims=keep)
            if np.dtype(dt).kind != "f":
                want = (np.trunc(want) if op == "ReduceMean" else want).astype(np.int64).astype(dt)
            y, = run_op(op + "D", [x], {"axes": A.ints(axes), "keep_dims": A.bool(keep)})
            check(y, want, dt)
            y, = run_op(op, [x, np.array(axes, np.int32)], {"keep_dims": A.bool(keep)}, consts=(1,))
            check(y, want, dt)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax"])
def test_reduce_empty_axes(device, op):
    x = rand((2, 3), F32, 2)
    ref = REDUCE[op]
    # D form: [] reduces every dim.
    y, = run_op(op + "D", [x], {"axes": A.ints([])})
    check(y, ref(x), F32)
    y, = run_op(op + "D", [x], {"axes": A.ints([]), "keep_dims": A.bool(True)})
    check(y, ref(x, keepdims=True), F32)
    # Input form, axes of shape [0] (aclSetTensorConst refuses 0 bytes, so a
    # plain input): noop_with_empty_axes (default true) returns x.
    empty = np.zeros((0,), np.int64)
    y, = run_op(op, [x, empty])
    check(y, x, F32)
    y, = run_op(op, [x, empty], {"noop_with_empty_axes": A.bool(False)})
    check(y, ref(x), F32)


def test_reduce_axes_at_run_time(device):
    x = rand((2, 3, 4), F32, 3)
    y, = run_op("ReduceSum", [x, np.array([1], np.int32)], {"keep_dims": A.bool(True)})
    check(y, x.sum(axis=1, keepdims=True), F32)


@pytest.mark.parametrize("op,ref", [("ReduceAll", np.all), ("ReduceAny", np.any)])
def test_reduce_bool(device, op, ref):
    x = rng(4).integers(0, 2, size=(3, 4)).astype(np.bool_)
    x[0] = True
    x[1] = False
    for axes in ([0], [1], [-1], [0, 1]):
        y, = run_op(op + "D", [x], {"axes": A.ints(axes)})
        check(y, ref(x, axis=tuple(axes)), np.bool_)
        y, = run_op(op, [x, np.array(axes, np.int64)], {"keep_dims": A.bool(True)}, consts=(1,))
        check(y, ref(x, axis=tuple(axes), keepdims=True), np.bool_)


def test_reduce_errors(device):
    x = rand((2, 3), F32)
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ReduceSumD", [x], {"axes": A.ints([2])}),
                 "axes", "[2]", "out of range")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ReduceMeanD", [x], {"axes": A.ints([0, -2])}),
                 "repeats")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ReduceMaxD", [x], {}), "axes")  # required
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ReduceMaxD", [x], {"axes": A.int(0)}), "axes")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("ReduceSum", [x, np.array([5], np.int32)], consts=(1,)), "axes", "out of range")
    expect_error(ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE, lambda: run_op("ReduceAllD", [x], {"axes": A.ints([0])}))


# --------------------------------------------------------------------------
# Arg-max, arg-min, top-k

ARG_TYPES = [F32, F16, np.int32, np.int64, np.int8, np.uint8]


@pytest.mark.parametrize("dt", ARG_TYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, -3])
def test_arg_max_min(device, dt, dim):
    x = distinct((3, 4, 5), dt, 2)
    for op, ref in (("ArgMaxV2", np.argmax), ("ArgMin", np.argmin)):
        want = ref(x, axis=dim)
        y, = run_op(op, [x, np.array(dim, np.int32)], consts=(1,))
        check(y, want.astype(np.int64), np.int64)  # dtype defaults to int64
        y, = run_op(op, [x, np.array(dim, np.int64)], {"dtype": A.dtype(np.int32)}, consts=(1,))
        check(y, want.astype(np.int32), np.int32)
    for op, ref in (("ArgMaxD", np.argmax), ("ArgMinD", np.argmin)):
        y, = run_op(op, [x], {"dimension": A.int(dim)})
        check(y, ref(x, axis=dim).astype(np.int32), np.int32)
        y, = run_op(op, [x], {"dimension": A.int(dim), "dtype": A.dtype(np.int64)})
        check(y, ref(x, axis=dim).astype(np.int64), np.int64)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("keep", [False, True])
def test_arg_with_value(device, dt, keep):
    x = distinct((3, 4), dt, 5)
    for op, ai, vf in (("ArgMaxWithValue", np.argmax, np.max), ("ArgMinWithValue", np.argmin, np.min)):
        idx, val = run_op(op, [x], {"dimension": A.int(1), "keep_dims": A.bool(keep)}, num_outputs=2)
        check(idx, ai(x, axis=1, keepdims=keep).astype(np.int32), np.int32)
        check(val, vf(x, axis=1, keepdims=keep), dt)


def test_arg_errors(device):
    x = rand((2, 3), F32)
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ArgMaxD", [x], {"dimension": A.int(2)}),
                 "dimension", "out of range")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH, lambda: run_op("ArgMaxD", [x], {}), "dimension")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("ArgMaxD", [x], {"dimension": A.int(0), "dtype": A.dtype(np.float32)}), "dtype")
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("ArgMaxV2", [x, np.array(-3, np.int32)], consts=(1,)), "dimension", "-3")


def topk_ref(x, k, axis, largest):
    key = x.astype(np.float64)  # unsigned -x would wrap
    order = np.argsort(-key if largest else key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


@pytest.mark.parametrize("dt", [F32, F16, np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("op", ["TopK", "TopKV2"])
def test_topk(device, dt, op):
    x = distinct((3, 6, 4), dt, 9)
    for dim, k, largest in ((-1, 2, True), (1, 3, False), (0, 3, True), (-2, 0, True)):
        vals, idx = topk_ref(x, k, dim, largest)
        for const_k in (True, False):
            y, i = run_op(op, [x, np.array(k, np.int32)],
                          {"dim": A.int(dim), "largest": A.bool(largest), "sorted": A.bool(const_k)},
                          num_outputs=2, consts=(1,) if const_k else ())
            check(y, vals, dt)
            check(i, idx.astype(np.int32), np.int32)


def test_topk_v2_int64_indices(device):
    x = distinct((2, 7), F32, 3)
    vals, idx = topk_ref(x, 4, -1, True)
    y, i = run_op("TopKV2", [x, np.array(4, np.int64)], {"indices_dtype": A.int(9)}, num_outputs=2, consts=(1,))
    check(y, vals, F32)
    check(i, idx, np.int64)


def test_topk_errors(device):
    x = rand((2, 5), F32)
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("TopK", [x, np.array(6, np.int32)], num_outputs=2, consts=(1,)), "k = 6")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("TopK", [x, np.array(1, np.int32)], {"dim": A.int(2)}, num_outputs=2, consts=(1,)),
                 "dim", "out of range")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("TopKV2", [x, np.array(1, np.int32)], {"indices_dtype": A.int(1)}, num_outputs=2,
                                consts=(1,)), "indices_dtype")


# --------------------------------------------------------------------------
# Normalisation


def layer_norm_ref(x, g, b, na, pa, eps):
    x = f32(x)
    axes = tuple(range(na, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * f32(g) + f32(b), mean, var


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("na,pa", [(-1, -1), (1, 1), (2, 1), (1, 2), (0, 0)])
def test_layer_norm(device, dt, na, pa):
    x = rand((2, 3, 4), dt, 1, -2, 3)
    pshape = x.shape[pa:]
    g, b = rand(pshape, dt, 2), rand(pshape, dt, 3)
    eps = 1e-5
    attrs = {"begin_norm_axis": A.int(na), "begin_params_axis": A.int(pa), "epsilon": A.float(eps)}
    y, mean, var = run_op("LayerNorm", [x, g, b], attrs, num_outputs=3)
    ry, rm, rv = layer_norm_ref(x, g, b, na % 3, pa % 3, eps)
    check(y, ry, dt)
    check(mean, rm, dt)
    if dt == F16:
        check(var, rv, dt)
    else:
        np.testing.assert_allclose(var, rv, rtol=1e-3, atol=1e-5)


def test_layer_norm_errors(device):
    x = rand((2, 3), F32)
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("LayerNorm", [x, rand((3,), F32), rand((3,), F32)], {"begin_norm_axis": A.int(2)},
                                num_outputs=3), "begin_norm_axis", "out of range")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("LayerNorm", [x, rand((3,), F32), rand((3,), F32)], {"epsilon": A.int(1)},
                                num_outputs=3), "epsilon")


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_batch_norm_inference(device, dt, fmt):
    x = rand((2, 3, 4, 5), dt, 1, -2, 2)  # NCHW
    scale, offset, mean = rand((3,), F32, 2), rand((3,), F32, 3), rand((3,), F32, 4)
    var = rand((3,), F32, 5, 0.5, 2.0)
    eps = 1e-3
    want = (f32(x) - mean.reshape(3, 1, 1)) / np.sqrt(var.reshape(3, 1, 1) + eps) * scale.reshape(3, 1, 1) \
        + offset.reshape(3, 1, 1)
    xin = x if fmt == "NCHW" else nhwc(x)
    outs = run_op("BatchNorm", [xin, scale, offset, mean, var],
                  {"epsilon": A.float(eps), "data_format": A.str(fmt), "is_training": A.bool(False)}, num_outputs=5)
    check(outs[0], want if fmt == "NCHW" else nhwc(want), dt)
    for o, ref in zip(outs[1:], (mean, var, mean, var)):
        check(o, ref, F32)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("factor,with_stats", [(1.0, False), (0.25, True), (0.5, False)])
def test_batch_norm_training(device, dt, fmt, factor, with_stats):
    x = rand((3, 2, 4, 5), dt, 1, -2, 2)  # NCHW
    scale, offset = rand((2,), F32, 2), rand((2,), F32, 3)
    old_mean, old_var = rand((2,), F32, 4), rand((2,), F32, 5, 0.5, 2.0)
    eps = 1e-3
    xf = f32(x)
    bm, bv = xf.mean(axis=(0, 2, 3)), xf.var(axis=(0, 2, 3))
    n = xf.size // 2
    want_y = (xf - bm.reshape(2, 1, 1)) / np.sqrt(bv.reshape(2, 1, 1) + eps) * scale.reshape(2, 1, 1) \
        + offset.reshape(2, 1, 1)
    om, ov = (old_mean, old_var) if with_stats else (np.zeros(2, F32), np.ones(2, F32))
    inputs = [x if fmt == "NCHW" else nhwc(x), scale, offset] + ([old_mean, old_var] if with_stats else [])
    outs = run_op("BatchNorm", inputs, {"epsilon": A.float(eps), "data_format": A.str(fmt),
                                        "exponential_avg_factor": A.float(factor)}, num_outputs=6)
    check(outs[0], want_y if fmt == "NCHW" else nhwc(want_y), dt)
    tol = dict(rtol=2e-3, atol=2e-3) if dt == F16 else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[1], (1 - factor) * om + factor * bm, **tol)
    np.testing.assert_allclose(outs[2], (1 - factor) * ov + factor * bv * n / (n - 1), **tol)
    np.testing.assert_allclose(outs[3], bm, **tol)
    np.testing.assert_allclose(outs[4], 1 / np.sqrt(bv + eps), **tol)
    assert outs[5].shape == (1,) and all(o.dtype == F32 for o in outs[1:])


def test_batch_norm_errors(device):
    x = rand((1, 2, 2, 3), F32)
    p = [rand((3,), F32, i, 0.5, 1.0) for i in range(4)]
    expect_error(ACL_ERROR_OP_INPUT_NOT_MATCH,
                 lambda: run_op("BatchNorm", [x] + p[:2], {"is_training": A.bool(False)}, num_outputs=5),
                 "mean and variance")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("BatchNorm", [x] + p, {"is_training": A.bool(False), "data_format": A.str("HW")},
                                num_outputs=5), "data_format")
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("BatchNorm", [x] + p, {"exponential_avg_factor": A.float(2.0)}, num_outputs=5),
                 "exponential_avg_factor")


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("axis", [[1], [-1], [0, 2], []])
def test_l2_normalize(device, dt, axis):
    x = rand((2, 3, 4), dt, 6)
    x[0, 0, :] = 0  # a zero row: eps keeps it finite
    eps = 1e-4
    ax = tuple(axis) if axis else None
    want = f32(x) / np.sqrt(np.maximum((f32(x) ** 2).sum(axis=ax, keepdims=True), eps))
    y, = run_op("L2Normalize", [x], {"axis": A.ints(axis), "eps": A.float(eps)})
    check(y, want, dt)


def test_l2_normalize_bad_axis(device):
    expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                 lambda: run_op("L2Normalize", [rand((2, 3), F32)], {"axis": A.ints([3])}), "axis", "out of range")


@pytest.mark.parametrize("dt", FLOATS)
def test_softmax_cross_entropy(device, dt):
    logits = rand((4, 5), dt, 1, -3, 3)
    labels = rng(2).dirichlet(np.ones(5), size=4).astype(dt)
    z = f32(logits) - f32(logits).max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss, grad = run_op("SoftmaxCrossEntropyWithLogits", [logits, labels], num_outputs=2)
    check(loss, -(f32(labels) * logp).sum(axis=1), dt)
    check(grad, np.exp(logp) - f32(labels), dt)


def test_arg_max_dimension_must_be_constant(device):
    x = rand((2, 3), F32)
    expect_error(ACL_ERROR_OP_UNSUPPORTED_DATA_TYPE, lambda: run_op("ArgMaxV2", [x, np.array(1, np.int32)]),
                 "ArgMaxV2", "dimension", "constant")


def test_errors_name_the_op(device):
    e = expect_error(ACL_ERROR_OP_ATTR_NOT_MATCH,
                     lambda: run_op("AvgPool", [rand((1, 4, 4, 1), F32)],
                                    {"ksize": A.ints([1, 2, 2]), "strides": A.ints([1, 1, 1, 1]),
                                     "padding": A.str("VALID")}))
    assert "AvgPool" in e.msg and "[1,2,2]" in e.msg, e.msg
