"""Shape / data-movement ops of the Ascend catalogue (src/op/catalog_shape.cpp)
through acl.op, against numpy: Transpose, Reshape, Slice, StridedSlice, Concat,
Split, Gather, Scatter, Pad, Fill, Tile, BroadcastTo, OneHot, Range, Shape, and
the data-dependent NonZero / Where / Unique / MaskedSelect through the pyACL
dynamic-shape flow (infer_shape -> -1 dims with a range -> execute_v2 -> the
output descs hold the real dims).
"""
import numpy as np
import pytest

import acl
from op_util import A, OpError, acl_dtype, make_attr, run_op, ACL_FORMAT_ND, ACL_DT_UNDEFINED, _device_copy

OP_INPUT_NOT_MATCH = 100021
OP_OUTPUT_NOT_MATCH = 100022
OP_ATTR_NOT_MATCH = 100023

DTYPES = [np.float32, np.float16, np.int32, np.int64, np.int8, np.uint8, np.bool_]


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def i32(v):
    return np.asarray(v, dtype=np.int32)


def i64(v):
    return np.asarray(v, dtype=np.int64)


def expect_error(code, op_type, inputs, attrs=None, **kw):
    with pytest.raises(OpError) as e:
        run_op(op_type, inputs, attrs, **kw)
    assert e.value.ret == code, str(e.value)
    assert op_type in e.value.msg, e.value.msg
    return e.value.msg


def infer(op_type, inputs, attrs=None, num_outputs=1, consts=()):
    """acl.op.infer_shape alone: per output (dims, ranges, dtype)."""
    descs, bufs, devs, keep = [], [], [], []
    attr = make_attr(attrs)
    probe = [acl.create_tensor_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_ND) for _ in range(num_outputs)]
    try:
        for i, x in enumerate(inputs):
            x = np.asarray(x)
            d = acl.create_tensor_desc(acl_dtype(x.dtype), list(x.shape), ACL_FORMAT_ND)
            if i in consts:
                host = np.ascontiguousarray(x).tobytes()
                keep.append(host)
                assert acl.set_tensor_const(d, acl.util.bytes_to_ptr(host), len(host)) == 0
            dev = _device_copy(x)
            devs.append(dev)
            descs.append(d)
            bufs.append(acl.create_data_buffer(dev, x.nbytes))
        ret = acl.op.infer_shape(op_type, descs, bufs, num_outputs, probe, attr)
        assert ret == 0, acl.get_recent_err_msg()
        out = []
        for d in probe:
            dims, ranges = [], []
            for k in range(acl.get_tensor_desc_num_dims(d)):
                dim, ret = acl.get_tensor_desc_dim_v2(d, k)
                assert ret == 0
                dims.append(dim)
                if dim < 0:
                    rng, ret = acl.get_tensor_desc_dim_range(d, k, 2)
                    assert ret == 0
                    ranges.append(list(rng))
                else:
                    ranges.append([dim, dim])
            out.append((dims, ranges, acl.get_tensor_desc_type(d)))
        return out
    finally:
        for d in descs + probe:
            acl.destroy_tensor_desc(d)
        for b in bufs:
            acl.destroy_data_buffer(b)
        for p in devs:
            acl.rt.free(p)
        if attr:
            acl.op.destroy_attr(attr)


# ---------------------------------------------------------------- Transpose

@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_dtypes(device, dtype):
    x = data((2, 3, 4), dtype)
    y, = run_op("Transpose", [x, i32([2, 0, 1])], consts=(1,))
    np.testing.assert_array_equal(y, np.transpose(x, (2, 0, 1)))
    y, = run_op("TransposeD", [x], {"perm": A.ints([1, 2, 0])})
    np.testing.assert_array_equal(y, np.transpose(x, (1, 2, 0)))


def test_transpose_negative_perm_int64_and_empty(device):
    x = data((2, 0, 3), np.float32)
    y, = run_op("Transpose", [x, i64([-1, 0, 1])], consts=(1,))
    assert y.shape == (3, 2, 0)


def test_transpose_errors(device):
    x = data((2, 3, 4), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "Transpose", [x, i32([1, 0])], consts=(1,))
    assert "perm" in msg
    expect_error(OP_INPUT_NOT_MATCH, "Transpose", [x, i32([0, 0, 1])], consts=(1,))
    msg = expect_error(OP_INPUT_NOT_MATCH, "Transpose", [x, i32([2, 0, 1])])  # not a constant
    assert "aclSetTensorConst" in msg and "TransposeD" in msg
    expect_error(OP_ATTR_NOT_MATCH, "TransposeD", [x], {"perm": A.ints([0, 1, 3])})


