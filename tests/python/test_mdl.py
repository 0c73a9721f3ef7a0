"""acl.mdl through Python: every function of the module, on small ONNX models
built by mdl_models.py (and on .om files from atc, when build/bin/atc exists).
Outputs are compared with numpy references."""
import threading

import numpy as np
import pytest

import acl
import acl_helpers as H
import mdl_models as M

# ---- constants (the module exports none) ----
ACL_ERROR_INVALID_MODEL_ID = 100011
ACL_ERROR_DESERIALIZE_MODEL = 100012
ACL_ERROR_PARSE_MODEL = 100013
ACL_ERROR_READ_MODEL_FAILURE = 100014
ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017
ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018
ACL_ERROR_MODEL_NOT_DYNAMIC = 100019
ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013

ACL_FLOAT = 0
ACL_DT_UNDEFINED = -1
ACL_FORMAT_NCHW = 0
ACL_FORMAT_ND = 2

ACL_MDL_PRIORITY_INT32 = 0
ACL_MDL_LOAD_TYPE_SIZET = 1
ACL_MDL_PATH_PTR = 2
ACL_MDL_MEM_ADDR_PTR = 3
ACL_MDL_MEM_SIZET = 4
ACL_MDL_WEIGHT_ADDR_PTR = 5
ACL_MDL_WEIGHT_SIZET = 6
ACL_MDL_WORKSPACE_ADDR_PTR = 7
ACL_MDL_WORKSPACE_SIZET = 8
ACL_MDL_LOAD_FROM_FILE = 1
ACL_MDL_LOAD_FROM_FILE_WITH_MEM = 2
ACL_MDL_LOAD_FROM_MEM = 3
ACL_MDL_LOAD_FROM_MEM_WITH_MEM = 4

DYNAMIC_INPUT = "ascend_mbatch_shape_data"

ATC = H.build_dir() / "bin" / "atc"
needs_atc = pytest.mark.skipif(not ATC.exists(), reason=f"{ATC} not built")

ALL_FUNCTIONS = """
load_from_file load_from_mem load_from_file_with_mem load_from_mem_with_mem unload query_size
query_size_from_mem create_config_handle destroy_config_handle set_config_opt load_with_config
create_desc destroy_desc get_desc get_desc_from_file get_desc_from_mem get_num_inputs get_num_outputs
get_input_size_by_index get_output_size_by_index get_input_dims get_input_dims_v2 get_output_dims
get_cur_output_dims get_input_dims_range get_input_name_by_index get_output_name_by_index
get_tensor_real_name get_input_index_by_name get_output_index_by_name get_input_format get_output_format
get_input_data_type get_output_data_type get_dynamic_batch get_dynamic_hw get_input_dynamic_gear_count
get_input_dynamic_dims create_dataset destroy_dataset add_dataset_buffer get_dataset_num_buffers
get_dataset_buffer set_dynamic_batch_size set_dynamic_hw_size set_input_dynamic_dims execute execute_async
""".split()


def ok(ret, what=""):
    assert ret == H.ACL_SUCCESS, f"{what} -> {ret}: {acl.get_recent_err_msg()}"


class Io:
    """One side of an execution: a device buffer per tensor, each wrapped in a
    data buffer, all in one dataset."""

    def __init__(self, sizes):
        self.sizes = list(sizes)
        self.ptrs, self.buffers = [], []
        self.dataset = acl.mdl.create_dataset()
        assert self.dataset != 0
        for size in self.sizes:
            ptr, ret = acl.rt.malloc(max(size, 1), H.ACL_MEM_MALLOC_HUGE_FIRST)
            ok(ret, f"malloc({size})")
            acl.rt.memset(ptr, max(size, 1), 0, max(size, 1))
            buf = acl.create_data_buffer(ptr, size)
            assert buf != 0
            ds, ret = acl.mdl.add_dataset_buffer(self.dataset, buf)
            ok(ret, "add_dataset_buffer")
            assert ds == self.dataset
            self.ptrs.append(ptr)
            self.buffers.append(buf)

    def write(self, i, array):
        array = np.ascontiguousarray(array, dtype=np.float32)
        assert array.nbytes <= self.sizes[i]
        H.write_device(acl, self.ptrs[i], array)

    def read(self, i, shape):
        count = int(np.prod(shape))
        return H.read_device(acl, self.ptrs[i], count * 4, "float32").reshape(shape)

    def destroy(self):
        ok(acl.mdl.destroy_dataset(self.dataset), "destroy_dataset")
        for buf, ptr in zip(self.buffers, self.ptrs):
            ok(acl.destroy_data_buffer(buf), "destroy_data_buffer")
            ok(acl.rt.free(ptr), "free")


@pytest.fixture
def io(device):
    """Factory of Io objects destroyed at teardown."""
    made = []

    def make(sizes):
        made.append(Io(sizes))
        return made[-1]

    yield make
    for item in made:
        item.destroy()


@pytest.fixture
def desc(device):
    d = acl.mdl.create_desc()
    assert d != 0
    yield d
    ok(acl.mdl.destroy_desc(d), "destroy_desc")


@pytest.fixture
def linear(tmp_path):
    return M.linear(tmp_path)


def load(path):
    model_id, ret = acl.mdl.load_from_file(str(path))
    ok(ret, f"load_from_file({path})")
    assert model_id > 0
    return model_id


