"""acl.*tensor_desc* (pyacl-api.md §4.3) and the dataset descs
acl.mdl.set_dataset_tensor_desc / get_dataset_tensor_desc (§3.4) with a
free-dim model."""
import numpy as np
import pytest

import acl
import acl_helpers as H

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ACL_FLOAT = 0
ACL_FLOAT16 = 1
ACL_INT32 = 3
ACL_DT_UNDEFINED = -1
ACL_FORMAT_UNDEFINED = -1
ACL_FORMAT_NCHW = 0
ACL_FORMAT_NHWC = 1
ACL_FORMAT_ND = 2
ACL_FORMAT_NC1HWC0 = 3
ACL_MEMTYPE_HOST = 1
ACL_UNKNOWN_RANK = 0xFFFFFFFFFFFFFFFE
ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017
ACL_ERROR_FORMAT_NOT_MATCH = 100027
BOGUS = 0x10

FUNCTIONS = """
create_tensor_desc destroy_tensor_desc get_tensor_desc_type get_tensor_desc_format get_tensor_desc_size
get_tensor_desc_element_count get_tensor_desc_num_dims get_tensor_desc_dim get_tensor_desc_dim_v2
get_tensor_desc_dim_range get_tensor_desc_name set_tensor_desc_name trans_tensor_desc_format
set_tensor_shape set_tensor_storage_shape set_tensor_origin_shape set_tensor_format set_tensor_storage_format
set_tensor_origin_format set_tensor_shape_range set_tensor_value_range set_tensor_dynamic_input
set_tensor_const set_tensor_place_ment get_tensor_desc_by_index get_tensor_desc_address
""".split()


@pytest.fixture
def make_desc():
    made = []

    def make(dtype, dims, fmt):
        d = acl.create_tensor_desc(dtype, dims, fmt)
        assert d != 0, acl.get_recent_err_msg()
        made.append(d)
        return d

    yield make
    for d in made:
        acl.destroy_tensor_desc(d)


def dims_of(d):
    out = []
    for i in range(acl.get_tensor_desc_num_dims(d)):
        dim, ret = acl.get_tensor_desc_dim_v2(d, i)
        assert ret == 0
        out.append(dim)
    return out


def test_every_function_is_top_level():
    assert [f for f in FUNCTIONS if not callable(getattr(acl, f, None))] == []
    assert callable(acl.mdl.set_dataset_tensor_desc) and callable(acl.mdl.get_dataset_tensor_desc)


def test_create_and_read(make_desc):
    d = make_desc(ACL_FLOAT16, [2, 3, 4], ACL_FORMAT_NCHW)
    assert acl.get_tensor_desc_type(d) == ACL_FLOAT16
    assert acl.get_tensor_desc_format(d) == ACL_FORMAT_NCHW
    assert acl.get_tensor_desc_num_dims(d) == 3
    assert acl.get_tensor_desc_element_count(d) == 24
    assert acl.get_tensor_desc_size(d) == 48
    assert acl.get_tensor_desc_dim(d, 2) == 4
    assert acl.get_tensor_desc_dim_v2(d, 1) == (3, 0)
    assert acl.get_tensor_desc_dim_v2(d, 3) == (0, H.ACL_ERROR_INVALID_PARAM)
    assert acl.get_tensor_desc_dim(d, 3) == -1
    assert acl.get_tensor_desc_name(d) == ""
    assert acl.get_tensor_desc_address(d) == 0


def test_scalar_unknown_dims_and_placeholder(make_desc):
    s = make_desc(ACL_INT32, [], ACL_FORMAT_ND)
    assert acl.get_tensor_desc_num_dims(s) == 0
    assert acl.get_tensor_desc_element_count(s) == 1
    assert acl.get_tensor_desc_size(s) == 4
    u = make_desc(ACL_FLOAT, [-1, 4], ACL_FORMAT_ND)
    assert acl.get_tensor_desc_element_count(u) == 0
    assert acl.get_tensor_desc_dim(u, 0) == -1
    r = make_desc(ACL_FLOAT, [-2], ACL_FORMAT_ND)
    assert acl.get_tensor_desc_num_dims(r) == ACL_UNKNOWN_RANK
    p = make_desc(ACL_DT_UNDEFINED, [], ACL_FORMAT_UNDEFINED)
    assert acl.get_tensor_desc_size(p) == 0