# ---------------------------------------------------------------- Reshape family

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_reshape(device, dtype):
    x = data((2, 3, 4), dtype)
    y, = run_op("Reshape", [x, i64([-1, 4])], consts=(1,))
    np.testing.assert_array_equal(y, x.reshape(-1, 4))
    y, = run_op("Reshape", [x, i32([0, 12])], consts=(1,))  # 0 copies the input dim
    np.testing.assert_array_equal(y, x.reshape(2, 12))


def test_reshape_axis_num_axes(device):
    x = data((2, 3, 4), np.float32)
    y, = run_op("Reshape", [x, i64([12])], {"axis": A.int(1)}, consts=(1,))
    np.testing.assert_array_equal(y, x.reshape(2, 12))
    y, = run_op("Reshape", [x, i64([3, 1])], {"axis": A.int(1), "num_axes": A.int(1)}, consts=(1,))
    np.testing.assert_array_equal(y, x.reshape(2, 3, 1, 4))
    y, = run_op("Reshape", [x, i64([2, 2])], {"axis": A.int(-2)}, consts=(1,))  # Caffe: -1 is after the last dim
    np.testing.assert_array_equal(y, x.reshape(2, 3, 2, 2))


def test_reshape_runtime_shape(device):
    x = data((2, 3, 4), np.float32)
    y, = run_op("Reshape", [x, i32([4, 6])], out_shapes=[[4, 6]], out_dtypes=[np.float32])
    np.testing.assert_array_equal(y, x.reshape(4, 6))


def test_reshape_errors(device):
    x = data((2, 3, 4), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "Reshape", [x, i64([5, -1])], consts=(1,))
    assert "[5,-1]" in msg
    expect_error(OP_INPUT_NOT_MATCH, "Reshape", [x, i64([-1, -1])], consts=(1,))
    expect_error(OP_ATTR_NOT_MATCH, "Reshape", [x, i64([2])], {"axis": A.int(4)}, consts=(1,))


def test_expand_dims_squeeze_unsqueeze_flatten_identity(device):
    x = data((2, 1, 3), np.int32)
    for axis in (0, 3, -1, -4):
        y, = run_op("ExpandDims", [x, i32(axis)], consts=(1,))
        np.testing.assert_array_equal(y, np.expand_dims(x, axis))
    y, = run_op("Squeeze", [x])
    np.testing.assert_array_equal(y, np.squeeze(x))
    y, = run_op("Squeeze", [x], {"axis": A.ints([-2])})
    np.testing.assert_array_equal(y, np.squeeze(x, -2))
    y, = run_op("Unsqueeze", [x], {"axes": A.ints([0, -1])})
    assert y.shape == (1, 2, 1, 3, 1)
    y, = run_op("Flatten", [data((2, 3, 4), np.float16)])
    assert y.shape == (2, 12)
    y, = run_op("Flatten", [data((2, 3, 4), np.float32)], {"axis": A.int(2)})
    assert y.shape == (6, 4)
    z = data((2, 3, 4, 5), np.int8)
    for axis, end, shape in ((1, -1, (2, 60)), (0, 1, (6, 4, 5)), (-2, -1, (2, 3, 20)), (2, 2, (2, 3, 4, 5))):
        y, = run_op("FlattenV2", [z], {"axis": A.int(axis), "end_axis": A.int(end)})
        np.testing.assert_array_equal(y, z.reshape(shape))
    expect_error(OP_ATTR_NOT_MATCH, "FlattenV2", [z], {"axis": A.int(3), "end_axis": A.int(1)})
    y, = run_op("Identity", [x])
    np.testing.assert_array_equal(y, x)
    e = np.zeros((0, 3), np.float32)
    y, = run_op("Identity", [e])
    assert y.shape == (0, 3)


def test_expand_dims_squeeze_errors(device):
    x = data((2, 1, 3), np.int32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "ExpandDims", [x, i32(4)], consts=(1,))
    assert "4" in msg
    expect_error(OP_ATTR_NOT_MATCH, "Squeeze", [x], {"axis": A.ints([0])})  # size 2, not 1
    expect_error(OP_ATTR_NOT_MATCH, "Squeeze", [x], {"axis": A.ints([3])})
    expect_error(OP_ATTR_NOT_MATCH, "Flatten", [x], {"axis": A.int(5)})


# ---------------------------------------------------------------- Slice