def run_linear(model, model_id, io, x, execute=None):
    """Runs the [1,4] -> [1,3] linear model once, returns y."""
    inputs = io([model.input_bytes(0)])
    outputs = io([model.output_bytes(0)])
    inputs.write(0, x)
    ok((execute or acl.mdl.execute)(model_id, inputs.dataset, outputs.dataset), "execute")
    return outputs.read(0, [1, 3])


# ---- the module ----

def test_submodule_has_every_function():
    import acl.mdl as mdl  # noqa: F401 - registered in sys.modules
    from acl import mdl as same
    assert mdl is acl.mdl is same
    missing = [name for name in ALL_FUNCTIONS if not callable(getattr(acl.mdl, name, None))]
    assert missing == []
    assert [n for n in dir(acl.mdl) if n.isupper()] == []  # no constants, like pyACL


# ---- load variants ----

def test_load_from_file_execute(device, linear, io):
    model_id = load(linear.path)
    x = np.array([[0.5, -1.0, 2.0, 0.25]], np.float32)
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5, atol=1e-6)
    ok(acl.mdl.unload(model_id), "unload")


def test_model_ids_are_distinct(device, linear):
    a, b = load(linear.path), load(linear.path)
    assert a != b
    ok(acl.mdl.unload(a))
    ok(acl.mdl.unload(b))


def test_onnx_named_om_loads(device, linear, tmp_path, io):
    """The format is recognised by content, not by the file name."""
    renamed = tmp_path / "model.om"
    renamed.write_bytes(linear.path.read_bytes())
    model_id = load(renamed)
    x = np.ones((1, 4), np.float32)
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5, atol=1e-6)
    ok(acl.mdl.unload(model_id))


@pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")
def test_load_from_mem_numpy_and_bytes(device, linear, io):
    data = linear.path.read_bytes()
    # numpy: the array may go away right after the load (the bytes are copied)
    array = np.frombuffer(data, np.uint8).copy()
    model_a, ret = acl.mdl.load_from_mem(acl.util.numpy_to_ptr(array), array.nbytes)
    ok(ret, "load_from_mem(numpy)")
    array[:] = 0
    del array
    # bytes
    model_b, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
    ok(ret, "load_from_mem(bytes)")
    x = np.array([[1, 2, 3, 4]], np.float32)
    for model_id in (model_a, model_b):
        np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5)
        ok(acl.mdl.unload(model_id))


def test_query_size_and_load_with_user_memory(device, linear, io, dev_buf):
    work, weight, ret = acl.mdl.query_size(str(linear.path))
    ok(ret, "query_size")
    assert weight >= (4 * 3 + 3) * 4  # W and B at least
    data = linear.path.read_bytes()
    work_m, weight_m, ret = acl.mdl.query_size_from_mem(acl.util.bytes_to_ptr(data), len(data))
    ok(ret, "query_size_from_mem")
    assert (work_m, weight_m) == (work, weight)

    work_ptr = dev_buf(max(work, 1))
    weight_ptr = dev_buf(weight)
    model_id, ret = acl.mdl.load_from_file_with_mem(str(linear.path), work_ptr, work, weight_ptr, weight)
    ok(ret, "load_from_file_with_mem")
    x = np.array([[-1, 0.5, 3, -2]], np.float32)
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))
    # the user's memory survives the unload
    ok(acl.rt.memset(weight_ptr, weight, 0, weight), "memset on user weight memory after unload")

    weight_ptr2 = dev_buf(weight)
    model_id, ret = acl.mdl.load_from_mem_with_mem(acl.util.bytes_to_ptr(data), len(data), 0, 0, weight_ptr2,
                                                   weight)
    ok(ret, "load_from_mem_with_mem (library work memory)")
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))


def test_user_memory_too_small(device, linear, dev_buf):
    _, weight, ret = acl.mdl.query_size(str(linear.path))
    ok(ret)
    small = dev_buf(weight)
    model_id, ret = acl.mdl.load_from_file_with_mem(str(linear.path), 0, 0, small, weight - 4)
    assert ret == H.ACL_ERROR_INVALID_PARAM
    assert "weight" in (acl.get_recent_err_msg() or "").lower()


def test_load_with_config_file(device, linear, io):
    handle = acl.mdl.create_config_handle()
    assert handle != 0
    ok(acl.mdl.set_config_opt(handle, ACL_MDL_LOAD_TYPE_SIZET, ACL_MDL_LOAD_FROM_FILE))
    # a temporary str: the binding keeps its own copy for the handle
    ok(acl.mdl.set_config_opt(handle, ACL_MDL_PATH_PTR, "".join([str(linear.path.parent), "/", linear.path.name])))
    ok(acl.mdl.set_config_opt(handle, ACL_MDL_PRIORITY_INT32, 0))
    model_id, ret = acl.mdl.load_with_config(handle)
    ok(ret, "load_with_config")
    x = np.array([[2, -2, 1, 0]], np.float32)
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))
    ok(acl.mdl.destroy_config_handle(handle))


