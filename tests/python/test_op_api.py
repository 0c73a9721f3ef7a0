"""acl.op (spec §4.4): every function, its argument conventions (§0.2), bad
input, stream ordering, handles, the op cache and the dynamic-shape flow."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import acl
import acl_helpers as H
from op_util import A, make_attr, run_op

ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64 = 0, 1, 3, 9
ACL_DT_UNDEFINED = -1
ACL_FORMAT_ND = 2
H2D, D2H = 1, 2
ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
ACL_ERROR_OP_NOT_FOUND = 100024
ACL_ERROR_OP_LOAD_FAILED = 100025
ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
ACL_ERROR_API_NOT_SUPPORT = 200001

SPEC_FUNCTIONS = [
    "set_model_dir", "load", "create_attr", "destroy_attr", "set_attr_bool", "set_attr_int", "set_attr_float",
    "set_attr_string", "set_attr_data_type", "set_attr_list_data_type", "set_attr_list_bool", "set_attr_list_int",
    "set_attr_list_float", "set_attr_list_string", "set_attr_list_list_int", "execute", "execute_v2",
    "create_handle", "destroy_handle", "execute_with_handle", "cast", "create_handle_for_cast", "infer_shape",
    "update_params", "set_max_op_queue_num", "register_compile_func", "unregister_compile_func", "create_kernel",
    "set_kernel_args", "set_kernel_workspace_sizes", "start_dump_args", "stop_dump_args",
]
EXTENSIONS = ["compile", "compile_and_execute", "compile_and_execute_v2", "set_compile_flag"]


def registered(op_type):
    d = acl.create_tensor_desc(ACL_FLOAT, [4], ACL_FORMAT_ND)
    o = acl.create_tensor_desc(ACL_FLOAT, [4], ACL_FORMAT_ND)
    try:
        return acl.op.infer_shape(op_type, [d], [], 1, [o], 0) != ACL_ERROR_OP_NOT_FOUND
    finally:
        acl.destroy_tensor_desc(d)
        acl.destroy_tensor_desc(o)


class Tensors:
    """Descs, device buffers and data buffers, released at the end."""

    def __init__(self):
        self.descs, self.bufs, self.devs = [], [], []

    def desc(self, dtype, dims):
        d = acl.create_tensor_desc(dtype, list(dims), ACL_FORMAT_ND)
        assert d != 0
        self.descs.append(d)
        return d

    def dev(self, array=None, nbytes=None):
        nbytes = array.nbytes if array is not None else nbytes
        p, ret = acl.rt.malloc(max(nbytes, 1), 0)
        assert ret == 0
        self.devs.append(p)
        if array is not None and nbytes:
            host = np.ascontiguousarray(array).tobytes()
            assert acl.rt.memcpy(p, nbytes, acl.util.bytes_to_ptr(host), nbytes, H2D) == 0
        b = acl.create_data_buffer(p, nbytes)
        self.bufs.append(b)
        return p, b

    def read(self, p, shape, dtype):
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        host = bytes(n)
        assert acl.rt.memcpy(acl.util.bytes_to_ptr(host), n, p, n, D2H) == 0
        return np.frombuffer(host, dtype=dtype).reshape(shape).copy()

    def release(self):
        for b in self.bufs:
            acl.destroy_data_buffer(b)
        for d in self.descs:
            acl.destroy_tensor_desc(d)
        for p in self.devs:
            acl.rt.free(p)


@pytest.fixture
def t(device):
    tensors = Tensors()
    yield tensors
    tensors.release()


def dims_of(desc):
    return [acl.get_tensor_desc_dim_v2(desc, k)[0] for k in range(acl.get_tensor_desc_num_dims(desc))]


def add_call(t, x1, x2, out_nbytes=None):
    d = t.desc(ACL_FLOAT, x1.shape)
    _, b1 = t.dev(x1)
    _, b2 = t.dev(x2)
    py, by = t.dev(nbytes=out_nbytes if out_nbytes is not None else x1.nbytes)
    return d, b1, b2, py, by


# ---- the module ----

def test_submodule_has_every_function():
    missing = [n for n in SPEC_FUNCTIONS + EXTENSIONS if not callable(getattr(acl.op, n, None))]
    assert missing == []
    assert [n for n in dir(acl.op) if n.isupper()] == []


# ---- attributes ----

def test_attr_setters_and_return_shapes(device):
    attr = acl.op.create_attr()
    assert isinstance(attr, int) and attr != 0
    try:
        assert acl.op.set_attr_bool(attr, "b", 1) == 0
        assert acl.op.set_attr_int(attr, "i", -3) == 0
        assert acl.op.set_attr_float(attr, "f", 0.5) == 0
        assert acl.op.set_attr_string(attr, "s", "SAME") == 0
        assert acl.op.set_attr_data_type(attr, "t", ACL_FLOAT16) == (attr, 0)
        assert acl.op.set_attr_list_data_type(attr, "lt", [ACL_FLOAT, ACL_INT32]) == (attr, 0)
        assert acl.op.set_attr_list_bool(attr, "lb", [1, 0]) == 0
        assert acl.op.set_attr_list_bool(attr, "lb2", np.array([1, 0], np.uint8)) == 0
        assert acl.op.set_attr_list_int(attr, "li", [1, 2, 3]) == 0
        assert acl.op.set_attr_list_int(attr, "li2", np.array([4, 5], np.int64)) == 0
        assert acl.op.set_attr_list_float(attr, "lf", [0.5, 1.5]) == 0
        assert acl.op.set_attr_list_float(attr, "lf2", np.array([2.5], np.float32)) == 0
        assert acl.op.set_attr_list_string(attr, "ls", ["a", "b"]) == 0
        assert acl.op.set_attr_list_list_int(attr, "ll", [[1, 2], np.array([3], np.int64), []]) == 0
        assert acl.op.set_attr_data_type(attr, "t", 999) == (attr, H.ACL_ERROR_INVALID_PARAM)
    finally:
        assert acl.op.destroy_attr(attr) is None
    assert acl.op.set_attr_int(attr, "i", 1) == H.ACL_ERROR_INVALID_PARAM  # destroyed
    assert acl.op.set_attr_int(0, "i", 1) == H.ACL_ERROR_INVALID_PARAM


def test_attr_argument_errors(device):
    attr = acl.op.create_attr()
    try:
        with pytest.raises(TypeError, match="acl.op.set_attr_int args parse failed"):
            acl.op.set_attr_int(attr, "i", "x")
        with pytest.raises(TypeError, match="acl.op.set_attr_bool args parse failed"):
            acl.op.set_attr_bool(attr, "b", 300)
        with pytest.raises(TypeError, match="argument 3 is not list"):
            acl.op.set_attr_list_int(attr, "li", (1, 2))
        with pytest.raises(TypeError, match="argument 3 is not list"):
            acl.op.set_attr_list_string(attr, "ls", "abc")
        with pytest.raises(ValueError):
            acl.op.set_attr_list_int(attr, "li", [1, "a"])
    finally:
        acl.op.destroy_attr(attr)


# ---- execution ----

def test_execute_v2_add(t, stream):
    x1 = np.arange(6, dtype=np.float32).reshape(2, 3)
    x2 = np.full((2, 3), 0.5, np.float32)
    d, b1, b2, py, by = add_call(t, x1, x2)
    assert acl.op.execute_v2("Add", [d, d], [b1, b2], [d], [by], 0, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(py, [2, 3], np.float32), x1 + x2)
    # The deprecated execute and the default stream (0).
    assert acl.op.execute("Add", [d, d], [b1, b1], [d], [by], 0, 0) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_device() == 0
    np.testing.assert_array_equal(t.read(py, [2, 3], np.float32), x1 + x1)


def test_run_op_helper_flow(device):
    """op_util.run_op: infer_shape -> allocate -> execute_v2 -> read output descs."""
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal(4).astype(np.float32)
    y, = run_op("Add", [a, b])
    np.testing.assert_array_equal(y, a + b)
    if registered("Relu"):
        y, = run_op("Relu", [a])
        np.testing.assert_array_equal(y, np.maximum(a, 0))
    y, = run_op("Cast", [a], {"dst_type": A.int(ACL_FLOAT16)}, out_dtypes=[np.float16])  # CANN: int
    np.testing.assert_array_equal(y, a.astype(np.float16))


def test_list_arguments(t, stream):
    x = np.ones(4, np.float32)
    d, b1, b2, py, by = add_call(t, x, x)
    with pytest.raises(TypeError, match="argument 2, 3, 4, or 5 is not list"):
        acl.op.execute_v2("Add", (d, d), [b1, b2], [d], [by], 0, stream)
    with pytest.raises(TypeError, match="argument 2, 3, 4, or 5 is not list"):
        acl.op.execute("Add", [d, d], [b1, b2], d, [by], 0, stream)
    with pytest.raises(TypeError, match="acl.op.execute_v2 args parse failed"):
        acl.op.execute_v2("Add", [d, d], [b1, b2], [d], [by], 0)
    with pytest.raises(TypeError, match="acl.op.execute_v2 args parse failed"):
        acl.op.execute_v2(None, [d, d], [b1, b2], [d], [by], 0, stream)
    # Desc lists shorter than the buffer lists: the missing descs read as NULL.
    assert acl.op.execute_v2("Add", [d], [b1, b2], [d], [by], 0, stream) == H.ACL_ERROR_INVALID_PARAM
    assert "input 1" in acl.get_recent_err_msg()


def test_bad_calls(t, stream):
    x = np.ones(4, np.float32)
    d, b1, b2, py, by = add_call(t, x, x)
    assert acl.op.execute_v2("Addd", [d, d], [b1, b2], [d], [by], 0, stream) == ACL_ERROR_OP_NOT_FOUND
    msg = acl.get_recent_err_msg()
    assert "'Addd'" in msg and "did you mean Add" in msg
    assert acl.op.execute_v2("Add", [d], [b1], [d], [by], 0, stream) == ACL_ERROR_OP_INPUT_NOT_MATCH
    di = t.desc(ACL_INT32, [4])
    ret = acl.op.execute_v2("Add", [d, di], [b1, b2], [d], [by], 0, stream)
    assert ret in (ACL_ERROR_OP_INPUT_NOT_MATCH, ACL_ERROR_UNSUPPORTED_DATA_TYPE), acl.get_recent_err_msg()
    assert acl.op.execute_v2("Add", [d, 12345], [b1, b2], [d], [by], 0, stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.op.execute_v2("Add", [d, d], [b1, b2], [d], [by], 12345, stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_stream(stream) == 0


def test_wrong_attr_kind_and_missing_attr(t, stream):
    x = np.ones(2, np.float32)
    d = t.desc(ACL_FLOAT, [2])
    dh = t.desc(ACL_FLOAT16, [2])
    _, bx = t.dev(x)
    _, bh = t.dev(nbytes=4)
    attr = make_attr({"dst_type": A.str("float16")})
    try:
        assert acl.op.execute_v2("Cast", [d], [bx], [dh], [bh], attr, stream) == ACL_ERROR_OP_ATTR_NOT_MATCH
        assert "dst_type" in acl.get_recent_err_msg()
    finally:
        acl.op.destroy_attr(attr)
    # Adds (catalog_math) requires its float attribute "value".
    if not registered("Adds"):
        pytest.skip("Adds (an op with a required attribute) is not in the catalogue yet")
    _, bo = t.dev(nbytes=8)
    assert acl.op.execute_v2("Adds", [d], [bx], [d], [bo], 0, stream) == ACL_ERROR_OP_ATTR_NOT_MATCH
    assert "value" in acl.get_recent_err_msg()
    y, = run_op("Adds", [x], {"value": A.float(2.5)})
    np.testing.assert_array_equal(y, x + 2.5)


def test_output_buffer_too_small_writes_nothing(t, stream):
    x = np.arange(4, dtype=np.float32)
    d, b1, b2, _, _ = add_call(t, x, x)
    sentinel = np.full(3, -7, np.float32)
    ps, bs = t.dev(sentinel)
    assert acl.op.execute_v2("Add", [d, d], [b1, b2], [d], [bs], 0, stream) == ACL_ERROR_OP_OUTPUT_NOT_MATCH
    msg = acl.get_recent_err_msg()
    assert "16 bytes" in msg and "12 bytes" in msg
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(ps, [3], np.float32), sentinel)
    _, bo = t.dev(nbytes=16)
    assert acl.op.execute_v2("Add", [d, d], [b1, bs], [d], [bo], 0, stream) == ACL_ERROR_OP_INPUT_NOT_MATCH


def test_calls_before_init():
    d = acl.create_tensor_desc(ACL_FLOAT, [1], ACL_FORMAT_ND)
    try:
        assert acl.op.execute_v2("Add", [d, d], [0, 0], [d], [0], 0, 0) == H.ACL_ERROR_UNINITIALIZE
        assert acl.op.create_handle("Add", [d, d], [d], 0) == (0, H.ACL_ERROR_UNINITIALIZE)
        assert acl.op.infer_shape("Add", [d, d], [], 1, [d], 0) == H.ACL_ERROR_UNINITIALIZE
    finally:
        acl.destroy_tensor_desc(d)


def test_async_ordering_and_gil(t, stream):
    """Ops run in stream order; execute_v2 releases the GIL (another thread runs meanwhile)."""
    x = np.arange(1, 5, dtype=np.float32)
    d, b1, _, py, by = add_call(t, x, x)
    pz, bz = t.dev(nbytes=16)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.0005)

    th = threading.Thread(target=ticker)
    th.start()
    try:
        for _ in range(50):
            assert acl.op.execute_v2("Add", [d, d], [b1, b1], [d], [by], 0, stream) == 0  # y = 2x
            assert acl.op.execute_v2("Add", [d, d], [by, b1], [d], [bz], 0, stream) == 0  # z = y + x
    finally:
        stop.set()
        th.join()
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(pz, [4], np.float32), 3 * x)
    assert ticks


def test_handles(t, stream):
    x = np.array([1, 2, 3], np.float32)
    d, b1, _, py, by = add_call(t, x, x)
    handle, ret = acl.op.create_handle("Add", [d, d], [d], 0)
    assert ret == 0 and handle != 0, acl.get_recent_err_msg()
    try:
        assert acl.op.execute_with_handle(handle, [b1, b1], [by], stream) == 0
        assert acl.op.execute_with_handle(handle, [by, b1], [by], stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_array_equal(t.read(py, [3], np.float32), 3 * x)
        assert acl.op.execute_with_handle(handle, [b1], [by], stream) == ACL_ERROR_OP_INPUT_NOT_MATCH
        with pytest.raises(TypeError, match="is not list"):
            acl.op.execute_with_handle(handle, b1, [by], stream)
    finally:
        assert acl.op.destroy_handle(handle) is None
    assert acl.op.execute_with_handle(handle, [b1, b1], [by], stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.op.execute_with_handle(0, [b1, b1], [by], stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.op.create_handle("Nope", [d, d], [d], 0)[1] == ACL_ERROR_OP_NOT_FOUND


def test_cast_and_handle_for_cast(t, stream):
    x = np.array([0.5, -3.25, 100.0], np.float32)
    src = t.desc(ACL_FLOAT, [3])
    dst = t.desc(ACL_FLOAT16, [3])
    _, bx = t.dev(x)
    py, by = t.dev(nbytes=6)
    assert acl.op.cast(src, bx, dst, by, 0, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(py, [3], np.float16), x.astype(np.float16))
    handle, ret = acl.op.create_handle_for_cast(src, dst, 1)
    assert ret == 0, acl.get_recent_err_msg()
    try:
        pz, bz = t.dev(nbytes=6)
        assert acl.op.execute_with_handle(handle, [bx], [bz], stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_array_equal(t.read(pz, [3], np.float16), x.astype(np.float16))
    finally:
        acl.op.destroy_handle(handle)
    with pytest.raises(TypeError, match="acl.op.cast args parse failed"):
        acl.op.cast(src, bx, dst, by, 0)


def test_infer_shape_fills_output_descs(t):
    a = t.desc(ACL_FLOAT, [2, 1, 3])
    b = t.desc(ACL_FLOAT, [4, 1])
    out = t.desc(ACL_DT_UNDEFINED, [])
    assert acl.op.infer_shape("Add", [a, b], [], 1, [out], 0) == 0, acl.get_recent_err_msg()
    assert acl.get_tensor_desc_type(out) == ACL_FLOAT
    assert dims_of(out) == [2, 4, 3]
    with pytest.raises(TypeError, match="args parse failed"):
        acl.op.infer_shape("Add", [a, b], [], [out], 0)


def test_update_params_compile_and_flags(t, stream):
    d = t.desc(ACL_FLOAT, [5])
    assert acl.op.update_params("Add", [d, d], [d], 0) == 0, acl.get_recent_err_msg()
    assert acl.op.compile("Add", [d, d], [d], 0, 0, 0, None) == 0, acl.get_recent_err_msg()
    assert acl.op.compile("Add", [d, d], [d], 0, 9, 0, None) == H.ACL_ERROR_INVALID_PARAM
    x = np.arange(5, dtype=np.float32)
    _, bx = t.dev(x)
    py, by = t.dev(nbytes=20)
    assert acl.op.compile_and_execute("Add", [d, d], [bx, bx], [d], [by], 0, 0, 0, None, stream) == 0
    assert acl.op.compile_and_execute_v2("Add", [d, d], [by, bx], [d], [by], 0, 1, 1, None, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(py, [5], np.float32), 3 * x)
    assert acl.op.set_compile_flag(1) == 0
    assert acl.op.set_compile_flag(0) == 0
    assert acl.op.set_compile_flag(5) == H.ACL_ERROR_INVALID_PARAM


WARM_CALLS_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import acl
assert acl.init() == 0 and acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
desc = acl.create_tensor_desc(0, [37], 2)
ptr, _ = acl.rt.malloc(37 * 4, 0)
buf = acl.create_data_buffer(ptr, 37 * 4)
for _ in range(51):
    assert acl.op.execute_v2("Add", [desc, desc], [buf, buf], [desc], [buf], 0, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
acl.destroy_data_buffer(buf)
acl.rt.free(ptr)
acl.destroy_tensor_desc(desc)
acl.rt.destroy_stream(stream)
acl.rt.reset_device(0)
assert acl.finalize() == 0
"""