def test_argument_errors():
    with pytest.raises(TypeError, match="^argument 2 is not list$"):
        acl.create_tensor_desc(ACL_FLOAT, (2, 3), ACL_FORMAT_ND)
    with pytest.raises(ValueError, match="PyLong_AsLong failed"):
        acl.create_tensor_desc(ACL_FLOAT, [2, "3"], ACL_FORMAT_ND)
    with pytest.raises(TypeError, match="acl.create_tensor_desc args parse failed"):
        acl.create_tensor_desc(ACL_FLOAT, [2])
    with pytest.raises(TypeError, match="acl.get_tensor_desc_dim_v2 args parse failed"):
        acl.get_tensor_desc_dim_v2("desc", 0)
    with pytest.raises(TypeError, match="^argument 2 is not list$"):
        acl.set_tensor_shape(BOGUS, (1,))
    with pytest.raises(TypeError, match="^argument 2 is not list$"):
        acl.set_tensor_shape_range(BOGUS, ((1, 2),))
    with pytest.raises(TypeError, match="^int64_t argument is not list$"):
        acl.set_tensor_value_range(BOGUS, 5)
    with pytest.raises(TypeError, match="acl.mdl.set_dataset_tensor_desc args parse failed"):
        acl.mdl.set_dataset_tensor_desc(0, 0)
    with pytest.raises(TypeError, match="acl.mdl.get_dataset_tensor_desc args parse failed"):
        acl.mdl.get_dataset_tensor_desc(0, "0")
    with pytest.raises(TypeError, match="acl.set_tensor_desc_name args parse failed"):
        acl.set_tensor_desc_name(0, 5)
    # A bad value is refused by the library with a code, not an exception.
    assert acl.create_tensor_desc(ACL_FLOAT, [2, -3], ACL_FORMAT_ND) == 0
    assert "dims[1] = -3" in acl.get_recent_err_msg()


def test_null_and_unknown_handles():
    for d in (0, BOGUS):
        assert acl.get_tensor_desc_type(d) == ACL_DT_UNDEFINED
        assert acl.get_tensor_desc_format(d) == ACL_FORMAT_UNDEFINED
        assert acl.get_tensor_desc_size(d) == 0
        assert acl.get_tensor_desc_element_count(d) == 0
        assert acl.get_tensor_desc_num_dims(d) == 0
        assert acl.get_tensor_desc_dim(d, 0) == -1
        assert acl.get_tensor_desc_dim_v2(d, 0) == (0, H.ACL_ERROR_INVALID_PARAM)
        assert acl.get_tensor_desc_dim_range(d, 0, 2) == (None, H.ACL_ERROR_INVALID_PARAM)
        assert acl.get_tensor_desc_name(d) == ""
        assert acl.set_tensor_shape(d, [1]) == H.ACL_ERROR_INVALID_PARAM
        assert acl.set_tensor_origin_shape(d, [1]) == H.ACL_ERROR_INVALID_PARAM
        assert acl.set_tensor_const(d, 0, 0) == H.ACL_ERROR_INVALID_PARAM
        assert acl.trans_tensor_desc_format(d, ACL_FORMAT_NHWC) == (0, H.ACL_ERROR_INVALID_PARAM)
        assert acl.destroy_tensor_desc(d) is None
        assert acl.set_tensor_desc_name(d, "x") is None
    assert acl.set_tensor_format(0, ACL_FORMAT_NCHW) == 0  # NULL silently ignored (CANN)
    assert acl.set_tensor_format(BOGUS, ACL_FORMAT_NCHW) == H.ACL_ERROR_INVALID_PARAM
    assert acl.get_tensor_desc_by_index(0, 1) == 0