def test_load_with_config_mem_and_user_memory(device, linear, io, dev_buf):
    data = linear.path.read_bytes()
    work, weight, ret = acl.mdl.query_size(str(linear.path))
    ok(ret)
    weight_ptr = dev_buf(weight)
    handle = acl.mdl.create_config_handle()
    for attr, value in [(ACL_MDL_LOAD_TYPE_SIZET, ACL_MDL_LOAD_FROM_MEM_WITH_MEM),
                        (ACL_MDL_MEM_ADDR_PTR, acl.util.bytes_to_ptr(data)), (ACL_MDL_MEM_SIZET, len(data)),
                        (ACL_MDL_WEIGHT_ADDR_PTR, weight_ptr), (ACL_MDL_WEIGHT_SIZET, weight),
                        (ACL_MDL_WORKSPACE_ADDR_PTR, 0), (ACL_MDL_WORKSPACE_SIZET, 0)]:
        ok(acl.mdl.set_config_opt(handle, attr, value), f"set_config_opt({attr}, {value})")
    model_id, ret = acl.mdl.load_with_config(handle)
    ok(ret, "load_with_config(mem, with mem)")
    ok(acl.mdl.destroy_config_handle(handle))
    x = np.array([[0, 1, 0, 1]], np.float32)
    np.testing.assert_allclose(run_linear(linear, model_id, io, x), linear.reference(x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))


def test_load_with_config_without_path_fails(device):
    handle = acl.mdl.create_config_handle()
    ok(acl.mdl.set_config_opt(handle, ACL_MDL_LOAD_TYPE_SIZET, ACL_MDL_LOAD_FROM_FILE))
    model_id, ret = acl.mdl.load_with_config(handle)
    assert ret != H.ACL_SUCCESS
    assert acl.get_recent_err_msg()
    ok(acl.mdl.destroy_config_handle(handle))


def test_set_config_opt_value_types(device):
    handle = acl.mdl.create_config_handle()
    with pytest.raises(TypeError, match="acl.mdl.set_config_opt args parse failed"):
        acl.mdl.set_config_opt(handle, ACL_MDL_LOAD_TYPE_SIZET, "1")
    with pytest.raises(TypeError, match="acl.mdl.set_config_opt args parse failed"):
        acl.mdl.set_config_opt(handle, ACL_MDL_PATH_PTR, 1.5)
    with pytest.raises(TypeError, match="acl.mdl.set_config_opt args parse failed"):
        acl.mdl.set_config_opt(handle, ACL_MDL_PRIORITY_INT32, 2 ** 40)
    with pytest.raises(TypeError, match="acl.mdl.set_config_opt args parse failed"):
        acl.mdl.set_config_opt(handle, ACL_MDL_PATH_PTR, "a\0b")
    assert acl.mdl.set_config_opt(handle, ACL_MDL_LOAD_TYPE_SIZET, 99) != H.ACL_SUCCESS
    assert acl.mdl.set_config_opt(0, ACL_MDL_LOAD_TYPE_SIZET, 1) == H.ACL_ERROR_INVALID_PARAM
    ok(acl.mdl.destroy_config_handle(handle))
    assert acl.mdl.destroy_config_handle(0) == H.ACL_ERROR_INVALID_PARAM


# ---- description ----

def test_desc_of_loaded_model(device, linear, desc):
    model_id = load(linear.path)
    ok(acl.mdl.get_desc(desc, model_id), "get_desc")
    assert acl.mdl.get_num_inputs(desc) == 1
    assert acl.mdl.get_num_outputs(desc) == 1
    assert acl.mdl.get_input_size_by_index(desc, 0) == 16
    assert acl.mdl.get_output_size_by_index(desc, 0) == 12
    assert acl.mdl.get_input_dims(desc, 0) == ({"name": "x", "dimCount": 2, "dims": [1, 4]}, 0)
    assert acl.mdl.get_input_dims_v2(desc, 0) == ({"name": "x", "dimCount": 2, "dims": [1, 4]}, 0)
    assert acl.mdl.get_output_dims(desc, 0) == ({"name": "y", "dimCount": 2, "dims": [1, 3]}, 0)
    assert acl.mdl.get_cur_output_dims(desc, 0) == ({"name": "y", "dimCount": 2, "dims": [1, 3]}, 0)
    assert acl.mdl.get_input_dims_range(desc, 0) == ({"rangeCount": 2, "range": [[1, 1], [4, 4]]}, 0)
    assert acl.mdl.get_input_name_by_index(desc, 0) == "x"
    assert acl.mdl.get_output_name_by_index(desc, 0) == "y"
    assert acl.mdl.get_tensor_real_name(desc, "x") == "x"
    assert acl.mdl.get_input_index_by_name(desc, "x") == (0, 0)
    assert acl.mdl.get_output_index_by_name(desc, "y") == (0, 0)
    assert acl.mdl.get_input_format(desc, 0) == ACL_FORMAT_ND
    assert acl.mdl.get_output_format(desc, 0) == ACL_FORMAT_ND
    assert acl.mdl.get_input_data_type(desc, 0) == ACL_FLOAT
    assert acl.mdl.get_output_data_type(desc, 0) == ACL_FLOAT
    # a model without gears
    assert acl.mdl.get_dynamic_batch(desc) == ({"batchCount": 0, "batch": []}, 0)
    assert acl.mdl.get_dynamic_hw(desc, -1) == ({"hwCount": 0, "hw": []}, 0)
    assert acl.mdl.get_input_dynamic_gear_count(desc, -1) == (0, 0)
    ok(acl.mdl.unload(model_id))


