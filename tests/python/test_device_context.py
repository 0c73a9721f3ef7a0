"""Devices and contexts (docs/runtime.md "Devices and contexts")."""
import threading

import numpy as np
import pytest

import acl
import acl_helpers as H


def in_thread(fn):
    """Runs fn() in a new threading.Thread and returns its result (or raises)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    if "error" in box:
        raise box["error"]
    return box["value"]


# ------------------------------------------------------------------- devices

def test_get_device_count(acl_env):
    assert acl.rt.get_device_count() == (H.DEFAULT_DEVICE_COUNT, H.ACL_SUCCESS)


def test_get_device_without_context(acl_env):
    result = acl.rt.get_device()
    assert isinstance(result, tuple) and len(result) == 2
    assert result[1] == H.ACL_ERROR_RT_CONTEXT_NULL


def test_set_device_and_get_device(acl_env):
    assert acl.rt.set_device(0) == H.ACL_SUCCESS
    assert acl.rt.get_device() == (0, H.ACL_SUCCESS)
    assert acl.rt.set_device(1) == H.ACL_SUCCESS
    assert acl.rt.get_device() == (1, H.ACL_SUCCESS)
    assert acl.rt.set_device(0) == H.ACL_SUCCESS
    assert acl.rt.get_device() == (0, H.ACL_SUCCESS)


@pytest.mark.parametrize("bad", [-1, 2, 64, 2 ** 31 - 1])
def test_set_device_bad_id(acl_env, bad):
    assert acl.rt.set_device(bad) == H.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.get_recent_err_msg()


def test_set_device_id_out_of_int32_raises(acl_env):
    with pytest.raises((TypeError, OverflowError)):
        acl.rt.set_device(2 ** 40)


def test_reset_device_reference_count(acl_env):
    assert acl.rt.set_device(0) == 0
    assert acl.rt.set_device(0) == 0
    assert acl.rt.reset_device(0) == 0
    # one reference left: the default context is still current and usable
    assert acl.rt.get_device() == (0, 0)
    ptr, ret = acl.rt.malloc(128, 0)
    assert ret == 0
    assert acl.rt.free(ptr) == 0
    assert acl.rt.reset_device(0) == 0
    # released: this thread has no current context any more
    assert acl.rt.get_device()[1] == H.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.get_context()[1] == H.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.malloc(128, 0)[1] == H.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.create_stream()[1] == H.ACL_ERROR_RT_CONTEXT_NULL
    # count already zero
    assert acl.rt.reset_device(0) == H.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.get_recent_err_msg()


def test_reset_device_never_set(acl_env):
    assert acl.rt.reset_device(1) == H.ACL_ERROR_RT_INVALID_DEVICEID


@pytest.mark.parametrize("bad", [-1, 2])
def test_reset_device_bad_id(acl_env, bad):
    assert acl.rt.reset_device(bad) == H.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.reset_device_force(bad) == H.ACL_ERROR_RT_INVALID_DEVICEID


def test_reset_device_destroys_default_context_streams(acl_env):
    assert acl.rt.set_device(0) == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_device(0) == 0
    assert acl.rt.destroy_stream(s) == H.ACL_ERROR_INVALID_PARAM


def test_reset_device_keeps_user_allocations(acl_env):
    # reset frees nothing the user allocated (it only reports it)
    assert acl.rt.set_device(0) == 0
    ptr, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_device(0) == 0
    assert acl.rt.free(ptr) == 0


def test_reset_device_force_ignores_count(acl_env):
    for _ in range(3):
        assert acl.rt.set_device(1) == 0
    assert acl.rt.reset_device_force(1) == 0
    assert acl.rt.get_device()[1] == H.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.reset_device(1) == H.ACL_ERROR_RT_INVALID_DEVICEID


def test_default_context_shared_by_threads(acl_env):
    assert acl.rt.set_device(0) == 0
    ctx, ret = acl.rt.get_context()
    assert ret == 0 and ctx != 0

    def other():
        before = acl.rt.get_context()[1]
        r = acl.rt.set_device(0)
        c = acl.rt.get_context()
        dev = acl.rt.get_device()
        acl.rt.reset_device(0)
        return before, r, c, dev

    before, r, (ctx2, ret2), dev = in_thread(other)
    assert before == H.ACL_ERROR_RT_CONTEXT_NULL  # a new thread has no context
    assert r == 0 and ret2 == 0
    assert ctx2 == ctx
    assert dev == (0, 0)


def test_default_contexts_differ_per_device(acl_env):
    assert acl.rt.set_device(0) == 0
    c0 = acl.rt.get_context()[0]
    assert acl.rt.set_device(1) == 0
    c1 = acl.rt.get_context()[0]
    assert c0 != 0 and c1 != 0 and c0 != c1


def test_synchronize_device(acl_env):
    assert acl.rt.synchronize_device() == H.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.set_device(0) == 0
    assert acl.rt.synchronize_device() == 0
    if hasattr(acl.rt, "synchronize_device_with_timeout"):
        assert acl.rt.synchronize_device_with_timeout(-1) == 0
        assert acl.rt.synchronize_device_with_timeout(100) == 0


def test_synchronize_device_waits_for_streams(device, dev_buf):
    size = 32 << 20
    ptr = dev_buf(size)
    streams = [acl.rt.create_stream()[0] for _ in range(2)]
    for i, s in enumerate(streams):
        assert acl.rt.memset_async(ptr + i * (size // 2), size // 2, 0x11 * (i + 1), size // 2, s) == 0
    assert acl.rt.synchronize_device() == 0
    for s in streams:
        assert acl.rt.stream_query(s) == (H.ACL_STREAM_STATUS_COMPLETE, 0)
    data = H.read_device(acl, ptr + size // 2 - 4, 8)
    assert data.tobytes() == b"\x11" * 4 + b"\x22" * 4
    for s in streams:
        assert acl.rt.destroy_stream(s) == 0


def test_set_ts_device(device):
    if not hasattr(acl.rt, "set_ts_device"):
        pytest.skip("acl.rt.set_ts_device is not bound")
    assert acl.rt.set_ts_device(0) == 0


# ------------------------------------------------------------- peer access

def test_device_can_access_peer(acl_env):
    assert acl.rt.device_can_access_peer(0, 1) == (1, 0)
    assert acl.rt.device_can_access_peer(1, 0) == (1, 0)
    can, ret = acl.rt.device_can_access_peer(0, 5)
    assert ret in (H.ACL_ERROR_RT_INVALID_DEVICEID, H.ACL_ERROR_INVALID_PARAM)
    can, ret = acl.rt.device_can_access_peer(0, 0)  # the two must differ
    assert ret != 0 or can == 0


def test_device_enable_disable_peer_access(device):
    assert acl.rt.device_enable_peer_access(1, 0) == 0
    assert acl.rt.device_disable_peer_access(1) == 0
    assert acl.rt.device_enable_peer_access(1, 1) == H.ACL_ERROR_INVALID_PARAM  # flags must be 0
    assert acl.rt.device_enable_peer_access(9, 0) != 0


# ------------------------------------------------------------------ contexts

def test_create_context_makes_it_current(acl_env):
    ctx, ret = acl.rt.create_context(1)
    assert ret == 0 and ctx != 0
    assert acl.rt.get_context() == (ctx, 0)
    assert acl.rt.get_device() == (1, 0)
    assert acl.rt.destroy_context(ctx) == 0


@pytest.mark.parametrize("bad", [-1, 2])
def test_create_context_bad_device(acl_env, bad):
    ctx, ret = acl.rt.create_context(bad)
    assert ret == H.ACL_ERROR_RT_INVALID_DEVICEID
    assert ctx == 0


def test_set_context_switches_device(acl_env):
    c0, ret = acl.rt.create_context(0)
    assert ret == 0
    c1, ret = acl.rt.create_context(1)
    assert ret == 0
    assert acl.rt.get_device() == (1, 0)
    assert acl.rt.set_context(c0) == 0
    assert acl.rt.get_context() == (c0, 0)
    assert acl.rt.get_device() == (0, 0)
    assert acl.rt.destroy_context(c1) == 0
    assert acl.rt.destroy_context(c0) == 0


def test_set_context_in_another_thread(acl_env):
    ctx, ret = acl.rt.create_context(1)
    assert ret == 0

    def other():
        return (acl.rt.get_device()[1], acl.rt.set_context(ctx),
                acl.rt.get_context(), acl.rt.get_device())

    before, set_ret, got_ctx, got_dev = in_thread(other)
    assert before == H.ACL_ERROR_RT_CONTEXT_NULL
    assert set_ret == 0
    assert got_ctx == (ctx, 0)
    assert got_dev == (1, 0)
    assert acl.rt.destroy_context(ctx) == 0


def test_destroy_context_twice_and_stale_use(acl_env):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.destroy_context(ctx) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_context(ctx) == H.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("bogus", [0, 0x1234, 2 ** 64 - 1])
def test_destroy_and_set_bogus_context(acl_env, bogus):
    assert acl.rt.destroy_context(bogus) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_context(bogus) == H.ACL_ERROR_INVALID_PARAM


def test_destroy_default_context_refused(device):
    ctx, ret = acl.rt.get_context()
    assert ret == 0
    assert acl.rt.destroy_context(ctx) == H.ACL_ERROR_INVALID_PARAM
    assert acl.get_recent_err_msg()
    # still alive and current
    assert acl.rt.get_context() == (ctx, 0)
    assert acl.rt.create_stream()[1] == 0


def test_destroy_context_destroys_its_streams(acl_env):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.destroy_stream(s) == H.ACL_ERROR_INVALID_PARAM


def test_explicit_context_survives_reset_of_default(acl_env):
    assert acl.rt.set_device(0) == 0
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_context(ctx) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_context(ctx) == 0


def test_default_context_after_explicit(acl_env):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    assert acl.rt.set_device(1) == 0
    default1, ret = acl.rt.get_context()
    assert ret == 0 and default1 != ctx
    assert acl.rt.get_device() == (1, 0)
    assert acl.rt.destroy_context(ctx) == 0


def test_reset_device_waits_for_pending_work(acl_env):
    assert acl.rt.set_device(0) == 0
    ctx, _ = acl.rt.get_context()
    s, ret = acl.rt.create_stream()
    assert ret == 0
    srv = H.CallbackServer(acl, ctx)
    try:
        assert srv.subscribe(s) == 0
        gate = H.Gate(acl, s)
        src = np.arange(4096, dtype=np.uint8)
        dst = np.zeros_like(src)
        assert acl.rt.memcpy_async(dst.ctypes.data, 4096, src.ctypes.data, 4096,
                                   H.ACL_MEMCPY_HOST_TO_HOST, s) == 0
        gate.wait_entered()
        threading.Timer(0.1, gate.open).start()
        assert acl.rt.reset_device(0) == 0
        assert gate.event.is_set()
        np.testing.assert_array_equal(dst, src)  # the queued copy ran before the reset returned
    finally:
        srv.stop()


def test_finalize_waits_for_pending_work(acl_env):
    assert acl.rt.set_device(0) == 0
    ctx, _ = acl.rt.get_context()
    s, ret = acl.rt.create_stream()
    assert ret == 0
    srv = H.CallbackServer(acl, ctx)
    try:
        assert srv.subscribe(s) == 0
        gate = H.Gate(acl, s)
        src = np.arange(4096, dtype=np.uint8)
        dst = np.zeros_like(src)
        assert acl.rt.memcpy_async(dst.ctypes.data, 4096, src.ctypes.data, 4096,
                                   H.ACL_MEMCPY_HOST_TO_HOST, s) == 0
        gate.wait_entered()
        threading.Timer(0.1, gate.open).start()
        assert acl.finalize() == 0
        assert gate.event.is_set()
        np.testing.assert_array_equal(dst, src)
    finally:
        srv.stop()
