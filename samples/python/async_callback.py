#!/usr/bin/env python3
"""Asynchronous work with host callbacks.

Two streams, each served by its own callback thread: one a threading.Thread
(subscribed by its .ident), one created with acl.util.start_thread (subscribed
by the id it returns). Both loop acl.rt.process_report(timeout).

  * ACL_CALLBACK_BLOCK: later tasks of the stream wait until the callback
    returns, so a callback can prepare host data for the next copy.
  * ACL_CALLBACK_NO_BLOCK: the stream goes on at once; the callback runs
    alongside it.

    PYTHONPATH=build/python python3 samples/python/async_callback.py
"""
import sys
import threading
import time

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1
ACL_ERROR_RT_REPORT_TIMEOUT = 507012

DEVICE_ID = 0
BATCHES = 8
BATCH_ELEMS = 4096
REPORT_TIMEOUT_MS = 50


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


class Server:
    """Loops process_report until stopped; counts what it ran."""

    def __init__(self, context, name):
        self.context = context
        self.name = name
        self.stop_flag = False
        self.ran = 0
        self.timeouts = 0
        self.ident = None

    def loop(self, _args=None):
        self.ident = threading.get_ident()
        check_ret(f"{self.name}: acl.rt.set_context", acl.rt.set_context(self.context))
        while not self.stop_flag:
            ret = acl.rt.process_report(REPORT_TIMEOUT_MS)
            if ret == ACL_SUCCESS:
                self.ran += 1
            elif ret == ACL_ERROR_RT_REPORT_TIMEOUT:
                self.timeouts += 1
            else:
                raise SampleError(f"{self.name}: process_report returned {ret}")


