"""Host callbacks: subscribe_report / launch_callback / process_report
(docs/runtime.md "Host callbacks", compat-notes §1.13)."""
import threading
import time

import numpy as np
import pytest

import acl
import acl_helpers as H

BLOCK, NO_BLOCK = H.ACL_CALLBACK_BLOCK, H.ACL_CALLBACK_NO_BLOCK


def test_callback_runs_in_subscribed_thread_with_data(device, stream, server):
    assert server.subscribe(stream) == 0
    seen = []
    payload = ["user", {"k": 1}, 42]

    def fn(data):
        seen.append((data, threading.get_ident()))

    assert acl.rt.launch_callback(fn, payload, BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert len(seen) == 1
    data, tid = seen[0]
    assert data is payload
    assert tid == server.tid


def test_callbacks_run_in_stream_order(device, stream, server):
    assert server.subscribe(stream) == 0
    order = []
    for i in range(20):
        assert acl.rt.launch_callback(order.append, i, BLOCK if i % 2 else NO_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert H.wait_until(lambda: len(order) == 20)
    assert order == list(range(20))


def test_callback_user_data_none_and_objects(device, stream, server):
    assert server.subscribe(stream) == 0
    got = []
    assert acl.rt.launch_callback(lambda d: got.append(d), None, BLOCK, stream) == 0
    obj = object()
    assert acl.rt.launch_callback(lambda d: got.append(d), obj, BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert got[0] is None and got[1] is obj


def test_block_callback_holds_later_tasks(device, stream, server, dev_buf):
    """BLOCK: the host buffer written by the callback is what the next copy sees."""
    assert server.subscribe(stream) == 0
    host = np.zeros(4096, np.uint8)
    d = dev_buf(4096)

    def produce(_):
        time.sleep(0.05)
        host[:] = 0x5D

    assert acl.rt.launch_callback(produce, None, BLOCK, stream) == 0
    assert acl.rt.memcpy_async(d, 4096, host.ctypes.data, 4096, H.ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert (H.read_device(acl, d, 4096) == 0x5D).all()


def test_no_block_callback_lets_stream_go_on(device, stream, server, dev_buf):
    assert server.subscribe(stream) == 0
    release = threading.Event()
    done = []

    def slow(_):
        release.wait(5)
        done.append(True)

    d = dev_buf(64)
    assert acl.rt.launch_callback(slow, None, NO_BLOCK, stream) == 0
    assert acl.rt.memset_async(d, 64, 0x21, 64, stream) == 0
    # the stream finishes while the callback is still waiting
    assert acl.rt.synchronize_stream_with_timeout(stream, 3000) == 0
    assert (H.read_device(acl, d, 64) == 0x21).all()
    assert done == []
    release.set()
    assert H.wait_until(lambda: done == [True])


def test_launch_callback_unsubscribed_stream(device, stream):
    assert acl.rt.launch_callback(lambda d: None, None, BLOCK, stream) == H.ACL_ERROR_RT_STREAM_NO_CB_REG
    assert acl.get_recent_err_msg()


def test_launch_callback_bad_block_type(device, stream, server):
    assert server.subscribe(stream) == 0
    for bad in (2, 7, -1):
        assert acl.rt.launch_callback(lambda d: None, None, bad, stream) == H.ACL_ERROR_INVALID_PARAM


def test_launch_callback_not_callable(device, stream, server):
    assert server.subscribe(stream) == 0
    with pytest.raises(TypeError) as exc:
        acl.rt.launch_callback(12, None, BLOCK, stream)
    assert "parameter must be callable" in str(exc.value)


def test_subscribe_twice_and_unsubscribe(device, stream, server, context):
    assert acl.rt.subscribe_report(server.tid, stream) == 0
    assert acl.rt.subscribe_report(server.tid, stream) == H.ACL_ERROR_RT_STREAM_SUBSCRIBE
    other = H.CallbackServer(acl, context)
    try:
        # one stream, one thread
        assert acl.rt.subscribe_report(other.tid, stream) == H.ACL_ERROR_RT_STREAM_SUBSCRIBE
        # not subscribed by that thread
        assert acl.rt.unsubscribe_report(other.tid, stream) == H.ACL_ERROR_RT_STREAM_SUBSCRIBE
    finally:
        other.stop()
    assert acl.rt.unsubscribe_report(server.tid, stream) == 0
    assert acl.rt.unsubscribe_report(server.tid, stream) == H.ACL_ERROR_RT_STREAM_SUBSCRIBE
    assert acl.rt.launch_callback(lambda d: None, None, BLOCK, stream) == H.ACL_ERROR_RT_STREAM_NO_CB_REG
    # resubscribe after unsubscribe works
    assert acl.rt.subscribe_report(server.tid, stream) == 0
    ran = []
    assert acl.rt.launch_callback(ran.append, 1, BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert ran == [1]
    assert acl.rt.unsubscribe_report(server.tid, stream) == 0


def test_subscribe_bogus_stream(device, server):
    assert acl.rt.subscribe_report(server.tid, 0xABC0) == H.ACL_ERROR_INVALID_PARAM


def test_one_thread_serves_many_streams(device, server):
    streams = [acl.rt.create_stream()[0] for _ in range(3)]
    for s in streams:
        assert server.subscribe(s) == 0
    seen = []
    for i, s in enumerate(streams):
        assert acl.rt.launch_callback(lambda d: seen.append((d, threading.get_ident())), i, BLOCK, s) == 0
    for s in streams:
        assert acl.rt.synchronize_stream(s) == 0
    assert sorted(seen) == [(i, server.tid) for i in range(3)]
    server.stop()
    for s in streams:
        assert acl.rt.destroy_stream(s) == 0


def test_default_stream_can_be_subscribed(device, server):
    assert server.subscribe(0) == 0
    seen = []
    assert acl.rt.launch_callback(seen.append, "default", BLOCK, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    assert seen == ["default"]


def test_process_report_timeout_and_bad_values(device):
    t0 = time.monotonic()
    assert acl.rt.process_report(30) == H.ACL_ERROR_RT_REPORT_TIMEOUT
    assert time.monotonic() - t0 >= 0.025
    assert acl.rt.process_report(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.process_report(-2) == H.ACL_ERROR_INVALID_PARAM


def test_process_report_in_calling_thread(device, stream):
    """The main thread subscribes itself and runs its callbacks."""
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, stream) == 0
    seen = []
    assert acl.rt.launch_callback(lambda d: seen.append((d, threading.get_ident())), "x", NO_BLOCK, stream) == 0
    assert acl.rt.process_report(2000) == 0
    assert seen == [("x", me)]
    assert acl.rt.process_report(20) == H.ACL_ERROR_RT_REPORT_TIMEOUT
    assert acl.rt.unsubscribe_report(me, stream) == 0


def test_callback_with_start_thread(device, stream, context):
    state = {"stop": False, "ident": None, "codes": set()}

    def loop(args):
        state["ident"] = threading.get_ident()
        state["ctx_before"] = acl.rt.get_context()[1]
        state["set_ctx"] = acl.rt.set_context(args)
        while not state["stop"]:
            state["codes"].add(acl.rt.process_report(20))

    tid, err = acl.util.start_thread(loop, context)
    assert err == 0
    try:
        assert H.wait_until(lambda: state["ident"] is not None)
        assert state["ident"] == tid
        assert acl.rt.subscribe_report(tid, stream) == 0
        ran = []
        for i in range(5):
            assert acl.rt.launch_callback(lambda d: ran.append((d, threading.get_ident())), i, BLOCK, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert ran == [(i, tid) for i in range(5)]
        assert acl.rt.unsubscribe_report(tid, stream) == 0
    finally:
        state["stop"] = True
        assert acl.util.stop_thread(tid) == 0
    # a thread from start_thread has no current context until set_context
    assert state["ctx_before"] == H.ACL_ERROR_RT_CONTEXT_NULL
    assert state["set_ctx"] == 0
    assert H.ACL_ERROR_RT_REPORT_TIMEOUT in state["codes"]


def test_exception_in_callback_is_not_fatal(device, stream, server, capfd):
    assert server.subscribe(stream) == 0
    ran = []

    def boom(_):
        raise ValueError("callback failure on purpose")

    assert acl.rt.launch_callback(boom, None, BLOCK, stream) == 0
    assert acl.rt.launch_callback(ran.append, "after", BLOCK, stream) == 0
    assert acl.rt.launch_callback(boom, None, NO_BLOCK, stream) == 0
    assert acl.rt.launch_callback(ran.append, "later", BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert ran == ["after", "later"]
    err = capfd.readouterr().err
    assert "callback failure on purpose" in err or "ValueError" in err


def test_callback_references_are_dropped(device, stream, server):
    import weakref
    import gc

    class Payload:
        pass

    p = Payload()
    ref = weakref.ref(p)
    assert server.subscribe(stream) == 0
    assert acl.rt.launch_callback(lambda d: None, p, BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    del p
    assert H.wait_until(lambda: (gc.collect(), ref() is None)[1], timeout=2)


def test_many_callbacks_throughput(device, stream, server):
    assert server.subscribe(stream) == 0
    count = [0]

    def inc(_):
        count[0] += 1

    t0 = time.monotonic()
    for _ in range(500):
        assert acl.rt.launch_callback(inc, None, NO_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert H.wait_until(lambda: count[0] == 500, timeout=5)
    assert time.monotonic() - t0 < 5


def test_process_report_waits_forever_with_minus_one(device, stream):
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, stream) == 0
    seen = []
    # launch from another thread a little later; -1 must wait for it
    threading.Timer(0.1, lambda: acl.rt.launch_callback(seen.append, "late", NO_BLOCK, stream)).start()
    t0 = time.monotonic()
    assert acl.rt.process_report(-1) == 0
    assert time.monotonic() - t0 >= 0.05
    assert seen == ["late"]
    assert acl.rt.unsubscribe_report(me, stream) == 0