@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_slice(device, dtype):
    x = data((3, 4, 5), dtype)
    y, = run_op("Slice", [x, i32([1, 0, 2]), i32([2, -1, 3])], consts=(1, 2))
    np.testing.assert_array_equal(y, x[1:3, 0:, 2:5])
    y, = run_op("SliceD", [x], {"offsets": A.ints([0, 1, 4]), "size": A.ints([-1, 2, 0])})
    np.testing.assert_array_equal(y, x[:, 1:3, 4:4])
    assert y.shape == (3, 2, 0)


def test_slice_runtime_offsets(device):
    x = data((3, 4), np.float32)
    y, = run_op("Slice", [x, i64([1, 1]), i64([-1, 2])], out_shapes=[[2, 2]], out_dtypes=[np.float32])
    np.testing.assert_array_equal(y, x[1:, 1:3])


def test_slice_errors(device):
    x = data((3, 4), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "Slice", [x, i32([2, 0]), i32([2, 1])], consts=(1, 2))
    assert "offsets" in msg
    expect_error(OP_INPUT_NOT_MATCH, "Slice", [x, i32([0]), i32([1])], consts=(1, 2))
    expect_error(OP_ATTR_NOT_MATCH, "SliceD", [x], {"offsets": A.ints([0, 0]), "size": A.ints([1, 5])})


# ---------------------------------------------------------------- StridedSlice

def ss_spec(index):
    """A numpy index tuple as StridedSlice begin/end/strides and masks."""
    begin, end, strides = [], [], []
    masks = dict(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0)
    for i, it in enumerate(index):
        bit = 1 << i
        if it is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif it is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(it, int):
            masks["shrink_axis_mask"] |= bit
            begin.append(it), end.append(it + 1), strides.append(1)
        else:
            if it.start is None:
                masks["begin_mask"] |= bit
            if it.stop is None:
                masks["end_mask"] |= bit
            begin.append(it.start or 0), end.append(it.stop or 0), strides.append(it.step or 1)
    return begin, end, strides, masks


S = slice
SS_CASES = [
    (S(1, 3),),
    (S(None, None, -1),),
    (Ellipsis, 1),
    (None, S(None), 2),
    (-1, Ellipsis, None, S(None, None, 2)),
    (S(None), S(-100, 100)),
    (S(5, 1, -2),),
    (S(0, 0),),
    (Ellipsis, None),
    (S(2, 1),),
    (1, 2, 3),
    (S(None), None, S(None, None, -3), Ellipsis),
    (S(-2, None), S(None, -1), S(1, None, 2)),
    (Ellipsis, S(4, -10, -1)),
]


@pytest.mark.parametrize("index", SS_CASES, ids=[str(c) for c in SS_CASES])
def test_strided_slice_masks(device, index):
    x = data((4, 5, 6), np.float32)
    begin, end, strides, masks = ss_spec(index)
    want = x[index]
    attrs = {k: A.int(v) for k, v in masks.items()}
    y, = run_op("StridedSlice", [x, i32(begin), i32(end), i32(strides)], attrs, consts=(1, 2, 3))
    assert y.shape == want.shape
    np.testing.assert_array_equal(y, want)
    dattrs = dict(attrs, begin=A.ints(begin), end=A.ints(end), strides=A.ints(strides))
    y, = run_op("StridedSliceD", [x], dattrs)
    np.testing.assert_array_equal(y, want)


def test_strided_slice_v2_axes(device):
    x = data((4, 5, 6), np.float32)
    # axes [2, 0]: x[1:3, :, ::-2]; strides omitted -> 1
    y, = run_op("StridedSliceV2", [x, i32([5, 1]), i32([-100, 3]), i32([2, 0]), i32([-2, 1])], consts=(1, 2, 3, 4))
    np.testing.assert_array_equal(y, x[1:3, :, ::-2])
    y, = run_op("StridedSliceV2", [x, i64([-1]), i64([0]), i64([1]), None], {"shrink_axis_mask": A.int(1)},
                consts=(1, 2, 3))
    np.testing.assert_array_equal(y, x[:, -1])
    y, = run_op("StridedSliceV2", [x, i64([0, 1]), i64([0, 3]), None, None], {"begin_mask": A.int(1),
                                                                            "end_mask": A.int(1)}, consts=(1, 2))
    np.testing.assert_array_equal(y, x[:, 1:3])
    expect_error(OP_INPUT_NOT_MATCH, "StridedSliceV2", [x, i32([0]), i32([1]), i32([3]), None], consts=(1, 2, 3))
    expect_error(OP_ATTR_NOT_MATCH, "StridedSliceV2", [x, i32([0]), i32([1]), i32([0]), None],
                 {"new_axis_mask": A.int(1)}, consts=(1, 2, 3))


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.uint8, np.bool_])
def test_strided_slice_dtypes(device, dtype):
    x = data((3, 4), dtype)
    y, = run_op("StridedSliceD", [x], {"begin": A.ints([0, 3]), "end": A.ints([3, 0]), "strides": A.ints([2, -1])})
    np.testing.assert_array_equal(y, x[0:3:2, 3:0:-1])


