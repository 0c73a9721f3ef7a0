#!/usr/bin/env python3
"""A walk through the pyACL runtime: one device, an explicit context, two
streams that hand data to each other through an event, a host callback served
by a thread from acl.util.start_thread, and an orderly teardown.

    PYTHONPATH=build/python python3 samples/python/runtime_walk.py

Exit status 0 when every call succeeded and the data came back intact.
"""
import sys
import threading
import time

import numpy as np

import acl

# pyACL exports no constants: programs define the ones they use.
ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_CALLBACK_BLOCK = 1
ACL_HBM_MEM = 1
ACL_HOST = 1
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
ACL_ERROR_RT_REPORT_TIMEOUT = 507012

DEVICE_ID = 0
ELEMENTS = 256 * 1024          # 1 MiB of float32
REPORT_TIMEOUT_MS = 100


class AclError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


class CallbackThread:
    """The thread that runs host callbacks: it loops acl.rt.process_report()
    until asked to stop, the way pyACL programs serve launch_callback."""

    def __init__(self, context):
        self.context = context
        self.exit_flag = False
        self.ident = None
        self.tid = None

    def loop(self, _args):
        self.ident = threading.get_ident()
        # a thread created by start_thread has no current context
        check_ret("acl.rt.set_context (callback thread)", acl.rt.set_context(self.context))
        while not self.exit_flag:
            ret = acl.rt.process_report(REPORT_TIMEOUT_MS)
            if ret not in (ACL_SUCCESS, ACL_ERROR_RT_REPORT_TIMEOUT):
                print(f"[callback thread] process_report returned {ret}")

    def start(self):
        self.tid, err = acl.util.start_thread(self.loop, [])
        check_ret("acl.util.start_thread", err)
        return self.tid

    def stop(self):
        self.exit_flag = True
        check_ret("acl.util.stop_thread", acl.util.stop_thread(self.tid))