def test_warm_calls_hit_the_cache():
    # One compile, then hits: the cache's own account, logged at aclFinalize.
    env = dict(os.environ, OPENACL_LOG="info")
    proc = subprocess.run([sys.executable, "-c", WARM_CALLS_SCRIPT, str(H.python_dir())], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "acl.op: 50 call(s) hit the compiled-op cache, 1 compiled, 1 cached at aclFinalize" in proc.stderr, \
        proc.stderr


def test_max_op_queue_num(t, stream):
    assert acl.op.set_max_op_queue_num(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.op.set_max_op_queue_num(1) == 0
    try:
        for n in (2, 3, 2, 3):
            x = np.arange(n, dtype=np.float32)
            d, b1, _, py, by = add_call(t, x, x)
            assert acl.op.execute_v2("Add", [d, d], [b1, b1], [d], [by], 0, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            np.testing.assert_array_equal(t.read(py, [n], np.float32), 2 * x)
    finally:
        assert acl.op.set_max_op_queue_num(20000) == 0


def test_dynamic_shape_flow_data_dependent(device):
    """infer_shape -> upper bound -> execute_v2 -> output desc dims, with an op
    whose output shape depends on the data."""
    if not registered("NonZero"):
        pytest.skip("NonZero is not in the op catalogue yet (another helper adds it)")
    x = np.array([[0, 1.5, 0], [2, 0, 3]], np.float32)
    y, = run_op("NonZero", [x], out_dtypes=[np.int64])
    np.testing.assert_array_equal(y, np.argwhere(x).astype(np.int64))  # [n, rank]


def test_models_and_custom_kernels(device, tmp_path):
    assert acl.op.set_model_dir(str(tmp_path)) == 0
    assert acl.op.set_model_dir(str(tmp_path / "missing")) == H.ACL_ERROR_INVALID_PARAM
    blob = b"\x01" * 16
    assert acl.op.load(acl.util.bytes_to_ptr(blob), len(blob)) == ACL_ERROR_OP_LOAD_FAILED  # not an .om
    assert acl.op.register_compile_func("MyOp", lambda *a: 0) == ACL_ERROR_API_NOT_SUPPORT
    assert "NPU" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="parameter must be callable"):
        acl.op.register_compile_func("MyOp", 3)
    assert acl.op.unregister_compile_func("MyOp") == ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.create_kernel("MyOp", "k", "kern", acl.util.bytes_to_ptr(blob), len(blob), 1, 0) == \
        ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.set_kernel_args(1234, "k", 1, acl.util.bytes_to_ptr(blob), 4) == ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.set_kernel_workspace_sizes(1234, 0, 0) == ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.start_dump_args(1, str(tmp_path)) == ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.stop_dump_args(1) == ACL_ERROR_API_NOT_SUPPORT
    assert acl.op.stop_dump_args(2) == H.ACL_ERROR_INVALID_PARAM


def test_set_model_dir_loads_singleop_models(t, stream, tmp_path):
    """atc --singleop output: set_model_dir loads it; the op then runs from the cache."""
    import json
    import subprocess
    atc = H.build_dir() / "bin" / "atc"
    if not atc.exists():
        pytest.skip(f"{atc} not built")
    ops = [{"op": "Add",
            "input_desc": [{"format": "ND", "shape": [7], "type": "float32"},
                           {"format": "ND", "shape": [7], "type": "float32"}],
            "output_desc": [{"format": "ND", "shape": [7], "type": "float32"}]}]
    (tmp_path / "ops.json").write_text(json.dumps(ops))
    out = tmp_path / "op_models"
    out.mkdir()
    proc = subprocess.run([str(atc), f"--singleop={tmp_path / 'ops.json'}", f"--output={out}",
                           "--soc_version=Ascend310"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    models = sorted(out.glob("*.om"))
    assert models
    assert acl.op.set_model_dir(str(out)) == 0, acl.get_recent_err_msg()
    blob = models[0].read_bytes()
    assert acl.op.load(acl.util.bytes_to_ptr(blob), len(blob)) == 0, acl.get_recent_err_msg()
    x = np.arange(7, dtype=np.float32)
    d, b1, _, py, by = add_call(t, x, x)
    assert acl.op.execute_v2("Add", [d, d], [b1, b1], [d], [by], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(t.read(py, [7], np.float32), 2 * x)
    # Not a single-op model.
    (out / "junk.om").write_bytes(b"not a model")
    assert acl.op.set_model_dir(str(out)) == ACL_ERROR_OP_LOAD_FAILED
    assert "junk.om" in acl.get_recent_err_msg()


def test_infer_shape_reads_small_integer_inputs(device):
    # Reshape's shape and Tile's multiples given as ordinary device buffers
    # (not constants): infer_shape reads their values, as CANN's does, so the
    # output dims are exact rather than -1.
    from op_util import ACL_FORMAT_ND, acl_dtype, _device_copy
    x = np.arange(6, dtype=np.float32)
    shape = np.array([3, 2], dtype=np.int64)
    devs = [_device_copy(x), _device_copy(shape)]
    descs = [acl.create_tensor_desc(acl_dtype(x.dtype), [6], ACL_FORMAT_ND),
             acl.create_tensor_desc(acl_dtype(shape.dtype), [2], ACL_FORMAT_ND)]
    bufs = [acl.create_data_buffer(devs[0], x.nbytes), acl.create_data_buffer(devs[1], shape.nbytes)]
    out = acl.create_tensor_desc(-1, [], ACL_FORMAT_ND)
    try:
        assert acl.op.infer_shape("Reshape", descs, bufs, 1, [out], 0) == 0, acl.get_recent_err_msg()
        dims = [acl.get_tensor_desc_dim_v2(out, k)[0] for k in range(acl.get_tensor_desc_num_dims(out))]
        assert dims == [3, 2]
        # Without the buffer's value (an empty buffer record) the dims stay unknown.
        empty = acl.create_data_buffer(0, 0)
        try:
            assert acl.op.infer_shape("Reshape", descs, [bufs[0], empty], 1, [out], 0) == 0
            dims = [acl.get_tensor_desc_dim_v2(out, k)[0] for k in range(acl.get_tensor_desc_num_dims(out))]
            assert dims == [-1, -1]
        finally:
            acl.destroy_data_buffer(empty)
        y, = run_op("Reshape", [x, shape])
        np.testing.assert_array_equal(y, x.reshape(3, 2))
    finally:
        acl.destroy_tensor_desc(out)
        for d in descs:
            acl.destroy_tensor_desc(d)
        for b in bufs:
            acl.destroy_data_buffer(b)
        for p in devs:
            acl.rt.free(p)