def test_strided_slice_errors(device):
    x = data((4, 5), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "StridedSlice", [x, i32([0]), i32([1]), i32([1])])  # runtime begin
    assert "StridedSliceD" in msg and "constant" in msg
    expect_error(OP_ATTR_NOT_MATCH, "StridedSliceD", [x], {"begin": A.ints([0]), "end": A.ints([1]),
                                                           "strides": A.ints([0])})
    msg = expect_error(OP_ATTR_NOT_MATCH, "StridedSliceD", [x], {"begin": A.ints([7]), "end": A.ints([8]),
                                                                 "strides": A.ints([1]), "shrink_axis_mask": A.int(1)})
    assert "out of range" in msg
    expect_error(OP_ATTR_NOT_MATCH, "StridedSliceD", [x], {"begin": A.ints([0, 0, 0]), "end": A.ints([1, 1, 1]),
                                                           "strides": A.ints([1, 1, 1])})
    expect_error(OP_ATTR_NOT_MATCH, "StridedSliceD", [x], {"begin": A.ints([0, 0]), "end": A.ints([1, 1]),
                                                           "strides": A.ints([1, 1]), "ellipsis_mask": A.int(3)})


# ---------------------------------------------------------------- Concat / Split

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
def test_concat_variants(device, dtype):
    a, b, c = data((2, 3), dtype, 1), data((2, 1), dtype, 2), data((2, 0), dtype, 3)
    want = np.concatenate([a, b, c], axis=-1)
    y, = run_op("ConcatD", [a, b, c], {"concat_dim": A.int(-1), "N": A.int(3)})
    np.testing.assert_array_equal(y, want)
    y, = run_op("ConcatV2D", [a, b, c], {"concat_dim": A.int(1)})
    np.testing.assert_array_equal(y, want)
    y, = run_op("ConcatV2", [a, b, c, i32(1)], consts=(3,))
    np.testing.assert_array_equal(y, want)
    y, = run_op("Concat", [i32(-1), a, b, c], consts=(0,))
    np.testing.assert_array_equal(y, want)