def test_storage_setters_do_not_change_what_getters_report(make_desc):
    d = make_desc(ACL_FLOAT, [2, 3], ACL_FORMAT_NCHW)
    assert acl.set_tensor_shape(d, [4, 5, 6]) == 0
    assert acl.set_tensor_storage_shape(d, [7]) == 0
    assert dims_of(d) == [2, 3]
    assert acl.set_tensor_format(d, ACL_FORMAT_NHWC) == 0
    assert acl.set_tensor_storage_format(d, ACL_FORMAT_NC1HWC0) == 0
    assert acl.get_tensor_desc_format(d) == ACL_FORMAT_NCHW
    assert acl.set_tensor_origin_shape(d, [4, 5, 6]) == 0
    assert dims_of(d) == [4, 5, 6]
    assert acl.set_tensor_origin_format(d, ACL_FORMAT_ND) == 0
    assert acl.get_tensor_desc_format(d) == ACL_FORMAT_ND
    assert acl.set_tensor_origin_shape(d, []) == 0
    assert acl.get_tensor_desc_num_dims(d) == 0


def test_shape_and_value_ranges(make_desc):
    d = make_desc(ACL_FLOAT, [16, -1], ACL_FORMAT_ND)
    assert acl.get_tensor_desc_dim_range(d, 0, 2) == (None, H.ACL_ERROR_INVALID_PARAM)
    assert acl.set_tensor_shape_range(d, [[16, 16], [1, 128]]) == 0
    assert acl.get_tensor_desc_dim_range(d, 1, 2) == ([1, 128], 0)
    assert acl.get_tensor_desc_dim_range(d, 1, 4) == ([1, 128, 0, 0], 0)
    assert acl.get_tensor_desc_dim_range(d, 1, 1) == (None, H.ACL_ERROR_INVALID_PARAM)
    assert acl.get_tensor_desc_dim_range(d, 2, 2) == (None, H.ACL_ERROR_INVALID_PARAM)
    assert acl.get_tensor_desc_dim_range(d, 0, 5000) == (None, H.ACL_ERROR_INVALID_PARAM)
    with pytest.raises(ValueError, match="list \\[min, max\\] of 2 ints"):
        acl.set_tensor_shape_range(d, [[1, 2, 3]])
    assert acl.set_tensor_value_range(d, [[0, 10], [-5, 5]]) == 0
    assert acl.set_tensor_value_range(d, []) == 0


