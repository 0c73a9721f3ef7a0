"""Argument errors, wrapped handles and error messages (pyacl-api.md §0.2,
docs/runtime.md "Errors and messages", "Python binding conventions")."""
import threading

import numpy as np
import pytest

import acl
import acl_helpers as H


def _noop(_):
    pass


# (qualified name, args) -> TypeError("<name> args parse failed")
PARSE_FAILURES = [
    ("acl.rt.memcpy", ("dst", 16, 0x1000, 16, 1)),
    ("acl.rt.memcpy", (0x1000, 16, 0x1000, 16)),
    ("acl.rt.memcpy", (0x1000, 16.0, 0x1000, 16, 1)),
    ("acl.rt.memcpy_async", (0x1000, 16, 0x1000, 16, 1)),
    ("acl.rt.memcpy2d", (0x1000, 16, 0x1000, 16, 8, 2)),
    ("acl.rt.memset", (None, 16, 0, 16)),
    ("acl.rt.memset_async", (0x1000, 16, 0, 16)),
    ("acl.rt.malloc", (100,)),
    ("acl.rt.malloc", ("100", 0)),
    ("acl.rt.malloc_host", ("100",)),
    ("acl.rt.free", ("ptr",)),
    ("acl.rt.free_host", ()),
    ("acl.rt.set_device", ("0",)),
    ("acl.rt.set_device", ()),
    ("acl.rt.reset_device", (None,)),
    ("acl.rt.create_context", ("0",)),
    ("acl.rt.set_context", ([1],)),
    ("acl.rt.destroy_stream", ("s",)),
    ("acl.rt.synchronize_stream", (1.5,)),
    ("acl.rt.synchronize_stream_with_timeout", (0,)),
    ("acl.rt.create_stream_with_config", (0,)),
    ("acl.rt.record_event", (1,)),
    ("acl.rt.stream_wait_event", ("s", 1)),
    ("acl.rt.event_elapsed_time", (1,)),
    ("acl.rt.get_mem_info", ("HBM",)),
    ("acl.rt.subscribe_report", ("tid", 0)),
    ("acl.rt.launch_callback", (_noop, None, "block", 0)),
    ("acl.rt.launch_callback", (_noop, None, 1)),
    ("acl.rt.process_report", ("100",)),
    ("acl.create_data_buffer", ("p", 1)),
    ("acl.destroy_data_buffer", ("b",)),
    ("acl.util.ptr_to_bytes", ("x", 1)),
    ("acl.util.stop_thread", ("tid",)),
    ("acl.init", (1,)),
    ("acl.data_type_size", ("float",)),
]


def _resolve(qualified):
    obj = acl
    for part in qualified.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name,args", PARSE_FAILURES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(PARSE_FAILURES)])
def test_args_parse_failed(name, args):
    fn = _resolve(name)
    with pytest.raises(TypeError) as exc:
        fn(*args)
    assert str(exc.value) == f"{name} args parse failed"


def test_init_none_type_error():
    with pytest.raises(TypeError):
        acl.init(None)


def test_keyword_arguments_rejected(acl_env):
    with pytest.raises(TypeError):
        acl.rt.set_device(device_id=0)
    with pytest.raises(TypeError):
        acl.rt.malloc(size=64, policy=0)


def test_parse_failure_does_not_disturb_state(device):
    with pytest.raises(TypeError):
        acl.rt.malloc("x", 0)
    ptr, ret = acl.rt.malloc(64, 0)
    assert ret == 0
    assert acl.rt.free(ptr) == 0


# ---------------------------------------------------------- wrapped handles