def test_concat_errors(device):
    a, b = data((2, 3), np.float32), data((2, 1), np.float32)
    msg = expect_error(OP_ATTR_NOT_MATCH, "ConcatD", [a, b], {"concat_dim": A.int(2)})
    assert "concat_dim 2" in msg
    expect_error(OP_ATTR_NOT_MATCH, "ConcatD", [a, b], {"concat_dim": A.int(1), "N": A.int(3)})
    expect_error(OP_INPUT_NOT_MATCH, "ConcatV2", [a, b, i32(-3)], consts=(2,))
    expect_error(OP_INPUT_NOT_MATCH, "ConcatD", [a, b.astype(np.int32)], {"concat_dim": A.int(1)})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_split_variants(device, dtype):
    x = data((4, 6), dtype)
    ys = run_op("SplitD", [x], {"split_dim": A.int(-1), "num_split": A.int(3)}, num_outputs=3)
    for y, w in zip(ys, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(y, w)
    ys = run_op("Split", [i32(0), x], {"num_split": A.int(2)}, consts=(0,), num_outputs=2)
    for y, w in zip(ys, np.split(x, 2, axis=0)):
        np.testing.assert_array_equal(y, w)
    ys = run_op("SplitVD", [x], {"size_splits": A.ints([1, -1, 0]), "split_dim": A.int(1), "num_split": A.int(3)},
                num_outputs=3)
    for y, w in zip(ys, [x[:, :1], x[:, 1:], x[:, 6:]]):
        np.testing.assert_array_equal(y, w)
    ys = run_op("SplitV", [x, i32([3, 1]), i32(0)], {"num_split": A.int(2)}, consts=(1, 2), num_outputs=2)
    np.testing.assert_array_equal(ys[0], x[:3])
    np.testing.assert_array_equal(ys[1], x[3:])


def test_split_errors(device):
    x = data((4, 6), np.float32)
    expect_error(OP_ATTR_NOT_MATCH, "SplitD", [x], {"split_dim": A.int(1), "num_split": A.int(4)}, num_outputs=4)
    expect_error(OP_ATTR_NOT_MATCH, "SplitD", [x], {"split_dim": A.int(2), "num_split": A.int(2)}, num_outputs=2)
    expect_error(OP_ATTR_NOT_MATCH, "SplitVD", [x], {"size_splits": A.ints([1, 2]), "split_dim": A.int(1),
                                                     "num_split": A.int(2)}, num_outputs=2)
    # num_split says 3 but two output descs were given
    msg = expect_error(OP_OUTPUT_NOT_MATCH, "SplitD", [x], {"split_dim": A.int(1), "num_split": A.int(3)},
                       out_shapes=[[4, 2], [4, 2]], out_dtypes=[np.float32, np.float32])
    assert "num_split" in msg


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_pack_unpack(device, dtype):
    xs = [data((2, 3), dtype, s) for s in range(3)]
    for axis in (0, 2, -1, -3):
        y, = run_op("Pack", xs, {"axis": A.int(axis), "N": A.int(3)})
        np.testing.assert_array_equal(y, np.stack(xs, axis=axis))
    x = data((2, 3, 4), dtype)
    for axis, n in ((0, 2), (-2, 3), (2, 4)):
        ys = run_op("Unpack", [x], {"num": A.int(n), "axis": A.int(axis)}, num_outputs=n)
        for i, y in enumerate(ys):
            np.testing.assert_array_equal(y, np.take(x, i, axis=axis))


def test_pack_unpack_errors(device):
    a, b = data((2, 3), np.float32), data((3, 2), np.float32)
    expect_error(OP_INPUT_NOT_MATCH, "Pack", [a, b], {"axis": A.int(0)})
    expect_error(OP_ATTR_NOT_MATCH, "Pack", [a, a], {"axis": A.int(3)})
    expect_error(OP_ATTR_NOT_MATCH, "Unpack", [a], {"num": A.int(3), "axis": A.int(0)}, num_outputs=3)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_reverse(device, dtype):
    x = data((2, 3, 4), dtype)
    y, = run_op("ReverseV2", [x, i32([0, -1])], consts=(1,))
    np.testing.assert_array_equal(y, x[::-1, :, ::-1])
    y, = run_op("ReverseV2D", [x], {"axis": A.ints([1])})
    np.testing.assert_array_equal(y, x[:, ::-1])
    expect_error(OP_ATTR_NOT_MATCH, "ReverseV2D", [x], {"axis": A.ints([3])})
    expect_error(OP_INPUT_NOT_MATCH, "ReverseV2", [x, i32([1, 1])], consts=(1,))


def test_expand(device):
    x = data((3, 1), np.float32)
    y, = run_op("Expand", [x, i64([1, 4])], consts=(1,))  # two-way: [3,1] with [1,4] -> [3,4]
    np.testing.assert_array_equal(y, x * np.ones((1, 4), np.float32))
    y, = run_op("ExpandD", [x], {"shape": A.ints([2, 1, 5])})
    np.testing.assert_array_equal(y, np.broadcast_to(x, (2, 3, 5)))


# ---------------------------------------------------------------- Gather / Scatter

def gather_batch(x, idx, axis, batch_dims):
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    return np.stack([gather_batch(x[i], idx[i], axis - 1, batch_dims - 1) for i in range(x.shape[0])])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
def test_gather_v2(device, dtype):
    x = data((3, 4, 5), dtype)
    idx = i32([[0, 2], [1, 1]])
    for axis in (0, 1, -1):
        y, = run_op("GatherV2", [x, idx, i32(axis)], consts=(2,))
        np.testing.assert_array_equal(y, np.take(x, idx, axis=axis))
        y, = run_op("GatherV2D", [x, idx.astype(np.int64)], {"axis": A.int(axis)})
        np.testing.assert_array_equal(y, np.take(x, idx, axis=axis))
    y, = run_op("Gather", [x, i64([2, 0, -1])])
    np.testing.assert_array_equal(y, x[[2, 0, -1]])


@pytest.mark.parametrize("axis,batch_dims,ishape", [(1, 1, (3, 2)), (2, 1, (3, 2)), (2, 2, (3, 4, 2)),
                                                     (-1, -1, (3, 4, 2)), (1, 1, (3,)), (2, 1, (3, 2, 2)),
                                                     (2, 2, (3, 4))])
def test_gather_v2_batch_dims(device, axis, batch_dims, ishape):
    x = data((3, 4, 5), np.float32)
    idx = np.random.default_rng(1).integers(0, 4, size=ishape).astype(np.int32)
    b = batch_dims % idx.ndim if batch_dims < 0 else batch_dims
    y, = run_op("GatherV2", [x, idx, i32(axis)], {"batch_dims": A.int(batch_dims)}, consts=(2,))
    np.testing.assert_array_equal(y, gather_batch(x, idx, axis % x.ndim, b))


def test_gather_nd_elements(device):
    x = data((3, 4, 5), np.int64)
    idx = i32([[0, 1], [2, 3]])
    y, = run_op("GatherNd", [x, idx])
    np.testing.assert_array_equal(y, x[idx[:, 0], idx[:, 1]])
    ind = np.random.default_rng(2).integers(0, 5, size=(3, 4, 2)).astype(np.int64)
    y, = run_op("GatherElements", [x, ind], {"dim": A.int(-1)})
    np.testing.assert_array_equal(y, np.take_along_axis(x, ind, axis=-1))


def test_gather_errors(device):
    x = data((3, 4), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "GatherV2", [x, i32([0]), i32(2)], consts=(2,))
    assert "axis 2" in msg
    expect_error(OP_ATTR_NOT_MATCH, "GatherV2D", [x, i32([0])], {"axis": A.int(-3)})
    expect_error(OP_ATTR_NOT_MATCH, "GatherElements", [x, i64([[0]])], {"dim": A.int(2)})
    expect_error(OP_INPUT_NOT_MATCH, "GatherV2D", [x, np.float32([0])], {"axis": A.int(0)})


def test_scatter_nd_and_tensor_scatter_update(device):
    idx = i32([[1], [3], [1]])
    upd = np.float32([9, 10, 11])
    y, = run_op("ScatterNd", [idx, upd, i32([5])], consts=(2,))
    want = np.zeros(5, np.float32)
    np.add.at(want, idx[:, 0], upd)
    np.testing.assert_array_equal(y, want)
    x = data((4, 3), np.int32)
    y, = run_op("TensorScatterUpdate", [x, i64([[2], [0]]), i32([[1, 2, 3], [4, 5, 6]])])
    want = x.copy()
    want[2], want[0] = [1, 2, 3], [4, 5, 6]
    np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------- Pad / Fill / Tile / BroadcastTo

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.bool_])
def test_pad(device, dtype):
    x = data((2, 3), dtype)
    p = [[1, 0], [2, 1]]
    want = np.pad(x, p)
    y, = run_op("Pad", [x, i32(p)], consts=(1,))
    np.testing.assert_array_equal(y, want)
    y, = run_op("Pad", [x, i64(p)], out_shapes=[list(want.shape)], out_dtypes=[dtype])  # runtime paddings
    np.testing.assert_array_equal(y, want)
    y, = run_op("PadD", [x], {"paddings": A.lists(p)})
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("reflect", "reflect"), ("edge", "edge")])
def test_pad_v3(device, mode, np_mode):
    x = data((3, 4), np.float32)
    p = [[1, 2], [0, 3]]
    y, = run_op("PadV3", [x, i32([1, 2, 0, 3])], {"mode": A.str(mode)}, consts=(1,))
    np.testing.assert_array_equal(y, np.pad(x, p, mode=np_mode))
    y, = run_op("PadV3", [x, i64([1, 0, 2, 3])], {"mode": A.str(mode), "paddings_contiguous": A.bool(False)},
                consts=(1,))
    np.testing.assert_array_equal(y, np.pad(x, p, mode=np_mode))