def test_desc_from_file_and_mem(device, tmp_path):
    conv = M.conv_relu(tmp_path)
    data = conv.path.read_bytes()
    for fill in (lambda d: acl.mdl.get_desc_from_file(d, str(conv.path)),
                 lambda d: acl.mdl.get_desc_from_mem(d, acl.util.bytes_to_ptr(data), len(data))):
        d = acl.mdl.create_desc()
        ok(fill(d), "get_desc_from_*")
        assert acl.mdl.get_input_dims(d, 0) == ({"name": "x", "dimCount": 4, "dims": [1, 3, 8, 8]}, 0)
        assert acl.mdl.get_output_dims(d, 0)[0]["dims"] == [1, 2, 8, 8]
        assert acl.mdl.get_input_size_by_index(d, 0) == 3 * 8 * 8 * 4
        assert acl.mdl.get_input_format(d, 0) == ACL_FORMAT_NCHW
        ok(acl.mdl.destroy_desc(d))


def test_desc_getters_on_bad_index_and_handle(device, linear, desc):
    model_id = load(linear.path)
    ok(acl.mdl.get_desc(desc, model_id))
    for getter in (acl.mdl.get_input_dims, acl.mdl.get_input_dims_v2, acl.mdl.get_output_dims,
                   acl.mdl.get_cur_output_dims, acl.mdl.get_input_dims_range):
        assert getter(desc, 5) == ({}, H.ACL_ERROR_INVALID_PARAM), getter.__name__
        assert "5" in (acl.get_recent_err_msg() or "")
    assert acl.mdl.get_input_dims(0, 0) == ({}, H.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_input_size_by_index(desc, 1) == 0
    assert acl.mdl.get_output_size_by_index(desc, 9) == 0
    assert acl.mdl.get_input_name_by_index(desc, 3) is None
    assert acl.mdl.get_output_name_by_index(desc, 3) is None
    assert acl.mdl.get_input_data_type(desc, 2) == ACL_DT_UNDEFINED
    assert acl.mdl.get_num_inputs(0) == 0
    assert acl.mdl.get_num_outputs(0) == 0
    batch, ret = acl.mdl.get_dynamic_batch(0)
    assert (batch, ret) == ({}, H.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_dynamic_hw(0, -1) == ({}, H.ACL_ERROR_INVALID_PARAM)
    # gear_count above 4096 is refused by the binding itself
    assert acl.mdl.get_input_dynamic_dims(desc, -1, 4097) == (None, H.ACL_ERROR_INVALID_PARAM)
    dims, ret = acl.mdl.get_input_dynamic_dims(desc, -1, 1)
    assert ret != H.ACL_SUCCESS and dims == []
    ok(acl.mdl.unload(model_id))


def test_index_by_name_miss_is_quiet(device, linear, desc):
    """acllite probes every model for ascend_mbatch_shape_data: a miss gives a
    non-zero ret and no error message."""
    model_id = load(linear.path)
    ok(acl.mdl.get_desc(desc, model_id))
    acl.get_recent_err_msg()
    index, ret = acl.mdl.get_input_index_by_name(desc, DYNAMIC_INPUT)
    assert ret != H.ACL_SUCCESS
    assert not acl.get_recent_err_msg()
    _, ret = acl.mdl.get_output_index_by_name(desc, "nope")
    assert ret != H.ACL_SUCCESS
    assert not acl.get_recent_err_msg()
    ok(acl.mdl.unload(model_id))


def test_two_inputs_and_two_outputs(device, tmp_path, desc, io):
    both = M.two_outputs(tmp_path)
    model_id = load(both.path)
    ok(acl.mdl.get_desc(desc, model_id))
    assert acl.mdl.get_num_outputs(desc) == 2
    assert [acl.mdl.get_output_name_by_index(desc, i) for i in range(2)] == ["sum", "prod"]
    assert acl.mdl.get_output_index_by_name(desc, "prod") == (1, 0)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    inputs, outputs = io([24]), io([24, 24])
    inputs.write(0, x)
    ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
    want = both.reference(x)
    np.testing.assert_allclose(outputs.read(0, [2, 3]), want[0], rtol=1e-6)
    np.testing.assert_allclose(outputs.read(1, [2, 3]), want[1], rtol=1e-6)
    ok(acl.mdl.unload(model_id))

    sub = M.two_inputs(tmp_path)
    model_id = load(sub.path)
    d = acl.mdl.create_desc()
    ok(acl.mdl.get_desc(d, model_id))
    assert acl.mdl.get_input_index_by_name(d, "b") == (1, 0)
    a, b = np.ones((2, 2), np.float32), np.arange(4, dtype=np.float32).reshape(2, 2)
    inputs, outputs = io([16, 16]), io([16])
    inputs.write(0, a)
    inputs.write(1, b)
    ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
    np.testing.assert_array_equal(outputs.read(0, [2, 2]), a - b)
    ok(acl.mdl.destroy_desc(d))
    ok(acl.mdl.unload(model_id))


def test_conv_model(device, tmp_path, io):
    conv = M.conv_relu(tmp_path)
    model_id = load(conv.path)
    x = np.random.default_rng(5).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    inputs, outputs = io([conv.input_bytes(0)]), io([conv.output_bytes(0)])
    inputs.write(0, x)
    ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
    np.testing.assert_allclose(outputs.read(0, [1, 2, 8, 8]), conv.reference(x)[0], rtol=1e-4, atol=1e-5)
    ok(acl.mdl.unload(model_id))


def test_free_batch_dim_deduced_from_buffer(device, tmp_path, desc, io):
    """An ONNX model with a free batch dim: -1 in the dims, and the batch is
    taken from the input buffer's size."""
    dyn = M.linear(tmp_path, batch="N", name="linear_free")
    model_id = load(dyn.path)
    ok(acl.mdl.get_desc(desc, model_id))
    assert acl.mdl.get_input_dims(desc, 0)[0]["dims"] == [-1, 4]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1
    inputs, outputs = io([dyn.input_bytes(0, N=3)]), io([dyn.output_bytes(0, N=3)])
    inputs.write(0, x)
    ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
    np.testing.assert_allclose(outputs.read(0, [3, 3]), dyn.reference(x)[0], rtol=1e-5, atol=1e-6)
    ok(acl.mdl.unload(model_id))


# ---- datasets ----

def test_dataset_functions(device):
    ds = acl.mdl.create_dataset()
    assert ds != 0
    assert acl.mdl.get_dataset_num_buffers(ds) == 0
    bufs = [acl.create_data_buffer(0, 0), acl.create_data_buffer(0x1000, 64)]
    for i, buf in enumerate(bufs):
        assert acl.mdl.add_dataset_buffer(ds, buf) == (ds, 0)
        assert acl.mdl.get_dataset_num_buffers(ds) == i + 1
    assert [acl.mdl.get_dataset_buffer(ds, i) for i in range(2)] == bufs
    assert acl.mdl.get_dataset_buffer(ds, 2) == 0
    assert acl.mdl.get_dataset_buffer(ds, -1) == 0
    assert acl.mdl.add_dataset_buffer(ds, 0)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.add_dataset_buffer(0, bufs[0]) == (0, H.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.get_dataset_num_buffers(0) == 0
    ok(acl.mdl.destroy_dataset(ds))
    # the buffers outlive the dataset
    assert acl.get_data_buffer_size_v2(bufs[1]) == 64
    for buf in bufs:
        ok(acl.destroy_data_buffer(buf))
    assert acl.mdl.destroy_dataset(0) == H.ACL_ERROR_INVALID_PARAM


# ---- execution ----

def test_execute_async_on_stream(device, linear, stream, io):
    model_id = load(linear.path)
    x = np.array([[3, 1, -1, 0.5]], np.float32)
    inputs, outputs = io([16]), io([12])
    inputs.write(0, x)
    ok(acl.mdl.execute_async(model_id, inputs.dataset, outputs.dataset, stream), "execute_async")
    ok(acl.rt.synchronize_stream(stream))
    np.testing.assert_allclose(outputs.read(0, [1, 3]), linear.reference(x)[0], rtol=1e-5)
    # the default stream (0)
    inputs.write(0, -x)
    ok(acl.mdl.execute_async(model_id, inputs.dataset, outputs.dataset, 0), "execute_async(default stream)")
    ok(acl.rt.synchronize_device())
    np.testing.assert_allclose(outputs.read(0, [1, 3]), linear.reference(-x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))


def test_execute_async_is_ordered_with_callbacks(device, linear, stream, server, io):
    """Queued behind a BLOCK callback, the execution waits for it; the datasets
    may be destroyed once queued; a callback queued after it sees the output."""
    model_id = load(linear.path)
    x = np.array([[1, 2, 3, 4]], np.float32)
    inputs, outputs = io([16]), io([12])
    ok(server.subscribe(stream))
    gate = H.Gate(acl, stream)
    ok(acl.mdl.execute_async(model_id, inputs.dataset, outputs.dataset, stream), "execute_async")
    inputs.write(0, x)  # the execution has not started: it reads this
    # datasets are read at queue time: freeing them now is allowed
    in_ds = acl.mdl.create_dataset()
    out_ds = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(in_ds, inputs.buffers[0])
    acl.mdl.add_dataset_buffer(out_ds, outputs.buffers[0])
    ok(acl.mdl.execute_async(model_id, in_ds, out_ds, stream), "execute_async (second)")
    ok(acl.mdl.destroy_dataset(in_ds))
    ok(acl.mdl.destroy_dataset(out_ds))
    seen = []
    ok(acl.rt.launch_callback(lambda _: seen.append(outputs.read(0, [1, 3])), None, H.ACL_CALLBACK_BLOCK, stream))
    gate.wait_entered()
    assert not outputs.read(0, [1, 3]).any()
    gate.open()
    ok(acl.rt.synchronize_stream(stream))
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], linear.reference(x)[0], rtol=1e-5)
    ok(acl.mdl.unload(model_id))


@pytest.mark.parametrize("memory", ["library", "user"])
def test_execute_from_many_threads(context, linear, io, dev_buf, memory):
    """One model, executed from several Python threads at once (the binding
    releases the GIL), each with its own buffers. With user work memory the
    library serialises the executions; results must be right either way."""
    if memory == "library":
        model_id = load(linear.path)
    else:
        work, weight, ret = acl.mdl.query_size(str(linear.path))
        ok(ret)
        model_id, ret = acl.mdl.load_from_file_with_mem(str(linear.path), dev_buf(max(work, 1)), work,
                                                        dev_buf(weight), weight)
        ok(ret, "load_from_file_with_mem")
    threads_n, rounds = 4, 25
    ios = [(io([16]), io([12])) for _ in range(threads_n)]
    errors = []

    def worker(k):
        try:
            ok(acl.rt.set_context(context))
            inputs, outputs = ios[k]
            rng = np.random.default_rng(k)
            for _ in range(rounds):
                x = rng.uniform(-2, 2, (1, 4)).astype(np.float32)
                inputs.write(0, x)
                ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
                np.testing.assert_allclose(outputs.read(0, [1, 3]), linear.reference(x)[0], rtol=1e-5, atol=1e-6)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"thread {k}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    ok(acl.mdl.unload(model_id))


def test_unload_before_queued_execution(device, linear, stream, server, io):
    """unload does not wait for executions still queued on a stream: such an
    execution fails, and the stream's synchronisation reports it, saying so."""
    model_id = load(linear.path)
    inputs, outputs = io([16]), io([12])
    inputs.write(0, np.ones((1, 4), np.float32))
    ok(server.subscribe(stream))
    gate = H.Gate(acl, stream)
    ok(acl.mdl.execute_async(model_id, inputs.dataset, outputs.dataset, stream))
    gate.wait_entered()
    ok(acl.mdl.unload(model_id), "unload while an execution is queued")
    gate.open()
    assert acl.rt.synchronize_stream(stream) == ACL_ERROR_INVALID_MODEL_ID
    assert "unloaded" in (acl.get_recent_err_msg() or "")
    assert not outputs.read(0, [1, 3]).any()


# ---- bad input ----

def test_bad_model_id(device, desc, io):
    inputs, outputs = io([16]), io([12])
    assert acl.mdl.execute(12345, inputs.dataset, outputs.dataset) == ACL_ERROR_INVALID_MODEL_ID
    assert "12345" in (acl.get_recent_err_msg() or "")
    assert acl.mdl.execute_async(12345, inputs.dataset, outputs.dataset, 0) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.get_desc(desc, 12345) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.unload(12345) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.set_dynamic_batch_size(12345, inputs.dataset, 0, 1) == ACL_ERROR_INVALID_MODEL_ID


def test_execute_after_unload(device, linear, io):
    model_id = load(linear.path)
    ok(acl.mdl.unload(model_id))
    inputs, outputs = io([16]), io([12])
    assert acl.mdl.execute(model_id, inputs.dataset, outputs.dataset) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.unload(model_id) == ACL_ERROR_INVALID_MODEL_ID


def test_wrong_buffer_sizes(device, linear, io):
    model_id = load(linear.path)
    inputs, outputs = io([12]), io([12])
    assert acl.mdl.execute(model_id, inputs.dataset, outputs.dataset) == ACL_ERROR_MODEL_INPUT_NOT_MATCH
    msg = acl.get_recent_err_msg() or ""
    assert "16" in msg and "12" in msg, msg
    inputs, outputs = io([16]), io([8])
    assert acl.mdl.execute(model_id, inputs.dataset, outputs.dataset) == ACL_ERROR_MODEL_OUTPUT_NOT_MATCH
    msg = acl.get_recent_err_msg() or ""
    assert "12" in msg and "8" in msg, msg
    # wrong number of buffers
    inputs, outputs = io([16, 16]), io([12])
    assert acl.mdl.execute(model_id, inputs.dataset, outputs.dataset) == ACL_ERROR_MODEL_INPUT_NOT_MATCH
    assert acl.mdl.execute(model_id, 0, outputs.dataset) != H.ACL_SUCCESS
    ok(acl.mdl.unload(model_id))


def test_unreadable_and_malformed_files(device, tmp_path, desc):
    missing = tmp_path / "missing.onnx"
    model_id, ret = acl.mdl.load_from_file(str(missing))
    assert ret in (H.ACL_ERROR_INVALID_FILE, ACL_ERROR_READ_MODEL_FAILURE)
    assert "missing.onnx" in (acl.get_recent_err_msg() or "")

    junk = tmp_path / "junk.om"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    for call in (lambda: acl.mdl.load_from_file(str(junk))[1], lambda: acl.mdl.query_size(str(junk))[2],
                 lambda: acl.mdl.get_desc_from_file(desc, str(junk))):
        ret = call()
        assert ret in (ACL_ERROR_PARSE_MODEL, ACL_ERROR_DESERIALIZE_MODEL, ACL_ERROR_READ_MODEL_FAILURE), ret
        assert "junk.om" in (acl.get_recent_err_msg() or "")
    data = junk.read_bytes()
    _, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
    assert ret in (ACL_ERROR_PARSE_MODEL, ACL_ERROR_DESERIALIZE_MODEL)
    _, ret = acl.mdl.load_from_mem(0, 100)
    assert ret == H.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("call", [
    lambda: acl.mdl.load_from_file(1),
    lambda: acl.mdl.load_from_file(),
    lambda: acl.mdl.load_from_mem("x", 1),
    lambda: acl.mdl.load_from_file_with_mem("p", 0, 0, 0),
    lambda: acl.mdl.query_size(None),
    lambda: acl.mdl.get_desc(0, "1"),
    lambda: acl.mdl.get_num_inputs("d"),
    lambda: acl.mdl.get_input_dims(0),
    lambda: acl.mdl.get_input_index_by_name(0, 5),
    lambda: acl.mdl.create_dataset(1),
    lambda: acl.mdl.add_dataset_buffer(0, 0, 0),
    lambda: acl.mdl.execute(1, 0),
    lambda: acl.mdl.execute_async(1, 0, 0, "s"),
    lambda: acl.mdl.set_dynamic_hw_size(1, 0, 0, 8),
    lambda: acl.mdl.unload(1.0),
])
def test_parse_failures_raise_type_error(call):
    with pytest.raises(TypeError, match=r"^acl\.mdl\.\w+ args parse failed$"):
        call()


def test_set_input_dynamic_dims_argument_checks(device, linear, io):
    model_id = load(linear.path)
    inputs = io([16])
    with pytest.raises(TypeError, match="argument 4 is not dict"):
        acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, 0, [1, 4])
    with pytest.raises(ValueError):
        acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, 0, {"dimCount": 3, "dims": [1, 4]})
    with pytest.raises(ValueError):
        acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, 0, {"dimCount": 1, "dims": ["a"]})
    with pytest.raises(ValueError):
        acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, 0, {"dims": [1] * 129})
    # a static model has no gears
    ret = acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, 0, {"name": "", "dimCount": 2, "dims": [1, 4]})
    assert ret == ACL_ERROR_MODEL_NOT_DYNAMIC
    assert acl.mdl.set_dynamic_batch_size(model_id, inputs.dataset, 0, 1) == ACL_ERROR_MODEL_NOT_DYNAMIC
    assert acl.mdl.set_dynamic_hw_size(model_id, inputs.dataset, 0, 8, 8) == ACL_ERROR_MODEL_NOT_DYNAMIC
    ok(acl.mdl.unload(model_id))


