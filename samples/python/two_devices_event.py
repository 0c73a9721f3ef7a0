#!/usr/bin/env python3
"""Two devices, one event. A stream on device 0 produces data; a stream on
device 1 waits on an event recorded on device 0's stream, then copies the data
across devices and reads it back.

To make the ordering visible, the producer first runs a host callback (BLOCK)
that takes a while to fill the host buffer; without the event wait, device 1
would copy stale data.

    PYTHONPATH=build/python python3 samples/python/two_devices_event.py
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
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_CALLBACK_BLOCK = 1
ACL_STREAM_STATUS_NOT_READY = 1
ACL_ERROR_RT_REPORT_TIMEOUT = 507012

PRODUCER_DEVICE, CONSUMER_DEVICE = 0, 1
N = 1 << 18                       # 256 Ki float32 = 1 MiB


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def on(ctx, call):
    """A teardown step run with ctx current (resources are released in their own context)."""
    def step():
        ret = acl.rt.set_context(ctx)
        return call() if ret == ACL_SUCCESS else ret
    return step


def run(cleanup):
    count, ret = acl.rt.get_device_count()
    check_ret("acl.rt.get_device_count", ret)
    if count < 2:
        raise SampleError(f"this sample needs two devices, found {count}")
    can, ret = acl.rt.device_can_access_peer(PRODUCER_DEVICE, CONSUMER_DEVICE)
    check_ret("acl.rt.device_can_access_peer", ret)
    print(f"  {count} devices; device {PRODUCER_DEVICE} can access device {CONSUMER_DEVICE}: {bool(can)}")

    # device 0: context, stream, buffer, event
    ctx0, ret = acl.rt.create_context(PRODUCER_DEVICE)
    check_ret("acl.rt.create_context(0)", ret)
    cleanup.append(on(ctx0, lambda: acl.rt.destroy_context(ctx0)))
    s0, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream (device 0)", ret)
    cleanup.append(on(ctx0, lambda: acl.rt.destroy_stream(s0)))
    d0, ret = acl.rt.malloc(N * 4, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc (device 0)", ret)
    cleanup.append(on(ctx0, lambda: acl.rt.free(d0)))
    produced, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)
    cleanup.append(on(ctx0, lambda: acl.rt.destroy_event(produced)))
    check_ret("acl.rt.device_enable_peer_access", acl.rt.device_enable_peer_access(CONSUMER_DEVICE, 0))

    # device 1: context, stream, buffer
    ctx1, ret = acl.rt.create_context(CONSUMER_DEVICE)
    check_ret("acl.rt.create_context(1)", ret)
    cleanup.append(on(ctx1, lambda: acl.rt.destroy_context(ctx1)))
    s1, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream (device 1)", ret)
    cleanup.append(on(ctx1, lambda: acl.rt.destroy_stream(s1)))
    d1, ret = acl.rt.malloc(N * 4, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc (device 1)", ret)
    cleanup.append(on(ctx1, lambda: acl.rt.free(d1)))

    # a Python thread (threading.Thread) serves device 0's callbacks
    stop = threading.Event()

    def serve():
        acl.rt.set_context(ctx0)
        while not stop.is_set():
            acl.rt.process_report(50)

    server = threading.Thread(target=serve, name="acl-callbacks")
    server.start()
    cleanup.append(lambda: (stop.set(), server.join(5), ACL_SUCCESS)[2])
    check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(server.ident, s0))
    cleanup.append(lambda: acl.rt.unsubscribe_report(server.ident, s0))

    host_in = np.zeros(N, np.float32)
    expected = np.sqrt(np.arange(N, dtype=np.float32))

    def slow_producer(_):
        time.sleep(0.05)                       # "a long computation"
        host_in[:] = expected

    # producer: callback fills host_in, H2D copy, record the event
    check_ret("acl.rt.set_context(ctx0)", acl.rt.set_context(ctx0))
    check_ret("acl.rt.launch_callback", acl.rt.launch_callback(slow_producer, None, ACL_CALLBACK_BLOCK, s0))
    check_ret("acl.rt.memcpy_async H2D", acl.rt.memcpy_async(d0, N * 4, host_in.ctypes.data, N * 4,
                                                             ACL_MEMCPY_HOST_TO_DEVICE, s0))
    check_ret("acl.rt.record_event (device 0 stream)", acl.rt.record_event(produced, s0))

    # consumer: wait for device 0's event, copy device 0 -> device 1, read back
    out = np.zeros(N, np.float32)
    check_ret("acl.rt.set_context(ctx1)", acl.rt.set_context(ctx1))
    check_ret("acl.rt.stream_wait_event (device 1 stream)", acl.rt.stream_wait_event(s1, produced))
    check_ret("acl.rt.memcpy_async D2D across devices",
              acl.rt.memcpy_async(d1, N * 4, d0, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s1))
    check_ret("acl.rt.memcpy_async D2H", acl.rt.memcpy_async(out.ctypes.data, N * 4, d1, N * 4,
                                                             ACL_MEMCPY_DEVICE_TO_HOST, s1))
    status, ret = acl.rt.stream_query(s1)
    check_ret("acl.rt.stream_query", ret)
    waiting = status == ACL_STREAM_STATUS_NOT_READY
    t0 = time.perf_counter()
    check_ret("acl.rt.synchronize_stream (device 1)", acl.rt.synchronize_stream(s1))
    waited_ms = 1000 * (time.perf_counter() - t0)

    if not np.array_equal(out, expected):
        raise SampleError("device 1 read stale data: the event wait did not order the streams")
    dev, ret = acl.rt.get_device()
    check_ret("acl.rt.get_device", ret)
    print(f"  device 1 stream was {'waiting' if waiting else 'already done'} right after enqueue; "
          f"synchronize took {waited_ms:.1f} ms")
    print(f"  copied {N * 4} bytes device {PRODUCER_DEVICE} -> device {CONSUMER_DEVICE}, "
          f"data verified (current device now {dev})")


def main():
    if acl.init() != ACL_SUCCESS:
        print(f"two_devices_event: FAILED: acl.init: {acl.get_recent_err_msg()}", file=sys.stderr)
        return 1
    cleanup = []
    failure = None
    try:
        run(cleanup)
    except SampleError as exc:
        failure = str(exc)
    errors = []
    for undo in reversed(cleanup):
        ret = undo()
        if ret != ACL_SUCCESS:
            errors.append(str(ret))
    if acl.finalize() != ACL_SUCCESS:
        errors.append("finalize")
    if failure or errors:
        print(f"two_devices_event: FAILED: {failure or ''} teardown errors: {errors}", file=sys.stderr)
        return 1
    print("two_devices_event: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