def test_pad_v3_constant_value(device):
    x = data((2, 2), np.int32)
    y, = run_op("PadV3", [x, i32([1, 1, 0, 0]), np.int32(7)], consts=(1,))
    np.testing.assert_array_equal(y, np.pad(x, [[1, 1], [0, 0]], constant_values=7))


def test_pad_errors(device):
    x = data((2, 3), np.float32)
    msg = expect_error(OP_INPUT_NOT_MATCH, "Pad", [x, i32([[1, 1], [1, 1], [0, 0]])], consts=(1,))
    assert "paddings" in msg
    expect_error(OP_INPUT_NOT_MATCH, "Pad", [x, i32([1, 1, 1, 1])], consts=(1,))
    expect_error(OP_INPUT_NOT_MATCH, "Pad", [x, i32([[1, -1], [0, 0]])], consts=(1,))
    expect_error(OP_ATTR_NOT_MATCH, "PadD", [x], {"paddings": A.lists([[1, 1]])})
    expect_error(OP_INPUT_NOT_MATCH, "PadV3", [x, i32([0, 0, 3, 0])], {"mode": A.str("reflect")}, consts=(1,))
    expect_error(OP_ATTR_NOT_MATCH, "PadV3", [x, i32([0, 0, 1, 0])], {"mode": A.str("mirror")}, consts=(1,))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_fill_tile_broadcast(device, dtype):
    v = data((), dtype)
    y, = run_op("Fill", [i32([2, 3]), v], consts=(0,))
    np.testing.assert_array_equal(y, np.full((2, 3), v))
    y, = run_op("FillD", [v.reshape(1)], {"dims": A.ints([3, 2])})
    np.testing.assert_array_equal(y, np.full((3, 2), v))
    x = data((2, 3), dtype)
    y, = run_op("Tile", [x, i32([2, 1])], consts=(1,))
    np.testing.assert_array_equal(y, np.tile(x, (2, 1)))
    y, = run_op("TileD", [x], {"multiples": A.ints([1, 3])})
    np.testing.assert_array_equal(y, np.tile(x, (1, 3)))
    y, = run_op("TileD", [x], {"multiples": A.ints([0, 3])})
    assert y.shape == (0, 9)
    c = data((3, 1), dtype)
    y, = run_op("BroadcastTo", [c, i64([2, 3, 4])], consts=(1,))
    np.testing.assert_array_equal(y, np.broadcast_to(c, (2, 3, 4)))
    y, = run_op("BroadcastToD", [c], {"shape": A.ints([3, 5])})
    np.testing.assert_array_equal(y, np.broadcast_to(c, (3, 5)))