# ---- gears: .om files built by atc ----

def build_om(model, tmp_path, *options):
    out = tmp_path / f"{model.path.stem}_gears"
    proc = M.run_atc(ATC, model.path, out, *options, cwd=tmp_path)
    assert proc.returncode == 0, f"atc failed\n{proc.stdout}\n{proc.stderr}"
    om = out.with_suffix(".om")
    assert om.exists()
    return om


def gear_io(io, desc, data_sizes):
    """Inputs: the data inputs plus the gear input (its size from the desc)."""
    gear_index, ret = acl.mdl.get_input_index_by_name(desc, DYNAMIC_INPUT)
    ok(ret, "get_input_index_by_name(ascend_mbatch_shape_data)")
    assert gear_index == acl.mdl.get_num_inputs(desc) - 1
    gear_size = acl.mdl.get_input_size_by_index(desc, gear_index)
    assert gear_size > 0
    return io(list(data_sizes) + [gear_size]), gear_index


@needs_atc
def test_dynamic_batch(device, tmp_path, desc, io):
    dyn = M.linear(tmp_path, batch="N", name="linear_batch")
    om = build_om(dyn, tmp_path, "--input_shape=x:-1,4", "--dynamic_batch_size=1,2,4")
    model_id = load(om)
    ok(acl.mdl.get_desc(desc, model_id))
    assert acl.mdl.get_num_inputs(desc) == 2
    assert acl.mdl.get_input_name_by_index(desc, 1) == DYNAMIC_INPUT
    assert acl.mdl.get_dynamic_batch(desc) == ({"batchCount": 3, "batch": [1, 2, 4]}, 0)
    assert acl.mdl.get_input_dims(desc, 0)[0]["dims"] == [-1, 4]
    assert acl.mdl.get_input_size_by_index(desc, 0) == 4 * 4 * 4  # the largest gear
    assert acl.mdl.get_output_size_by_index(desc, 0) == 4 * 3 * 4
    work, weight, ret = acl.mdl.query_size(str(om))
    ok(ret)
    assert weight > 0

    inputs, gear_index = gear_io(io, desc, [4 * 4 * 4])
    outputs = io([4 * 3 * 4])
    for batch in (2, 4, 1):
        x = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4) / 3 - 1
        inputs.write(0, x)
        ok(acl.mdl.set_dynamic_batch_size(model_id, inputs.dataset, gear_index, batch), f"batch {batch}")
        cur, ret = acl.mdl.get_cur_output_dims(desc, 0)
        ok(ret)
        assert cur["dims"] == [batch, 3]
        ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset), f"execute batch {batch}")
        np.testing.assert_allclose(outputs.read(0, [batch, 3]), dyn.reference(x)[0], rtol=1e-5, atol=1e-6)
    assert acl.mdl.set_dynamic_batch_size(model_id, inputs.dataset, gear_index, 3) == \
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    assert "3" in (acl.get_recent_err_msg() or "")
    ok(acl.mdl.unload(model_id))