@pytest.mark.parametrize("value", [-1, -2, -64, -(2 ** 63)])
def test_negative_handles_wrap_and_return_codes(device, value):
    assert acl.rt.destroy_stream(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_stream(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_query(value)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_event(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.record_event(value, 0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.query_event_status(value)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_event(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_context(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_context(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(value) == H.ACL_ERROR_INVALID_PARAM
    assert acl.get_data_buffer_addr(value) == 0


def test_negative_size_wraps_to_huge(device):
    ptr, ret = acl.rt.malloc(-1, 0)
    assert ret != 0 and ptr == 0
    ptr, ret = acl.rt.malloc_host(-1)
    assert ret != 0 and ptr == 0


def test_negative_count_is_checked_against_dest_max(device):
    d, ret = acl.rt.malloc(64, 0)
    assert ret == 0
    host = np.zeros(64, np.uint8)
    assert acl.rt.memcpy(d, 64, host.ctypes.data, -1, H.ACL_MEMCPY_HOST_TO_DEVICE) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.memset(d, 64, 0, -1) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.free(d) == 0


# ----------------------------------------------------------- bad enum values

def test_bad_enums(device, dev_buf):
    d = dev_buf(64)
    host = np.zeros(64, np.uint8)
    assert acl.rt.memcpy(d, 64, host.ctypes.data, 64, 8) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.get_mem_info(999)[-1] != 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    srv = H.CallbackServer(acl, acl.rt.get_context()[0])
    try:
        assert srv.subscribe(s) == 0
        assert acl.rt.launch_callback(_noop, None, 3, s) == H.ACL_ERROR_INVALID_PARAM
    finally:
        srv.stop()
    assert acl.rt.destroy_stream(s) == 0


# ------------------------------------------------------ recent error message

def test_recent_err_msg_after_failure_then_cleared(device):
    assert acl.rt.free(0x123450) == H.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip()
    assert "aclrtFree" in msg  # names the call
    again = acl.get_recent_err_msg()
    assert again is None or again == ""


def test_recent_err_msg_names_values(device, dev_buf):
    d = dev_buf(1024)
    host = np.zeros(4096, np.uint8)
    assert acl.rt.memcpy(d, 1024, host.ctypes.data, 4096, H.ACL_MEMCPY_HOST_TO_DEVICE) == H.ACL_ERROR_RT_PARAM_INVALID
    msg = acl.get_recent_err_msg()
    assert "aclrtMemcpy" in msg and "4096" in msg and "1024" in msg


def test_recent_err_msg_keeps_only_latest(device):
    assert acl.rt.set_device(9) == H.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.free(0x123450) == H.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert "aclrtFree" in msg and "aclrtSetDevice" not in msg
    assert not acl.get_recent_err_msg()


def test_success_does_not_produce_message(device):
    assert not acl.get_recent_err_msg()
    ptr, ret = acl.rt.malloc(64, 0)
    assert ret == 0
    assert acl.rt.free(ptr) == 0
    assert not acl.get_recent_err_msg()


def test_recent_err_msg_per_thread(device):
    results = {}

    def worker():
        results["code"] = acl.rt.free(0x55550)
        results["msg"] = acl.get_recent_err_msg()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert results["code"] == H.ACL_ERROR_INVALID_PARAM
    assert results["msg"]
    assert not acl.get_recent_err_msg()


def test_messages_for_various_failures(device):
    failures = [
        lambda: acl.rt.set_device(5),
        lambda: acl.rt.malloc(0, 0)[1],
        lambda: acl.rt.destroy_stream(0x777770),
        lambda: acl.rt.create_context(-3)[1],
        lambda: acl.rt.process_report(0),
        lambda: acl.rt.synchronize_stream_with_timeout(0, 0),
    ]
    for call in failures:
        code = call()
        assert code != 0
        msg = acl.get_recent_err_msg()
        assert msg and msg.strip(), f"no message after a failure returning {code}"


def test_finalize_twice_message():
    assert acl.init() == 0
    assert acl.finalize() == 0
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE
    assert acl.get_recent_err_msg()


# ------------------------------------------------------------ return shapes

def _shape(result):
    if isinstance(result, tuple):
        return tuple(type(x).__name__ for x in result)
    return type(result).__name__


def test_return_shapes(device):
    s, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    ev2, _ = acl.rt.create_event()
    assert acl.rt.record_event(ev, s) == 0
    assert acl.rt.record_event(ev2, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    ctx, _ = acl.rt.get_context()
    cases = {
        "acl.get_version": (acl.get_version(), ("int", "int", "int", "int")),
        "acl.get_soc_name": (acl.get_soc_name(), "str"),
        "acl.data_type_size": (acl.data_type_size(0), "int"),
        "acl.float16_to_float": (acl.float16_to_float(0x3C00), "float"),
        "acl.float_to_float16": (acl.float_to_float16(1.0), "int"),
        "acl.app_log": (acl.app_log(0, "shape"), "NoneType"),
        "rt.get_run_mode": (acl.rt.get_run_mode(), ("int", "int")),
        "rt.get_device": (acl.rt.get_device(), ("int", "int")),
        "rt.get_device_count": (acl.rt.get_device_count(), ("int", "int")),
        "rt.get_context": (acl.rt.get_context(), ("int", "int")),
        "rt.create_stream_with_config": (acl.rt.create_stream_with_config(0, 0), ("int", "int")),
        "rt.stream_query": (acl.rt.stream_query(s), ("int", "int")),
        "rt.create_event_with_flag": (acl.rt.create_event_with_flag(1), ("int", "int")),
        "rt.create_event_ex_with_flag": (acl.rt.create_event_ex_with_flag(1), ("int", "int")),
        "rt.query_event": (acl.rt.query_event(ev), ("int", "int")),
        "rt.query_event_status": (acl.rt.query_event_status(ev), ("int", "int")),
        "rt.query_event_wait_status": (acl.rt.query_event_wait_status(ev), ("int", "int")),
        "rt.event_elapsed_time": (acl.rt.event_elapsed_time(ev, ev2), ("float", "int")),
        "rt.device_can_access_peer": (acl.rt.device_can_access_peer(0, 1), ("int", "int")),
        "rt.malloc_align32": (acl.rt.malloc_align32(64, 0), ("int", "int")),
        "rt.malloc_cached": (acl.rt.malloc_cached(64, 0), ("int", "int")),
        "rt.malloc_host": (acl.rt.malloc_host(64), ("int", "int")),
        "rt.get_mem_info": (acl.rt.get_mem_info(H.ACL_HBM_MEM), ("int", "int", "int")),
        "rt.synchronize_device": (acl.rt.synchronize_device(), "int"),
        "rt.set_ts_device": (acl.rt.set_ts_device(0), "int"),
        "rt.set_context": (acl.rt.set_context(ctx), "int"),
        "rt.process_report": (acl.rt.process_report(1), "int"),
        "acl.create_data_buffer": (acl.create_data_buffer(0, 0), "int"),
        "acl.get_data_buffer_addr": (acl.get_data_buffer_addr(0), "int"),
        "acl.get_data_buffer_size_v2": (acl.get_data_buffer_size_v2(0), "int"),
    }
    bad = {name: (_shape(got), want) for name, (got, want) in cases.items() if _shape(got) != want}
    assert not bad, bad
    # the code is last, and a success code is 0
    for name in ("rt.get_device", "rt.get_mem_info", "acl.get_version", "rt.event_elapsed_time"):
        assert cases[name][0][-1] == 0, name


def test_failure_keeps_the_tuple_shape(acl_env):
    for call in (acl.rt.create_stream, acl.rt.get_context, acl.rt.get_device):
        value, ret = call()
        assert ret != 0 and value == 0
    free, total, ret = acl.rt.get_mem_info(H.ACL_HBM_MEM)
    assert ret == H.ACL_ERROR_RT_CONTEXT_NULL and (free, total) == (0, 0)
    ms, ret = acl.rt.event_elapsed_time(0x1000, 0x2000)
    assert ret != 0 and isinstance(ms, float)