def test_fill_tile_broadcast_errors(device):
    x = data((2, 3), np.float32)
    expect_error(OP_INPUT_NOT_MATCH, "Tile", [x, i32([2])], consts=(1,))
    expect_error(OP_ATTR_NOT_MATCH, "TileD", [x], {"multiples": A.ints([1, -1])})
    msg = expect_error(OP_INPUT_NOT_MATCH, "BroadcastTo", [x, i32([2, 4])], consts=(1,))
    assert "broadcast" in msg
    expect_error(OP_ATTR_NOT_MATCH, "BroadcastToD", [x], {"shape": A.ints([3])})
    expect_error(OP_INPUT_NOT_MATCH, "Fill", [i32([2, -1]), np.float32(1)], consts=(0,))


# ---------------------------------------------------------------- OneHot / Range / Shape / Size / Rank

@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(device, axis):
    x = i32([[0, 2], [-1, 5]])  # -1 and 5 are outside [0, 3): all off, as in TensorFlow
    y, = run_op("OneHot", [x, i32(3), np.float32(5), np.float32(-1)], {"axis": A.int(axis)}, consts=(1,))
    eye = np.where(np.arange(3) == x[..., None], 5, -1).astype(np.float32)
    want = np.moveaxis(eye, -1, axis if axis >= 0 else -1)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("start,limit,delta,dtype", [(1, 10, 3, np.int32), (10, 1, -2, np.int64),
                                                     (0, 1, 0.25, np.float32), (3, 3, 1, np.int32)])
def test_range(device, start, limit, delta, dtype):
    ins = [np.asarray(v, dtype=dtype) for v in (start, limit, delta)]
    y, = run_op("Range", ins, consts=(0, 1, 2))
    np.testing.assert_allclose(y, np.arange(start, limit, delta, dtype=dtype))


def test_shape_size_rank(device):
    x = data((2, 0, 5), np.float16)
    y, = run_op("Shape", [x])
    assert y.dtype == np.int32 and list(y) == [2, 0, 5]
    y, = run_op("Shape", [x], {"dtype": A.dtype(np.int64)})
    assert y.dtype == np.int64 and list(y) == [2, 0, 5]
    y, = run_op("Size", [data((2, 3), np.int8)])
    assert y.dtype == np.int32 and int(y) == 6
    y, = run_op("Rank", [x])
    assert int(y) == 3