@needs_atc
def test_dynamic_image_size(device, tmp_path, desc, io):
    conv = M.conv_relu(tmp_path, "H", "W", name="conv_hw")
    om = build_om(conv, tmp_path, "--input_shape=x:1,3,-1,-1", "--dynamic_image_size=8,8;16,12")
    model_id = load(om)
    ok(acl.mdl.get_desc(desc, model_id))
    assert acl.mdl.get_dynamic_hw(desc, -1) == ({"hwCount": 2, "hw": [[8, 8], [16, 12]]}, 0)
    assert acl.mdl.get_input_dims(desc, 0)[0]["dims"] == [1, 3, -1, -1]
    inputs, gear_index = gear_io(io, desc, [3 * 16 * 12 * 4])
    # the sample passes the gear input's index where "-1" is documented: both work
    assert acl.mdl.get_dynamic_hw(desc, gear_index)[0]["hwCount"] == 2
    outputs = io([2 * 16 * 12 * 4])
    for h, w in ((16, 12), (8, 8)):
        x = np.random.default_rng(h).uniform(-1, 1, (1, 3, h, w)).astype(np.float32)
        inputs.write(0, x)
        ok(acl.mdl.set_dynamic_hw_size(model_id, inputs.dataset, gear_index, h, w), f"hw {h}x{w}")
        assert acl.mdl.get_cur_output_dims(desc, 0)[0]["dims"] == [1, 2, h, w]
        ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
        np.testing.assert_allclose(outputs.read(0, [1, 2, h, w]), conv.reference(x)[0], rtol=1e-4, atol=1e-5)
    assert acl.mdl.set_dynamic_hw_size(model_id, inputs.dataset, gear_index, 12, 16) == \
        ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    ok(acl.mdl.unload(model_id))