def test_name_dynamic_input_const_placement(make_desc):
    d = make_desc(ACL_INT32, [2], ACL_FORMAT_ND)
    assert acl.set_tensor_desc_name(d, "x") is None
    assert acl.get_tensor_desc_name(d) == "x"
    acl.set_tensor_desc_name(d, None)
    assert acl.get_tensor_desc_name(d) == ""
    assert acl.set_tensor_dynamic_input(d, "xs") == 0
    data = np.array([7, 8], np.int32)
    assert acl.set_tensor_const(d, data.ctypes.data, data.nbytes) == 0
    assert acl.set_tensor_const(d, data.ctypes.data, 0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.set_tensor_place_ment(d, ACL_MEMTYPE_HOST) == 0
    assert acl.set_tensor_place_ment(d, 9) == H.ACL_ERROR_INVALID_PARAM
    assert acl.get_tensor_desc_by_index(d, 0) == d


def test_trans_format(make_desc):
    d = make_desc(ACL_FLOAT16, [1, 3, 4, 5], ACL_FORMAT_NCHW)
    new, ret = acl.trans_tensor_desc_format(d, ACL_FORMAT_NHWC)
    assert ret == 0 and new not in (0, d)
    assert dims_of(new) == [1, 4, 5, 3]
    assert acl.get_tensor_desc_format(new) == ACL_FORMAT_NHWC
    acl.destroy_tensor_desc(new)
    new, ret = acl.trans_tensor_desc_format(d, ACL_FORMAT_NC1HWC0)
    assert ret == 0 and dims_of(new) == [1, 1, 4, 5, 16]
    acl.destroy_tensor_desc(new)
    assert dims_of(d) == [1, 3, 4, 5]
    odd = make_desc(ACL_FLOAT, [1, 1, 4, 5, 16], ACL_FORMAT_NC1HWC0)
    assert acl.trans_tensor_desc_format(odd, ACL_FORMAT_NCHW) == (0, ACL_ERROR_FORMAT_NOT_MATCH)


# ---- datasets ----

def test_dataset_desc_is_a_copy_owned_by_the_dataset(make_desc):
    ds = acl.mdl.create_dataset()
    buf = acl.create_data_buffer(0, 0)
    d = make_desc(ACL_FLOAT, [2, 3], ACL_FORMAT_ND)
    assert acl.mdl.set_dataset_tensor_desc(ds, d, 0) == (ds, H.ACL_ERROR_INVALID_PARAM)  # no buffer 0
    assert acl.mdl.add_dataset_buffer(ds, buf) == (ds, 0)
    assert acl.mdl.get_dataset_tensor_desc(ds, 0) == 0
    assert acl.mdl.set_dataset_tensor_desc(ds, d, 0) == (ds, 0)
    held = acl.mdl.get_dataset_tensor_desc(ds, 0)
    assert held not in (0, d) and dims_of(held) == [2, 3]
    acl.destroy_tensor_desc(held)  # refused: the dataset's
    assert "belongs to a dataset" in acl.get_recent_err_msg()
    assert dims_of(held) == [2, 3]
    assert acl.mdl.set_dataset_tensor_desc(ds, 0, 0) == (ds, 0)  # removes it
    assert acl.mdl.get_dataset_tensor_desc(ds, 0) == 0
    assert acl.mdl.get_dataset_tensor_desc(ds, 5) == 0
    assert acl.mdl.destroy_dataset(ds) == 0
    assert acl.destroy_data_buffer(buf) == 0


def free_relu(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["H", "W"])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "free_relu", [x], [y])
    path = tmp_path / "free_relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


class Side:
    def __init__(self, size):
        self.ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
        self.buf = acl.create_data_buffer(self.ptr, size)
        self.ds = acl.mdl.create_dataset()
        assert acl.mdl.add_dataset_buffer(self.ds, self.buf) == (self.ds, 0)

    def close(self):
        assert acl.mdl.destroy_dataset(self.ds) == 0
        assert acl.destroy_data_buffer(self.buf) == 0
        assert acl.rt.free(self.ptr) == 0