def test_outputs_too_large_to_address(device):
    """All-constant inputs are evaluated while compiling: a byte size past int64
    is refused up front instead of wrapping to a small one."""
    big = dict(out_shapes=[[1]], out_dtypes=[np.int64])
    msg = expect_error(OP_INPUT_NOT_MATCH, "Range", [np.int64(0), np.int64(2 ** 62), np.int64(1)], consts=(0, 1, 2),
                       **big)
    assert "addressed" in msg
    expect_error(OP_INPUT_NOT_MATCH, "Fill", [i64([2 ** 31, 2 ** 31]), np.int64(1)], consts=(0, 1), **big)
    expect_error(OP_INPUT_NOT_MATCH, "TileD", [i64([1])], {"multiples": A.ints([2 ** 62])}, consts=(0,), **big)
    expect_error(OP_INPUT_NOT_MATCH, "ScatterNd", [i32([[0]]), i64([1]), i64([2 ** 62])], consts=(0, 1, 2), **big)


def test_one_hot_range_errors(device):
    expect_error(OP_INPUT_NOT_MATCH, "Range", [np.int32(0), np.int32(5), np.int32(0)], consts=(0, 1, 2))
    expect_error(OP_INPUT_NOT_MATCH, "Range", [np.int32(0), np.float32(5), np.int32(1)], consts=(0, 1, 2))
    expect_error(OP_ATTR_NOT_MATCH, "OneHot", [i32([0]), i32(3), np.float32(1), np.float32(0)], {"axis": A.int(3)},
                 consts=(1,))


# ---------------------------------------------------------------- data-dependent shapes

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8])
@pytest.mark.parametrize("transpose", [False, True])
def test_non_zero_dynamic_flow(device, dtype, transpose):
    x = (data((3, 4), np.int32, 5) % 3).astype(dtype)
    (dims, ranges, dt), = infer("NonZero", [x], {"transpose": A.bool(transpose)})
    assert dt == acl_dtype(np.int64)
    if transpose:
        assert dims == [2, -1] and ranges[1] == [0, 12]
    else:
        assert dims == [-1, 2] and ranges[0] == [0, 12]
    y, = run_op("NonZero", [x], {"transpose": A.bool(transpose)})
    want = np.stack(np.nonzero(x))
    np.testing.assert_array_equal(y, want if transpose else want.T)


def test_non_zero_int32_empty_and_where(device):
    y, = run_op("NonZero", [np.zeros((2, 3), np.float32)], {"dtype": A.dtype(np.int32)})
    assert y.dtype == np.int32 and y.shape == (0, 2)
    y, = run_op("NonZero", [np.zeros((0, 3), np.float32)])
    assert y.shape == (0, 2)
    x = np.array([[True, False], [True, True]])
    (dims, ranges, _), = infer("Where", [x])
    assert dims == [-1, 2] and ranges[0] == [0, 4]
    y, = run_op("Where", [x])
    np.testing.assert_array_equal(y, np.argwhere(x))


def unique_first(x):
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return x[np.sort(first)], rank[inverse.reshape(-1)], counts[order]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8])
@pytest.mark.parametrize("out_idx", [np.int32, np.int64])
def test_unique_dynamic_flow(device, dtype, out_idx):
    x = np.array([3, 1, 3, 2, 1, 5, 5, 0], dtype=dtype)
    (ydims, yr, ydt), (idims, _, idt) = infer("Unique", [x], {"out_idx": A.dtype(out_idx)}, num_outputs=2)
    assert ydims == [-1] and yr[0][1] == 8 and ydt == acl_dtype(dtype)
    assert idims == [8] and idt == acl_dtype(out_idx)
    y, idx = run_op("Unique", [x], {"out_idx": A.dtype(out_idx)}, num_outputs=2)
    wy, widx, wc = unique_first(x)
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(idx, widx)
    assert idx.dtype == out_idx
    y, idx, cnt = run_op("UniqueWithCounts", [x], {"out_idx": A.dtype(out_idx)}, num_outputs=3)
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(idx, widx)
    np.testing.assert_array_equal(cnt, wc)


def test_unique_empty_and_errors(device):
    y, idx = run_op("Unique", [np.zeros(0, np.float32)], num_outputs=2)
    assert y.shape == (0,) and idx.shape == (0,)
    expect_error(OP_INPUT_NOT_MATCH, "Unique", [np.zeros((2, 2), np.float32)], num_outputs=2)


def test_masked_select_dynamic_flow(device):
    x = data((2, 3), np.float32)
    m = np.array([True, False, True])
    (dims, ranges, _), = infer("MaskedSelect", [x, m])
    assert dims == [-1] and ranges[0] == [0, 6]
    y, = run_op("MaskedSelect", [x, m])
    np.testing.assert_array_equal(y, x[np.broadcast_to(m, x.shape)])