@needs_atc
def test_dynamic_dims(device, tmp_path, desc, io):
    dyn = M.linear(tmp_path, batch="N", name="linear_dims")
    om = build_om(dyn, tmp_path, "--input_shape=x:-1,4", "--input_format=ND", "--dynamic_dims=2;4")
    model_id = load(om)
    ok(acl.mdl.get_desc(desc, model_id))
    count, ret = acl.mdl.get_input_dynamic_gear_count(desc, -1)
    ok(ret)
    assert count == 2
    gears, ret = acl.mdl.get_input_dynamic_dims(desc, -1, count)
    ok(ret)
    assert [g["dims"] for g in gears] == [[2], [4]]
    inputs, gear_index = gear_io(io, desc, [4 * 4 * 4])
    outputs = io([4 * 3 * 4])
    x = np.ones((2, 4), np.float32)
    inputs.write(0, x)
    ok(acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, gear_index, {"dimCount": 1, "dims": [2]}))
    ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
    np.testing.assert_allclose(outputs.read(0, [2, 3]), dyn.reference(x)[0], rtol=1e-5)
    assert acl.mdl.set_input_dynamic_dims(model_id, inputs.dataset, gear_index,
                                          {"dimCount": 1, "dims": [3]}) == ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    ok(acl.mdl.unload(model_id))