@pytest.mark.parametrize("use_async", [False, True])
def test_free_dims_from_desc_and_real_output_shape(device, tmp_path, use_async):
    model_id, ret = acl.mdl.load_from_file(free_relu(tmp_path))
    assert ret == 0, acl.get_recent_err_msg()
    inp, out = Side(256), Side(256)
    try:
        # Without a desc the two free dims cannot be deduced.
        assert acl.mdl.execute(model_id, inp.ds, out.ds) == ACL_ERROR_MODEL_INPUT_NOT_MATCH
        assert "aclmdlSetDatasetTensorDesc" in (acl.get_recent_err_msg() or "")
        for h, w in ((3, 5), (6, 2)):
            x = (np.arange(h * w, dtype=np.float32).reshape(h, w) - 4) / 2
            H.write_device(acl, inp.ptr, x)
            d = acl.create_tensor_desc(ACL_FLOAT, [h, w], ACL_FORMAT_ND)
            assert acl.mdl.set_dataset_tensor_desc(inp.ds, d, 0) == (inp.ds, 0)
            acl.destroy_tensor_desc(d)  # the dataset keeps its copy
            if use_async:
                stream, ret = acl.rt.create_stream()
                assert ret == 0
                assert acl.mdl.execute_async(model_id, inp.ds, out.ds, stream) == 0, acl.get_recent_err_msg()
                assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
                assert acl.rt.destroy_stream(stream) == 0
            else:
                assert acl.mdl.execute(model_id, inp.ds, out.ds) == 0, acl.get_recent_err_msg()
            od = acl.mdl.get_dataset_tensor_desc(out.ds, 0)
            assert od != 0
            assert acl.get_tensor_desc_num_dims(od) == 2
            assert [acl.get_tensor_desc_dim_v2(od, i)[0] for i in range(2)] == [h, w]
            assert acl.get_tensor_desc_type(od) == ACL_FLOAT
            assert acl.get_tensor_desc_address(od) == out.ptr
            y = H.read_device(acl, out.ptr, h * w * 4, "float32").reshape(h, w)
            np.testing.assert_array_equal(y, np.maximum(x, 0))
        # A desc the model cannot take.
        d = acl.create_tensor_desc(ACL_FLOAT, [2, 3, 4], ACL_FORMAT_ND)
        assert acl.mdl.set_dataset_tensor_desc(inp.ds, d, 0) == (inp.ds, 0)
        acl.destroy_tensor_desc(d)
        assert acl.mdl.execute(model_id, inp.ds, out.ds) == ACL_ERROR_MODEL_INPUT_NOT_MATCH
        assert "[2,3,4]" in acl.get_recent_err_msg()
    finally:
        inp.close()
        out.close()
        assert acl.mdl.unload(model_id) == 0


ATC = H.build_dir() / "bin" / "atc"


@pytest.mark.skipif(not ATC.exists(), reason="atc not built")
@pytest.mark.parametrize("option", ["--input_shape=x:2~6,3~5", "--input_shape_range=x:[2~6,3~5]"])
def test_shape_ranges_from_atc_are_reported_and_enforced(device, tmp_path, option):
    import subprocess
    out = tmp_path / "ranged"
    proc = subprocess.run([str(ATC), f"--model={free_relu(tmp_path)}", "--framework=5", f"--output={out}",
                           "--soc_version=Ascend310", option], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model_id, ret = acl.mdl.load_from_file(f"{out}.om")
    assert ret == 0, acl.get_recent_err_msg()
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    assert acl.mdl.get_input_dims(desc, 0)[0]["dims"] == [-1, -1]
    assert acl.mdl.get_input_dims_range(desc, 0) == ({"rangeCount": 2, "range": [[2, 6], [3, 5]]}, 0)
    assert acl.mdl.get_input_size_by_index(desc, 0) == 6 * 5 * 4  # the largest shape in range
    inp, outp = Side(6 * 5 * 4), Side(6 * 5 * 4)
    try:
        for dims, ok in (([2, 3], True), ([6, 5], True), ([7, 3], False), ([2, 2], False)):
            x = np.arange(dims[0] * dims[1], dtype=np.float32).reshape(dims) - 3
            H.write_device(acl, inp.ptr, x)
            d = acl.create_tensor_desc(ACL_FLOAT, dims, ACL_FORMAT_ND)
            assert acl.mdl.set_dataset_tensor_desc(inp.ds, d, 0) == (inp.ds, 0)
            acl.destroy_tensor_desc(d)
            ret = acl.mdl.execute(model_id, inp.ds, outp.ds)
            if ok:
                assert ret == 0, acl.get_recent_err_msg()
                y = H.read_device(acl, outp.ptr, x.nbytes, "float32").reshape(dims)
                np.testing.assert_array_equal(y, np.maximum(x, 0))
            else:
                assert ret == ACL_ERROR_MODEL_INPUT_NOT_MATCH
                assert "outside the model's range" in acl.get_recent_err_msg()
    finally:
        inp.close()
        outp.close()
        assert acl.mdl.destroy_desc(desc) == 0
        assert acl.mdl.unload(model_id) == 0
