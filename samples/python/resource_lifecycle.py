#!/usr/bin/env python3
"""Resource lifecycle in pyACL: reference-counted init and set_device, an
explicit context with its stream and event, and teardown in the right order.

    PYTHONPATH=build/python python3 samples/python/resource_lifecycle.py

Each step prints the call and its return code; the expected non-zero codes
(repeat init, reset of a released device, finalize twice) are part of the
lesson. Exit status 0 when every code is the expected one.
"""
import sys

import acl

ACL_SUCCESS = 0
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_INVALID_PARAM = 100000
ACL_MEM_MALLOC_NORMAL_ONLY = 2

DEVICE_ID = 0

failures = []


def expect(what, ret, expected=ACL_SUCCESS):
    ok = ret == expected
    mark = "ok " if ok else "BAD"
    note = "" if expected == ACL_SUCCESS else f" (expected {expected})"
    print(f"  [{mark}] {what:<46} -> {ret}{note}")
    if not ok:
        failures.append(f"{what}: got {ret}, expected {expected} ({acl.get_recent_err_msg()})")
    elif ret != ACL_SUCCESS:
        acl.get_recent_err_msg()  # read (and clear) the message of an expected failure
    return ok


def value(what, result, expected_ret=ACL_SUCCESS):
    """Unpacks a (value, ret) tuple, checking ret."""
    *values, ret = result
    if not expect(what, ret, expected_ret) and expected_ret == ACL_SUCCESS:
        # nothing sensible can follow without this handle
        print(f"resource_lifecycle: FAILED: {failures[-1]}", file=sys.stderr)
        acl.finalize()
        sys.exit(1)
    return values[0] if len(values) == 1 else values


def main():
    print("1. init is reference-counted")
    expect("acl.init()", acl.init())
    expect("acl.init() again (another framework)", acl.init(), ACL_ERROR_REPEAT_INITIALIZE)

    print("2. set_device is reference-counted per device")
    expect("acl.rt.set_device(0)", acl.rt.set_device(DEVICE_ID))
    expect("acl.rt.set_device(0) again", acl.rt.set_device(DEVICE_ID))
    dev = value("acl.rt.get_device()", acl.rt.get_device())
    default_ctx = value("acl.rt.get_context() (default)", acl.rt.get_context())

    print("3. explicit context, stream, event, memory")
    ctx = value("acl.rt.create_context(0)", acl.rt.create_context(DEVICE_ID))
    stream = value("acl.rt.create_stream()", acl.rt.create_stream())
    event = value("acl.rt.create_event()", acl.rt.create_event())
    ptr = value("acl.rt.malloc(4096)", acl.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY))
    expect("acl.rt.memset(ptr, 0x5A)", acl.rt.memset(ptr, 4096, 0x5A, 4096))
    expect("acl.rt.record_event(event, stream)", acl.rt.record_event(event, stream))
    expect("acl.rt.synchronize_stream(stream)", acl.rt.synchronize_stream(stream))
    print(f"     device {dev}, default context 0x{default_ctx:x}, explicit context 0x{ctx:x}")

    print("4. teardown in reverse order of creation")
    expect("acl.rt.free(ptr)", acl.rt.free(ptr))
    expect("acl.rt.destroy_event(event)", acl.rt.destroy_event(event))
    expect("acl.rt.destroy_stream(stream)", acl.rt.destroy_stream(stream))
    expect("acl.rt.destroy_context(ctx)", acl.rt.destroy_context(ctx))
    expect("acl.rt.destroy_stream(stream) again (stale)", acl.rt.destroy_stream(stream),
           ACL_ERROR_INVALID_PARAM)

    print("5. reset_device drops one reference at a time")
    expect("acl.rt.set_context(default context)", acl.rt.set_context(default_ctx))
    expect("acl.rt.reset_device(0) (2 -> 1)", acl.rt.reset_device(DEVICE_ID))
    value("acl.rt.get_device() still current", acl.rt.get_device())
    expect("acl.rt.reset_device(0) (1 -> 0, released)", acl.rt.reset_device(DEVICE_ID))
    value("acl.rt.get_device() after release", acl.rt.get_device(), ACL_ERROR_RT_CONTEXT_NULL)
    expect("acl.rt.reset_device(0) (already 0)", acl.rt.reset_device(DEVICE_ID),
           ACL_ERROR_RT_INVALID_DEVICEID)

    print("6. finalize_reference drops one init reference, finalize all of them")
    refs = value("acl.finalize_reference()", acl.finalize_reference())
    print(f"     {refs} reference(s) left")
    if refs != 1:
        failures.append(f"finalize_reference left {refs} references, expected 1")
    expect("acl.finalize()", acl.finalize())
    expect("acl.finalize() again", acl.finalize(), ACL_ERROR_REPEAT_FINALIZE)

    if failures:
        print("resource_lifecycle: FAILED", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    print("resource_lifecycle: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