def run(ctx, cleanup):
    # --- two serving threads
    py_server = Server(ctx, "threading.Thread")
    py_thread = threading.Thread(target=py_server.loop, daemon=True)
    py_thread.start()
    py_tid = py_thread.ident

    acl_server = Server(ctx, "acl.util.start_thread")
    acl_tid, err = acl.util.start_thread(acl_server.loop, [])
    check_ret("acl.util.start_thread", err)

    def stop_servers():
        py_server.stop_flag = acl_server.stop_flag = True
        py_thread.join(5)
        return acl.util.stop_thread(acl_tid)     # raises RuntimeError if loop() raised
    cleanup.append(stop_servers)

    stream_a, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream (a)", ret)
    cleanup.append(lambda: acl.rt.destroy_stream(stream_a))
    stream_b, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream (b)", ret)
    cleanup.append(lambda: acl.rt.destroy_stream(stream_b))
    check_ret("acl.rt.subscribe_report (a)", acl.rt.subscribe_report(py_tid, stream_a))
    cleanup.append(lambda: acl.rt.unsubscribe_report(py_tid, stream_a))
    check_ret("acl.rt.subscribe_report (b)", acl.rt.subscribe_report(acl_tid, stream_b))
    cleanup.append(lambda: acl.rt.unsubscribe_report(acl_tid, stream_b))

    nbytes = BATCHES * BATCH_ELEMS * 4
    dev, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    cleanup.append(lambda: acl.rt.free(dev))

    # --- BLOCK on stream a: a callback prepares each batch, the next copy uploads it
    staging = np.zeros(BATCH_ELEMS, np.float32)
    prepared = []

    def prepare(batch):
        assert threading.get_ident() == py_tid
        time.sleep(0.002)
        staging[:] = batch * 10.0 + np.arange(BATCH_ELEMS, dtype=np.float32) / BATCH_ELEMS
        prepared.append(batch)

    for batch in range(BATCHES):
        check_ret("acl.rt.launch_callback BLOCK",
                  acl.rt.launch_callback(prepare, batch, ACL_CALLBACK_BLOCK, stream_a))
        check_ret("acl.rt.memcpy_async H2D",
                  acl.rt.memcpy_async(dev + batch * BATCH_ELEMS * 4, BATCH_ELEMS * 4, staging.ctypes.data,
                                      BATCH_ELEMS * 4, ACL_MEMCPY_HOST_TO_DEVICE, stream_a))
    check_ret("acl.rt.synchronize_stream (a)", acl.rt.synchronize_stream(stream_a))
    result = np.zeros((BATCHES, BATCH_ELEMS), np.float32)
    check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(result.ctypes.data, nbytes, dev, nbytes,
                                                 ACL_MEMCPY_DEVICE_TO_HOST))
    expected = (np.arange(BATCHES, dtype=np.float32)[:, None] * 10.0
                + np.arange(BATCH_ELEMS, dtype=np.float32)[None, :] / BATCH_ELEMS)
    if prepared != list(range(BATCHES)) or not np.array_equal(result, expected):
        raise SampleError("BLOCK callbacks did not hold the copies that follow them")
    print(f"  BLOCK    : {BATCHES} batches prepared by callbacks in thread {py_tid} "
          f"(threading.Thread) and uploaded in order, data verified")

    # --- NO_BLOCK on stream b: the stream does not wait for the callback
    release = threading.Event()
    notes = []

    def observer(tag):
        assert threading.get_ident() == acl_tid
        release.wait(5)
        notes.append(tag)

    check_ret("acl.rt.launch_callback NO_BLOCK",
              acl.rt.launch_callback(observer, "observed", ACL_CALLBACK_NO_BLOCK, stream_b))
    check_ret("acl.rt.memset_async", acl.rt.memset_async(dev, nbytes, 0, nbytes, stream_b))
    t0 = time.perf_counter()
    check_ret("acl.rt.synchronize_stream (b)", acl.rt.synchronize_stream(stream_b))
    sync_ms = 1000 * (time.perf_counter() - t0)
    if notes:
        raise SampleError("NO_BLOCK callback finished before it was released")
    release.set()
    deadline = time.monotonic() + 5
    while not notes and time.monotonic() < deadline:
        time.sleep(0.001)
    if notes != ["observed"]:
        raise SampleError("NO_BLOCK callback never completed")
    print(f"  NO_BLOCK : stream b finished in {sync_ms:.1f} ms while its callback was still "
          f"waiting in thread {acl_tid} (acl.util.start_thread)")

    # --- a failing callback is reported, not fatal
    survived = []
    check_ret("acl.rt.launch_callback (raises)",
              acl.rt.launch_callback(lambda _: 1 / 0, None, ACL_CALLBACK_BLOCK, stream_a))
    check_ret("acl.rt.launch_callback (after)",
              acl.rt.launch_callback(survived.append, "still running", ACL_CALLBACK_BLOCK, stream_a))
    check_ret("acl.rt.synchronize_stream (a)", acl.rt.synchronize_stream(stream_a))
    if survived != ["still running"]:
        raise SampleError("the callback after a failing one did not run")
    print("  errors   : an exception inside a callback was logged; later callbacks still ran")
    return py_server, acl_server


def main():
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"async_callback: FAILED: acl.init -> {check}", file=sys.stderr)
        return 1
    cleanup = []
    failure = None
    servers = ()
    try:
        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        cleanup.append(lambda: acl.rt.reset_device(DEVICE_ID))
        ctx, ret = acl.rt.get_context()
        check_ret("acl.rt.get_context", ret)
        servers = run(ctx, cleanup)
    except SampleError as exc:
        failure = str(exc)
    errors = []
    for undo in reversed(cleanup):
        try:
            ret = undo()
        except RuntimeError as exc:          # stop_thread reports an exception in the thread
            ret = str(exc)
        if ret != ACL_SUCCESS:
            errors.append(str(ret))
    acl.finalize()
    if failure or errors:
        print(f"async_callback: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    for s in servers:
        print(f"  {s.name:<22}: {s.ran} process_report call(s) ran callbacks, {s.timeouts} timed out")
    print("async_callback: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