@needs_atc
def test_static_om_equals_onnx(device, tmp_path, io):
    conv = M.conv_relu(tmp_path)
    om = build_om(conv, tmp_path, "--input_shape=x:1,3,8,8")
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    results = []
    for path in (om, conv.path):
        model_id = load(path)
        inputs, outputs = io([conv.input_bytes(0)]), io([conv.output_bytes(0)])
        inputs.write(0, x)
        ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset))
        results.append(outputs.read(0, [1, 2, 8, 8]))
        ok(acl.mdl.unload(model_id))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], conv.reference(x)[0], rtol=1e-4, atol=1e-5)


def _resident_bytes_of(path):
    """Resident bytes of this process's mappings of `path` (/proc/self/smaps);
    None when it has none."""
    total, inside, found = 0, False, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                inside = line.rstrip().endswith(str(path))
                found = found or inside
            elif inside and head and head[0] == "Rss:":
                total += int(head[1]) * 1024
    return total if found else None


@needs_atc
def test_embedding_rows_read_from_the_om_file(device, tmp_path, io):
    """A Gather from a large table in an .om loaded from its file reads the rows
    from the file: results as from memory, and the table not resident."""
    emb = M.embedding(tmp_path)
    om = build_om(emb, tmp_path)
    ids = (np.arange(512, dtype=np.int64) * 32 + 5) % 16384  # a row in every 32 KiB of the table
    ids[100:140] = np.arange(7000, 7040)  # a run of consecutive rows
    ids[200:203] = 9
    ids[300:302] = [-1, -16384]  # from the end
    want = emb.reference(ids)[0]
    data = om.read_bytes()
    from_file = load(om)
    from_mem, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
    ok(ret, "load_from_mem")
    for model_id in (from_file, from_mem):
        inputs, outputs = io([ids.nbytes]), io([emb.output_bytes(0)])
        H.write_device(acl, inputs.ptrs[0], ids)
        ok(acl.mdl.execute(model_id, inputs.dataset, outputs.dataset), "execute")
        np.testing.assert_array_equal(outputs.read(0, want.shape), want)
    resident = _resident_bytes_of(om.resolve())
    assert resident is not None and resident < (1 << 20)  # through the mapping: 2-16 MiB
    ids[7] = 16384
    inputs = io([ids.nbytes])
    H.write_device(acl, inputs.ptrs[0], ids)
    assert acl.mdl.execute(from_file, inputs.dataset, io([emb.output_bytes(0)]).dataset) == 507011  # RT_MODEL_EXECUTE
    assert "index 16384 out of range" in acl.get_recent_err_msg()
    ok(acl.mdl.unload(from_file))
    ok(acl.mdl.unload(from_mem))
