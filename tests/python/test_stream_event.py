"""Streams and events (docs/runtime.md "Streams", "Events")."""
import threading
import time

import numpy as np
import pytest

import acl
import acl_helpers as H


def new_stream():
    s, ret = acl.rt.create_stream()
    assert ret == 0 and s != 0
    return s


def new_event():
    ev, ret = acl.rt.create_event()
    assert ret == 0 and ev != 0
    return ev


# ------------------------------------------------------------------- streams

def test_create_destroy_stream(device):
    s, ret = acl.rt.create_stream()
    assert ret == 0 and s != 0
    s2 = new_stream()
    assert s2 != s
    assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_stream(s) == H.ACL_ERROR_INVALID_PARAM  # stale handle
    assert acl.rt.synchronize_stream(s) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_stream(s2) == 0


def test_create_stream_needs_context(acl_env):
    s, ret = acl.rt.create_stream()
    assert ret == H.ACL_ERROR_RT_CONTEXT_NULL
    assert s == 0


def test_destroy_default_stream_refused(device):
    assert acl.rt.destroy_stream(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.get_recent_err_msg()
    assert acl.rt.destroy_stream_force(0) == H.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("bogus", [0x4321, 2 ** 64 - 1])
def test_bogus_stream_handles(device, bogus):
    assert acl.rt.destroy_stream(bogus) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_stream_force(bogus) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_stream(bogus) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_query(bogus)[1] == H.ACL_ERROR_INVALID_PARAM
    ev = new_event()
    assert acl.rt.record_event(ev, bogus) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_wait_event(bogus, ev) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_event(ev) == 0


@pytest.mark.parametrize("priority,flag", [(0, 0), (7, 0), (3, H.ACL_STREAM_FAST_LAUNCH),
                                           (100, H.ACL_STREAM_FAST_SYNC),
                                           (2 ** 32 - 1, H.ACL_STREAM_FAST_LAUNCH | H.ACL_STREAM_FAST_SYNC)])
def test_create_stream_with_config(device, dev_buf, priority, flag):
    s, ret = acl.rt.create_stream_with_config(priority, flag)
    assert ret == 0 and s != 0
    ptr = dev_buf(256)
    assert acl.rt.memset_async(ptr, 256, 0x5A, 256, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert (H.read_device(acl, ptr, 256) == 0x5A).all()
    assert acl.rt.destroy_stream(s) == 0


def test_default_stream(device, dev_buf):
    ptr = dev_buf(1024)
    src = np.arange(256, dtype=np.float32)
    assert acl.rt.memcpy_async(ptr, 1024, src.ctypes.data, 1024, H.ACL_MEMCPY_HOST_TO_DEVICE, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    assert acl.rt.stream_query(0) == (H.ACL_STREAM_STATUS_COMPLETE, 0)
    np.testing.assert_array_equal(H.read_device(acl, ptr, 1024, np.float32), src)


def test_stream_runs_in_order(device, stream, dev_buf):
    n = 1 << 16
    a = dev_buf(n)
    b = dev_buf(n)
    host = np.zeros(n, np.uint8)
    for value in range(1, 21):
        assert acl.rt.memset_async(a, n, value, n, stream) == 0
        assert acl.rt.memcpy_async(b + value, n - value, a, 1, H.ACL_MEMCPY_DEVICE_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(host.ctypes.data, n, b, n, H.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert list(host[1:21]) == list(range(1, 21))


def test_stream_query_and_sync_timeout(device, stream, server, dev_buf):
    assert acl.rt.stream_query(stream) == (H.ACL_STREAM_STATUS_COMPLETE, 0)
    assert server.subscribe(stream) == 0
    gate = H.Gate(acl, stream)
    ptr = dev_buf(64)
    assert acl.rt.memset_async(ptr, 64, 7, 64, stream) == 0
    gate.wait_entered()
    assert acl.rt.stream_query(stream) == (H.ACL_STREAM_STATUS_NOT_READY, 0)
    t0 = time.monotonic()
    assert acl.rt.synchronize_stream_with_timeout(stream, 50) == H.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert time.monotonic() - t0 >= 0.04
    gate.open()
    assert acl.rt.synchronize_stream_with_timeout(stream, -1) == 0
    assert acl.rt.stream_query(stream) == (H.ACL_STREAM_STATUS_COMPLETE, 0)
    assert (H.read_device(acl, ptr, 64) == 7).all()
    assert acl.rt.synchronize_stream_with_timeout(stream, 1000) == 0


@pytest.mark.parametrize("timeout", [0, -2, -1000])
def test_sync_stream_timeout_bad_values(stream, timeout):
    assert acl.rt.synchronize_stream_with_timeout(stream, timeout) == H.ACL_ERROR_INVALID_PARAM


def test_synchronize_stream_releases_gil(device, stream, server):
    assert server.subscribe(stream) == 0
    gate = H.Gate(acl, stream)
    # open the gate from a Python thread while the main thread is blocked in sync
    threading.Timer(0.1, gate.open).start()
    assert acl.rt.synchronize_stream(stream) == 0
    assert gate.event.is_set()


def test_destroy_stream_waits_for_pending_work(device, server, dev_buf):
    s = new_stream()
    assert server.subscribe(s) == 0
    gate = H.Gate(acl, s)
    ptr = dev_buf(4096)
    assert acl.rt.memset_async(ptr, 4096, 0x3C, 4096, s) == 0
    threading.Timer(0.1, gate.open).start()
    assert acl.rt.destroy_stream(s) == 0
    assert (H.read_device(acl, ptr, 4096) == 0x3C).all()


def test_destroy_stream_force_drops_queued_tasks(device, server, dev_buf):
    s = new_stream()
    assert server.subscribe(s) == 0
    ptr = dev_buf(4096)
    H.write_device(acl, ptr, np.full(4096, 1, np.uint8))
    gate = H.Gate(acl, s)
    gate.wait_entered()
    assert acl.rt.memset_async(ptr, 4096, 0x77, 4096, s) == 0
    threading.Timer(0.1, gate.open).start()
    assert acl.rt.destroy_stream_force(s) == 0
    assert (H.read_device(acl, ptr, 4096) == 1).all()  # the memset never ran
    assert acl.rt.destroy_stream(s) == H.ACL_ERROR_INVALID_PARAM


def test_stream_failure_reported_once_at_sync(device, server):
    """A stream_wait_event that times out fails the stream with 107019; the next
    synchronize reports it, the one after that is clean."""
    s1 = new_stream()
    s2 = new_stream()
    assert server.subscribe(s1) == 0
    ev = new_event()
    gate = H.Gate(acl, s1)
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.set_op_wait_timeout(1) == 0
    try:
        assert acl.rt.stream_wait_event(s2, ev) == 0
        t0 = time.monotonic()
        ret = acl.rt.synchronize_stream(s2)
        waited = time.monotonic() - t0
    finally:
        assert acl.rt.set_op_wait_timeout(0) == 0
        gate.open()
    assert ret == H.ACL_ERROR_RT_WAIT_TIMEOUT
    assert acl.get_recent_err_msg()  # names the task that failed
    assert 0.5 <= waited < 5
    assert acl.rt.synchronize_stream(s2) == 0
    assert acl.rt.synchronize_stream(s1) == 0
    assert acl.rt.destroy_event(ev) == 0


# -------------------------------------------------------------------- events

def test_create_destroy_event(device):
    ev, ret = acl.rt.create_event()
    assert ret == 0 and ev != 0
    assert acl.rt.destroy_event(ev) == 0
    assert acl.rt.destroy_event(ev) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.query_event_status(ev)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_event(ev) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.record_event(ev, 0) == H.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("flag", [0, H.ACL_EVENT_SYNC, H.ACL_EVENT_TIME_LINE,
                                  H.ACL_EVENT_SYNC | H.ACL_EVENT_TIME_LINE])
def test_create_event_with_flag(device, flag):
    ev, ret = acl.rt.create_event_with_flag(flag)
    assert ret == 0 and ev != 0
    assert acl.rt.record_event(ev, 0) == 0
    assert acl.rt.synchronize_event(ev) == 0
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    assert acl.rt.destroy_event(ev) == 0


def test_create_event_ex_with_flag(device):
    if not hasattr(acl.rt, "create_event_ex_with_flag"):
        pytest.skip("acl.rt.create_event_ex_with_flag is not bound")
    ev, ret = acl.rt.create_event_ex_with_flag(H.ACL_EVENT_SYNC)
    assert ret == 0 and ev != 0
    assert acl.rt.record_event(ev, 0) == 0
    assert acl.rt.synchronize_event(ev) == 0
    assert acl.rt.destroy_event(ev) == 0


def test_event_never_recorded(device):
    ev = new_event()
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    assert acl.rt.query_event(ev) == (H.ACL_EVENT_STATUS_NOT_READY, 0)
    assert acl.rt.query_event_wait_status(ev) == (H.ACL_EVENT_WAIT_STATUS_NOT_READY, 0)
    t0 = time.monotonic()
    assert acl.rt.synchronize_event(ev) == 0  # returns at once
    assert acl.rt.synchronize_event_with_timeout(ev, 10) == 0
    assert time.monotonic() - t0 < 1
    assert acl.rt.destroy_event(ev) == 0


def test_event_record_complete_and_reset(device, stream):
    ev = new_event()
    assert acl.rt.record_event(ev, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    assert acl.rt.query_event(ev) == (H.ACL_EVENT_STATUS_COMPLETE, 0)
    assert acl.rt.query_event_wait_status(ev) == (H.ACL_EVENT_WAIT_STATUS_COMPLETE, 0)
    assert acl.rt.reset_event(ev, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    assert acl.rt.query_event(ev) == (H.ACL_EVENT_STATUS_NOT_READY, 0)
    assert acl.rt.destroy_event(ev) == 0


def test_event_pending_until_stream_reaches_it(device, stream, server):
    assert server.subscribe(stream) == 0
    ev = new_event()
    gate = H.Gate(acl, stream)
    assert acl.rt.record_event(ev, stream) == 0
    gate.wait_entered()
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    assert acl.rt.query_event(ev) == (H.ACL_EVENT_STATUS_NOT_READY, 0)
    t0 = time.monotonic()
    assert acl.rt.synchronize_event_with_timeout(ev, 50) == H.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    assert time.monotonic() - t0 >= 0.04
    threading.Timer(0.05, gate.open).start()
    assert acl.rt.synchronize_event(ev) == 0
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    assert acl.rt.destroy_event(ev) == 0


def test_rerecord_moves_event_to_newest_record(device, stream, server):
    assert server.subscribe(stream) == 0
    ev = new_event()
    assert acl.rt.record_event(ev, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(ev)[0] == H.ACL_EVENT_RECORDED_STATUS_COMPLETE
    gate = H.Gate(acl, stream)
    assert acl.rt.record_event(ev, stream) == 0
    gate.wait_entered()
    assert acl.rt.query_event_status(ev) == (H.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    gate.open()
    assert acl.rt.synchronize_event(ev) == 0
    assert acl.rt.query_event_status(ev)[0] == H.ACL_EVENT_RECORDED_STATUS_COMPLETE
    assert acl.rt.destroy_event(ev) == 0


def test_event_elapsed_time(device, stream, server):
    assert server.subscribe(stream) == 0
    start, end = new_event(), new_event()
    assert acl.rt.record_event(start, stream) == 0
    assert acl.rt.launch_callback(lambda _: time.sleep(0.05), None, H.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.record_event(end, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    result = acl.rt.event_elapsed_time(start, end)
    assert isinstance(result, tuple) and len(result) == 2
    ms, ret = result
    assert ret == 0
    assert isinstance(ms, float)
    assert 40.0 <= ms < 2000.0
    ms_rev, ret = acl.rt.event_elapsed_time(end, start)
    assert ret != 0 or ms_rev <= 0  # end before start: an error or a negative time
    for ev in (start, end):
        assert acl.rt.destroy_event(ev) == 0


def test_event_elapsed_time_errors(device, stream, server):
    a, b = new_event(), new_event()
    ms, ret = acl.rt.event_elapsed_time(a, b)
    assert ret == H.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID  # never recorded
    assert acl.rt.record_event(a, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.event_elapsed_time(a, b)[1] == H.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    # b recorded but not complete
    assert server.subscribe(stream) == 0
    gate = H.Gate(acl, stream)
    assert acl.rt.record_event(b, stream) == 0
    gate.wait_entered()
    assert acl.rt.event_elapsed_time(a, b)[1] == H.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    gate.open()
    assert acl.rt.synchronize_stream(stream) == 0
    ms, ret = acl.rt.event_elapsed_time(a, b)
    assert ret == 0 and ms >= 0.0
    assert acl.rt.event_elapsed_time(a, 0xBAD0)[1] == H.ACL_ERROR_INVALID_PARAM
    for ev in (a, b):
        assert acl.rt.destroy_event(ev) == 0


def test_stream_wait_event_orders_streams(device, server, dev_buf):
    producer, consumer = new_stream(), new_stream()
    assert server.subscribe(producer) == 0
    n = 1 << 20
    a, b = dev_buf(n), dev_buf(n)
    H.write_device(acl, a, np.zeros(n, np.uint8))
    ev = new_event()
    gate = H.Gate(acl, producer)
    assert acl.rt.memset_async(a, n, 0xC3, n, producer) == 0
    assert acl.rt.record_event(ev, producer) == 0
    assert acl.rt.stream_wait_event(consumer, ev) == 0
    assert acl.rt.memcpy_async(b, n, a, n, H.ACL_MEMCPY_DEVICE_TO_DEVICE, consumer) == 0
    gate.wait_entered()
    time.sleep(0.02)
    assert acl.rt.stream_query(consumer) == (H.ACL_STREAM_STATUS_NOT_READY, 0)
    gate.open()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert (H.read_device(acl, b, n) == 0xC3).all()
    assert acl.rt.destroy_event(ev) == 0
    server.stop()
    for s in (producer, consumer):
        assert acl.rt.destroy_stream(s) == 0


def test_stream_wait_event_never_recorded_does_not_wait(device, stream):
    ev = new_event()
    assert acl.rt.stream_wait_event(stream, ev) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 2000) == 0
    assert acl.rt.destroy_event(ev) == 0


def test_stream_wait_event_uses_record_current_at_call(device, server):
    s1, s2 = new_stream(), new_stream()
    ev = new_event()
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.synchronize_stream(s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0  # waits for the completed record
    assert server.subscribe(s1) == 0
    gate = H.Gate(acl, s1)
    assert acl.rt.record_event(ev, s1) == 0  # a newer record, pending
    gate.wait_entered()
    assert acl.rt.synchronize_stream_with_timeout(s2, 2000) == 0
    gate.open()
    assert acl.rt.synchronize_stream(s1) == 0
    assert acl.rt.destroy_event(ev) == 0
    server.stop()
    for s in (s1, s2):
        assert acl.rt.destroy_stream(s) == 0


def test_stream_wait_event_across_devices(acl_env):
    c0, ret = acl.rt.create_context(0)
    assert ret == 0
    s0 = new_stream()
    ev = new_event()
    c1, ret = acl.rt.create_context(1)
    assert ret == 0
    s1 = new_stream()
    assert acl.rt.set_context(c0) == 0
    srv = H.CallbackServer(acl, c0)
    gate = None
    try:
        assert srv.subscribe(s0) == 0
        gate = H.Gate(acl, s0)
        assert acl.rt.record_event(ev, s0) == 0
        assert acl.rt.set_context(c1) == 0
        assert acl.rt.stream_wait_event(s1, ev) == 0
        gate.wait_entered()
        assert acl.rt.synchronize_stream_with_timeout(s1, 50) == H.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        gate.open()
        assert acl.rt.synchronize_stream(s1) == 0
    finally:
        if gate is not None:
            gate.open()
        srv.stop()
    assert acl.rt.set_context(c0) == 0
    assert acl.rt.destroy_stream(s0) == 0
    assert acl.rt.destroy_event(ev) == 0
    assert acl.rt.destroy_context(c1) == 0
    assert acl.rt.destroy_context(c0) == 0


def test_set_op_wait_timeout_values(acl_env):
    assert acl.rt.set_op_wait_timeout(0) == 0
    assert acl.rt.set_op_wait_timeout(30) == 0
    assert acl.rt.set_op_wait_timeout(0) == 0
