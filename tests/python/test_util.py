"""acl.util (pyacl-api.md §6, compat-notes §1.5, §1.9, §1.13)."""
import threading
import warnings

import numpy as np
import pytest

import acl
import acl_helpers as H

UTIL_FUNCTIONS = {"numpy_to_ptr", "numpy_contiguous_to_ptr", "ptr_to_numpy", "bytes_to_ptr",
                  "ptr_to_bytes", "start_thread", "stop_thread"}


def test_util_has_exactly_the_seven_functions():
    public = {name for name in dir(acl.util) if not name.startswith("_")}
    assert public == UTIL_FUNCTIONS
    assert "bytes_to_ptr" in dir(acl.util)
    for name in UTIL_FUNCTIONS:
        assert callable(getattr(acl.util, name))


# -------------------------------------------------------------- numpy_to_ptr

def test_numpy_to_ptr_address_and_warning():
    arr = np.arange(10, dtype=np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ptr = acl.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data
    assert len(rec) >= 1
    assert any(w.category is Warning for w in rec), [w.category for w in rec]
    assert any("numpy_to_ptr" in str(w.message) for w in rec)


def test_numpy_to_ptr_warns_every_call():
    arr = np.zeros(4, np.uint8)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        acl.util.numpy_to_ptr(arr)
        acl.util.numpy_to_ptr(arr)
    assert len(rec) >= 2


def test_numpy_to_ptr_non_contiguous_extra_warning():
    arr = np.arange(20, dtype=np.int32)[::2]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ptr = acl.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data
    assert len(rec) >= 2


def test_numpy_to_ptr_zero_d_bytes_array():
    arr = np.array(b"profiling-pipe")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptr = acl.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data and ptr != 0


@pytest.mark.parametrize("bad", [[1, 2, 3], b"abc", 5, None])
def test_numpy_to_ptr_rejects_non_arrays(bad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as exc:
            acl.util.numpy_to_ptr(bad)
    assert "needs an ndarray as argument" in str(exc.value)


def test_numpy_contiguous_to_ptr():
    arr = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2]
    assert not arr.flags["C_CONTIGUOUS"]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        result = acl.util.numpy_contiguous_to_ptr(arr)
    assert len(rec) >= 1
    assert isinstance(result, tuple) and len(result) == 2
    ptr, contiguous = result
    assert isinstance(contiguous, np.ndarray) and contiguous.flags["C_CONTIGUOUS"]
    assert ptr == contiguous.ctypes.data
    np.testing.assert_array_equal(contiguous, arr)


def test_numpy_contiguous_to_ptr_no_copy_when_contiguous():
    arr = np.arange(8, dtype=np.int16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptr, same = acl.util.numpy_contiguous_to_ptr(arr)
    assert ptr == arr.ctypes.data


# -------------------------------------------------------------- ptr_to_numpy

def test_ptr_to_numpy_is_a_zero_copy_view():
    src = np.arange(6, dtype=np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        view = acl.util.ptr_to_numpy(src.ctypes.data, (2, 3), H.NPY_FLOAT)
    assert len(rec) >= 1
    assert isinstance(view, np.ndarray)
    assert view.shape == (2, 3) and view.dtype == np.float32
    np.testing.assert_array_equal(view, src.reshape(2, 3))
    view[1, 2] = 100.0  # writable, shares memory
    assert src[5] == 100.0
    src[0] = -7.0
    assert view[0, 0] == -7.0
    assert view.ctypes.data == src.ctypes.data


@pytest.mark.parametrize("npy_type,dtype", [(H.NPY_BYTE, np.int8), (H.NPY_UBYTE, np.uint8),
                                             (H.NPY_INT, np.int32), (H.NPY_FLOAT, np.float32),
                                             (12, np.float64), (9, np.int64)])
def test_ptr_to_numpy_types(npy_type, dtype):
    src = np.zeros(64, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = acl.util.ptr_to_numpy(src.ctypes.data, (64 // np.dtype(dtype).itemsize,), npy_type)
    assert view.dtype == dtype


def test_ptr_to_numpy_bad_shapes():
    src = np.zeros(8, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            acl.util.ptr_to_numpy(src.ctypes.data, [2, 4], H.NPY_FLOAT)  # a list, not a tuple
        with pytest.raises(TypeError):
            acl.util.ptr_to_numpy(src.ctypes.data, (2, "4"), H.NPY_FLOAT)


# ------------------------------------------------------- bytes_to_ptr / back

def test_bytes_to_ptr_as_d2h_target(device):
    src = np.arange(64, dtype=np.float32)
    dptr, ret = acl.rt.malloc(src.nbytes, 0)
    assert ret == 0
    assert acl.rt.memcpy(dptr, src.nbytes, src.ctypes.data, src.nbytes, H.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    target = np.zeros(64, np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(target)
    assert isinstance(ptr, int) and ptr != 0
    assert acl.rt.memcpy(ptr, len(target), dptr, src.nbytes, H.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(np.frombuffer(target, dtype=np.float32), src)
    assert acl.rt.free(dptr) == 0


def test_bytes_to_ptr_as_h2d_source(device):
    payload = np.arange(32, dtype=np.int32).tobytes()
    ptr = acl.util.bytes_to_ptr(payload)
    assert ptr == acl.util.bytes_to_ptr(payload)  # stable, no copy
    dptr, ret = acl.rt.malloc(len(payload), 0)
    assert ret == 0
    assert acl.rt.memcpy(dptr, len(payload), ptr, len(payload), H.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    np.testing.assert_array_equal(H.read_device(acl, dptr, len(payload), np.int32), np.arange(32))
    assert acl.rt.free(dptr) == 0


@pytest.mark.parametrize("bad", ["text", bytearray(b"abc"), 12, np.zeros(3)])
def test_bytes_to_ptr_rejects_non_bytes(bad):
    with pytest.raises(ValueError) as exc:
        acl.util.bytes_to_ptr(bad)
    assert "needs an byte as argument" in str(exc.value)


def test_ptr_to_bytes_copies():
    arr = np.arange(16, dtype=np.uint8)
    data = acl.util.ptr_to_bytes(arr.ctypes.data, 16)
    assert isinstance(data, bytes) and data == arr.tobytes()
    arr[:] = 0
    assert data == bytes(range(16))  # a copy, not a view
    assert acl.util.ptr_to_bytes(arr.ctypes.data + 4, 4) == b"\x00" * 4
    np.testing.assert_array_equal(np.frombuffer(data, np.uint8), np.arange(16))


# ------------------------------------------------------ start / stop thread

def test_start_thread_ident_and_args(acl_env):
    seen = {}

    def fn(args):
        seen["args"] = args
        seen["ident"] = threading.get_ident()

    payload = [1, "two"]
    result = acl.util.start_thread(fn, payload)
    assert isinstance(result, tuple) and len(result) == 2
    tid, err = result
    assert err == 0 and tid != 0
    assert acl.util.stop_thread(tid) == 0
    assert seen["args"] is payload
    assert seen["ident"] == tid
    assert tid != threading.get_ident()


def test_start_thread_with_none_calls_fn_without_args(acl_env):
    seen = []

    def fn(*args):
        seen.append(args)

    tid, err = acl.util.start_thread(fn, None)
    assert err == 0
    assert acl.util.stop_thread(tid) == 0
    assert seen == [()]


def test_start_thread_runs_concurrently(acl_env):
    started = threading.Event()
    release = threading.Event()

    def fn(_):
        started.set()
        release.wait(5)

    tid, err = acl.util.start_thread(fn, 0)
    assert err == 0
    assert started.wait(5)  # the GIL is not held by start_thread's caller
    release.set()
    assert acl.util.stop_thread(tid) == 0


def test_stop_thread_reports_exception(acl_env):
    def fn(_):
        raise ValueError("bad thing")

    tid, err = acl.util.start_thread(fn, [])
    assert err == 0
    with pytest.raises(RuntimeError) as exc:
        acl.util.stop_thread(tid)
    assert str(exc.value) == "exception=ValueError,msg=thread call failed;"


def test_stop_thread_reports_other_exception_types(acl_env):
    def fn(_):
        raise KeyError("k")

    tid, err = acl.util.start_thread(fn, [])
    assert err == 0
    with pytest.raises(RuntimeError) as exc:
        acl.util.stop_thread(tid)
    assert str(exc.value) == "exception=KeyError,msg=thread call failed;"


def test_start_thread_not_callable(acl_env):
    with pytest.raises(TypeError) as exc:
        acl.util.start_thread("nope", None)
    assert "parameter must be callable" in str(exc.value)


def test_thread_from_start_thread_has_no_context(device, context):
    out = {}

    def fn(ctx):
        out["before"] = acl.rt.get_context()[1]
        out["set"] = acl.rt.set_context(ctx)
        out["device"] = acl.rt.get_device()
        p, r = acl.rt.malloc(64, 0)
        out["malloc"] = r
        if r == 0:
            acl.rt.free(p)

    tid, err = acl.util.start_thread(fn, context)
    assert err == 0
    assert acl.util.stop_thread(tid) == 0
    assert out == {"before": H.ACL_ERROR_RT_CONTEXT_NULL, "set": 0, "device": (0, 0), "malloc": 0}