def main():
    report = []
    res = {}        # what has been created, for teardown in reverse order
    t_begin = time.perf_counter()

    # ---- init, devices, context, streams
    mode, ret = acl.rt.get_run_mode()          # works before init
    check_ret("acl.rt.get_run_mode", ret)
    check_ret("acl.init", acl.init())
    res["init"] = True
    completed = False
    try:
        count, ret = acl.rt.get_device_count()
        check_ret("acl.rt.get_device_count", ret)
        report.append(f"run mode {'ACL_HOST' if mode == ACL_HOST else 'ACL_DEVICE'}, "
                      f"{count} device(s), SoC {acl.get_soc_name()}")

        check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
        res["device"] = DEVICE_ID
        context, ret = acl.rt.create_context(DEVICE_ID)
        check_ret("acl.rt.create_context", ret)
        res["context"] = context
        copy_stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream (copy)", ret)
        res["copy_stream"] = copy_stream
        work_stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream (work)", ret)
        res["work_stream"] = work_stream
        report.append(f"device {DEVICE_ID}: context 0x{context:x}, streams 0x{copy_stream:x} and "
                      f"0x{work_stream:x}")

        # ---- memory
        nbytes = ELEMENTS * 4
        free0, total, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
        check_ret("acl.rt.get_mem_info", ret)
        host_in, ret = acl.rt.malloc_host(nbytes)
        check_ret("acl.rt.malloc_host", ret)
        res["host_in"] = host_in
        dev_a, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc (a)", ret)
        res["dev_a"] = dev_a
        dev_b, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("acl.rt.malloc (b)", ret)
        res["dev_b"] = dev_b
        free1, _, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
        check_ret("acl.rt.get_mem_info", ret)

        # fill the pinned host buffer from numpy (host to host copy)
        source = np.linspace(-1.0, 1.0, ELEMENTS, dtype=np.float32)
        check_ret("acl.rt.memcpy (numpy -> pinned)",
                  acl.rt.memcpy(host_in, nbytes, source.ctypes.data, nbytes,
                                ACL_MEMCPY_HOST_TO_HOST))
        result = np.zeros(ELEMENTS, dtype=np.float32)

        # ---- events and the callback thread
        ev_start, ret = acl.rt.create_event()
        check_ret("acl.rt.create_event (start)", ret)
        res["ev_start"] = ev_start
        ev_copied, ret = acl.rt.create_event()
        check_ret("acl.rt.create_event (copied)", ret)
        res["ev_copied"] = ev_copied
        ev_end, ret = acl.rt.create_event()
        check_ret("acl.rt.create_event (end)", ret)
        res["ev_end"] = ev_end

        cb_thread = CallbackThread(context)
        tid = cb_thread.start()
        res["cb_thread"] = cb_thread
        check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(tid, work_stream))
        res["subscribed"] = (tid, work_stream)

        callback_log = []

        def on_result_ready(user_data):
            # runs in the callback thread, in stream order, after the D2H copy
            user_data["thread"] = threading.get_ident()
            user_data["first"] = float(result[0])
            user_data["last"] = float(result[-1])
            callback_log.append(user_data)

        # ---- the work: copy stream H2D then D2D, then the work stream waits and reads back
        check_ret("acl.rt.record_event (start)", acl.rt.record_event(ev_start, copy_stream))
        check_ret("acl.rt.memcpy_async (H2D)",
                  acl.rt.memcpy_async(dev_a, nbytes, host_in, nbytes, ACL_MEMCPY_HOST_TO_DEVICE,
                                      copy_stream))
        check_ret("acl.rt.memcpy_async (D2D)",
                  acl.rt.memcpy_async(dev_b, nbytes, dev_a, nbytes, ACL_MEMCPY_DEVICE_TO_DEVICE,
                                      copy_stream))
        check_ret("acl.rt.record_event (copied)", acl.rt.record_event(ev_copied, copy_stream))
        check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(work_stream, ev_copied))
        check_ret("acl.rt.memcpy_async (D2H)",
                  acl.rt.memcpy_async(result.ctypes.data, nbytes, dev_b, nbytes,
                                      ACL_MEMCPY_DEVICE_TO_HOST, work_stream))
        check_ret("acl.rt.launch_callback",
                  acl.rt.launch_callback(on_result_ready, {"tag": "result-ready"},
                                         ACL_CALLBACK_BLOCK, work_stream))
        check_ret("acl.rt.record_event (end)", acl.rt.record_event(ev_end, work_stream))
        check_ret("acl.rt.synchronize_stream (work)", acl.rt.synchronize_stream(work_stream))
        check_ret("acl.rt.synchronize_stream (copy)", acl.rt.synchronize_stream(copy_stream))

        status, ret = acl.rt.query_event_status(ev_end)
        check_ret("acl.rt.query_event_status", ret)
        elapsed_ms, ret = acl.rt.event_elapsed_time(ev_start, ev_end)
        check_ret("acl.rt.event_elapsed_time", ret)

        # ---- check what came back
        if not np.array_equal(result, source):
            raise AclError("data mismatch after H2D -> D2D -> D2H")
        if len(callback_log) != 1:
            raise AclError(f"callback ran {len(callback_log)} times, expected once")
        cb = callback_log[0]
        if cb["thread"] != tid or cb["thread"] != cb_thread.ident:
            raise AclError("callback did not run in the subscribed thread")
        if (cb["first"], cb["last"]) != (float(source[0]), float(source[-1])):
            raise AclError("callback ran before the D2H copy finished")
        if status != ACL_EVENT_RECORDED_STATUS_COMPLETE:
            raise AclError(f"end event status {status}, expected complete")

        report.append(f"device memory: total {total} bytes, {free0 - free1} bytes taken by two "
                      f"mallocs of {nbytes}")
        report.append(f"copied {nbytes} bytes H2D -> D2D -> D2H across two streams, data verified")
        report.append(f"event wait ordered the streams; elapsed start->end {elapsed_ms:.3f} ms")
        report.append(f"callback ran once in thread {tid} (acl.util.start_thread), "
                      f"saw result[0]={cb['first']:.3f}, result[-1]={cb['last']:.3f}")
        completed = True
    finally:
        try:
            teardown(res)
        except AclError as exc:
            if completed:
                raise
            print(f"runtime_walk: also during teardown: {exc}", file=sys.stderr)

    report.append(f"teardown complete, total {1000 * (time.perf_counter() - t_begin):.1f} ms")
    print("runtime_walk (Python)")
    for line in report:
        print("  " + line)
    print("runtime_walk: OK")


def teardown(res):
    """Releases in the reverse order of creation; reports, never hides, failures."""
    errors = []

    def step(what, ret):
        if ret != ACL_SUCCESS:
            errors.append(f"{what} -> {ret}")

    if "subscribed" in res:
        step("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(*res["subscribed"]))
    if "cb_thread" in res:
        try:
            res["cb_thread"].stop()
        except (AclError, RuntimeError) as exc:
            errors.append(str(exc))
    for name in ("ev_end", "ev_copied", "ev_start"):
        if name in res:
            step(f"acl.rt.destroy_event ({name})", acl.rt.destroy_event(res[name]))
    for name in ("dev_b", "dev_a"):
        if name in res:
            step(f"acl.rt.free ({name})", acl.rt.free(res[name]))
    if "host_in" in res:
        step("acl.rt.free_host", acl.rt.free_host(res["host_in"]))
    for name in ("work_stream", "copy_stream"):
        if name in res:
            step(f"acl.rt.destroy_stream ({name})", acl.rt.destroy_stream(res[name]))
    if "context" in res:
        step("acl.rt.destroy_context", acl.rt.destroy_context(res["context"]))
    if "device" in res:
        step("acl.rt.reset_device", acl.rt.reset_device(res["device"]))
    if "init" in res:
        step("acl.finalize", acl.finalize())
    if errors:
        raise AclError("teardown: " + "; ".join(errors))


if __name__ == "__main__":
    try:
        main()
    except AclError as exc:
        print(f"runtime_walk: FAILED: {exc}", file=sys.stderr)
        sys.exit(1)
