"""Device/host memory, copies, memset, get_mem_info, strict mode
(docs/runtime.md "Memory")."""
import numpy as np
import pytest

import acl
import acl_helpers as H

D2H, H2D, D2D, H2H, DEFAULT = (H.ACL_MEMCPY_DEVICE_TO_HOST, H.ACL_MEMCPY_HOST_TO_DEVICE,
                               H.ACL_MEMCPY_DEVICE_TO_DEVICE, H.ACL_MEMCPY_HOST_TO_HOST,
                               H.ACL_MEMCPY_DEFAULT)


def mem_free():
    free, total, ret = acl.rt.get_mem_info(H.ACL_HBM_MEM)
    assert ret == 0
    return free


# -------------------------------------------------------------------- malloc

def test_malloc_returns_aligned_pointer(device):
    ptrs = []
    for size in (1, 31, 32, 33, 100, 4096, 1 << 20):
        ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0 and ptr != 0
        assert ptr % 64 == 0, hex(ptr)
        ptrs.append(ptr)
    assert len(set(ptrs)) == len(ptrs)
    for p in ptrs:
        assert acl.rt.free(p) == 0


@pytest.mark.parametrize("size", [1, 31, 32, 33, 64, 100, 1000, 4096, 12345])
def test_malloc_accounting_rounds_like_cann(device, size):
    before = mem_free()
    ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert before - mem_free() == H.cann_malloc_size(size)
    assert acl.rt.free(ptr) == 0
    assert mem_free() == before


@pytest.mark.parametrize("size", [1, 32, 33, 100])
def test_malloc_align32_has_no_padding(device, size):
    before = mem_free()
    ptr, ret = acl.rt.malloc_align32(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and ptr % 64 == 0
    assert before - mem_free() == (size + 31) // 32 * 32
    assert acl.rt.free(ptr) == 0
    assert mem_free() == before


def test_malloc_cached_flush_invalidate(device):
    ptr, ret = acl.rt.malloc_cached(1000, H.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and ptr % 64 == 0
    assert acl.rt.mem_flush(ptr, 1000) == 0
    assert acl.rt.mem_invalidate(ptr, 1000) == 0
    assert acl.rt.mem_flush(ptr + 64, 256) == 0
    # the range must lie inside one allocation
    assert acl.rt.mem_flush(ptr, 1 << 20) != 0
    assert acl.rt.mem_invalidate(ptr, 1 << 20) != 0
    assert acl.rt.mem_flush(0x1000, 16) != 0
    assert acl.rt.free(ptr) == 0


@pytest.mark.parametrize("policy", [0, 1, 2, 3, 4, 5, 6, 7, 0x0100, 0x1000, 0x1000 | 2,
                                    0x100000, 0x100000 | 0x0100 | 1])
def test_malloc_policies(device, policy):
    ptr, ret = acl.rt.malloc(256, policy)
    assert ret == 0 and ptr != 0
    assert acl.rt.free(ptr) == 0


@pytest.mark.parametrize("policy", [8, 99, 0x200, 2 ** 31 - 1])
def test_malloc_unknown_policy_accepted_as_cann(device, policy):
    # docs/runtime.md: any policy value is accepted, as in CANN
    ptr, ret = acl.rt.malloc(256, policy)
    assert ret == 0 and ptr != 0 and ptr % 64 == 0
    assert acl.rt.free(ptr) == 0


def test_malloc_size_zero(device):
    assert acl.rt.malloc(0, 0)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.malloc_align32(0, 0)[1] == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.malloc_cached(0, 0)[1] == H.ACL_ERROR_INVALID_PARAM


def test_malloc_over_capacity(device):
    free_before = mem_free()
    ptr, ret = acl.rt.malloc(H.DEFAULT_DEVICE_MEMORY + 1, 0)
    assert ret == H.ACL_ERROR_RT_MEMORY_ALLOCATION
    assert ptr == 0
    msg = acl.get_recent_err_msg()
    assert msg and str(H.DEFAULT_DEVICE_MEMORY) in msg  # names requested/free/total bytes
    assert mem_free() == free_before


def test_malloc_needs_context(acl_env):
    ptr, ret = acl.rt.malloc(64, 0)
    assert ret == H.ACL_ERROR_RT_CONTEXT_NULL


def test_malloc_is_per_device(acl_env):
    assert acl.rt.set_device(1) == 0
    before1 = mem_free()
    ptr, ret = acl.rt.malloc(1 << 20, 0)
    assert ret == 0
    assert before1 - mem_free() == H.cann_malloc_size(1 << 20)
    assert acl.rt.set_device(0) == 0
    assert mem_free() == H.DEFAULT_DEVICE_MEMORY
    assert acl.rt.set_device(1) == 0
    assert acl.rt.free(ptr) == 0
    assert mem_free() == before1


def test_small_device_memory_from_env():
    code = """
import acl
print(acl.init()); print(acl.rt.set_device(0))
print(acl.rt.get_mem_info(1))
p, r = acl.rt.malloc(600 * 1024, 0); print(r)
print(acl.rt.malloc(600 * 1024, 0)[1])
print(acl.rt.free(p))
print(acl.rt.malloc(1000 * 1024, 0)[1])
"""
    out = H.check_child(H.run_python(code, env={"OPENACL_DEVICE_MEMORY": "1M"})).split("\n")
    assert out[:7] == ["0", "0", "(1048576, 1048576, 0)", "0", str(H.ACL_ERROR_RT_MEMORY_ALLOCATION),
                       "0", "0"]


# ----------------------------------------------------------------------- free

def test_free_errors(device):
    ptr, ret = acl.rt.malloc(256, 0)
    assert ret == 0
    assert acl.rt.free(ptr + 64) == H.ACL_ERROR_INVALID_PARAM  # interior
    assert acl.get_recent_err_msg()
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == H.ACL_ERROR_INVALID_PARAM  # double free
    assert acl.get_recent_err_msg()
    assert acl.rt.free(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free(0x7654320) == H.ACL_ERROR_INVALID_PARAM  # unknown


def test_host_and_device_frees_do_not_mix(device):
    hptr, ret = acl.rt.malloc_host(256)
    assert ret == 0
    dptr, ret = acl.rt.malloc(256, 0)
    assert ret == 0
    assert acl.rt.free(hptr) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(dptr) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(hptr) == 0
    assert acl.rt.free(dptr) == 0


def test_malloc_host(device):
    ptr, ret = acl.rt.malloc_host(1000)
    assert ret == 0 and ptr != 0 and ptr % 64 == 0
    free_before = mem_free()
    ptr2, ret = acl.rt.malloc_host(1 << 20)
    assert ret == 0
    assert mem_free() == free_before  # host memory is not device memory
    assert acl.rt.free_host(ptr) == 0
    assert acl.rt.free_host(ptr) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(ptr2 + 64) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(ptr2) == 0
    assert acl.rt.free_host(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.malloc_host(0)[1] == H.ACL_ERROR_INVALID_PARAM


# -------------------------------------------------------------- get_mem_info

def test_get_mem_info(device):
    result = acl.rt.get_mem_info(H.ACL_HBM_MEM)
    assert isinstance(result, tuple) and len(result) == 3
    free, total, ret = result
    assert ret == 0
    assert total == H.DEFAULT_DEVICE_MEMORY
    assert free == total
    free_ddr, total_ddr, ret = acl.rt.get_mem_info(H.ACL_DDR_MEM)
    assert ret == 0 and free_ddr <= total_ddr


def test_get_mem_info_needs_context(acl_env):
    assert acl.rt.get_mem_info(H.ACL_HBM_MEM)[-1] == H.ACL_ERROR_RT_CONTEXT_NULL


# -------------------------------------------------------------------- memcpy

def test_memcpy_round_trip(device, dev_buf):
    src = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    a, b = dev_buf(src.nbytes), dev_buf(src.nbytes)
    assert acl.rt.memcpy(a, src.nbytes, src.ctypes.data, src.nbytes, H2D) == 0
    assert acl.rt.memcpy(b, src.nbytes, a, src.nbytes, D2D) == 0
    out = np.zeros_like(src)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, b, src.nbytes, D2H) == 0
    np.testing.assert_array_equal(out, src)


def test_memcpy_host_to_host(acl_env):
    src = np.arange(64, dtype=np.int32)
    dst = np.zeros_like(src)
    assert acl.rt.set_device(0) == 0
    assert acl.rt.memcpy(dst.ctypes.data, dst.nbytes, src.ctypes.data, src.nbytes, H2H) == 0
    np.testing.assert_array_equal(dst, src)


def test_memcpy_default_infers_direction(device, dev_buf):
    src = np.arange(256, dtype=np.uint16)
    n = src.nbytes
    a, b = dev_buf(n), dev_buf(n)
    host, ret = acl.rt.malloc_host(n)
    assert ret == 0
    out = np.zeros_like(src)
    assert acl.rt.memcpy(a, n, src.ctypes.data, n, DEFAULT) == 0     # H2D
    assert acl.rt.memcpy(b, n, a, n, DEFAULT) == 0                    # D2D
    assert acl.rt.memcpy(host, n, b, n, DEFAULT) == 0                 # D2H (pinned)
    assert acl.rt.memcpy(out.ctypes.data, n, host, n, DEFAULT) == 0  # H2H
    np.testing.assert_array_equal(out, src)
    assert acl.rt.free_host(host) == 0


def test_memcpy_wrong_kind_works_in_default_mode(device, dev_buf):
    src = np.arange(100, dtype=np.uint8)
    a = dev_buf(100)
    assert acl.rt.memcpy(a, 100, src.ctypes.data, 100, D2H) == 0  # really H2D
    out = np.zeros_like(src)
    assert acl.rt.memcpy(out.ctypes.data, 100, a, 100, H2D) == 0  # really D2H
    np.testing.assert_array_equal(out, src)
    out2 = np.zeros_like(src)
    assert acl.rt.memcpy(out2.ctypes.data, 100, src.ctypes.data, 100, D2D) == 0  # really H2H
    np.testing.assert_array_equal(out2, src)


def test_memcpy_with_pointer_arithmetic(device, dev_buf):
    a = dev_buf(1024)
    H.write_device(acl, a, np.zeros(1024, np.uint8))
    src = np.full(16, 0xEE, np.uint8)
    assert acl.rt.memcpy(a + 100, 16, src.ctypes.data, 16, H2D) == 0
    out = H.read_device(acl, a, 1024)
    assert (out[100:116] == 0xEE).all()
    assert out[:100].sum() == 0 and out[116:].sum() == 0


def test_memcpy_count_zero_succeeds_first(device):
    assert acl.rt.memcpy(0, 0, 0, 0, H2D) == 0
    assert acl.rt.memcpy(0, 0, 0, 0, 99) == 0  # nothing is checked when count is 0
    assert acl.rt.memcpy_async(0, 0, 0, 0, H2D, 0) == 0


def test_memcpy_errors(device, dev_buf):
    a = dev_buf(256)
    host = np.zeros(256, np.uint8)
    hp = host.ctypes.data
    assert acl.rt.memcpy(0, 256, hp, 16, H2D) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(a, 256, 0, 16, H2D) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(a, 8, hp, 16, H2D) == H.ACL_ERROR_RT_PARAM_INVALID
    msg = acl.get_recent_err_msg()
    assert msg and "16" in msg and "8" in msg
    for kind in (8, 99, -1):
        assert acl.rt.memcpy(a, 256, hp, 16, kind) == H.ACL_ERROR_INVALID_PARAM


def test_memcpy_past_end_of_allocation_refused(device, dev_buf):
    a = dev_buf(100)  # 160 bytes reserved: 128 + 32 of padding
    big = np.zeros(4096, np.uint8)
    assert acl.rt.memcpy(a, 4096, big.ctypes.data, 4096, H2D) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.get_recent_err_msg()
    assert acl.rt.memcpy(big.ctypes.data, 4096, a, 4096, D2H) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.memcpy(a + 64, 4096, big.ctypes.data, 200, H2D) == H.ACL_ERROR_RT_PARAM_INVALID
    # into the padding: allowed in default mode
    assert acl.rt.memcpy(a, 4096, big.ctypes.data, 120, H2D) == 0


def test_memcpy_across_devices(acl_env):
    assert acl.rt.set_device(0) == 0
    a, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    src = np.arange(1024, dtype=np.int32)
    H.write_device(acl, a, src)
    assert acl.rt.set_device(1) == 0
    b, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    for kind in (D2D, DEFAULT, H.ACL_MEMCPY_INTER_DEVICE_TO_DEVICE):
        H.write_device(acl, b, np.zeros(1024, np.int32))
        assert acl.rt.memcpy(b, 4096, a, 4096, kind) == 0
        np.testing.assert_array_equal(H.read_device(acl, b, 4096, np.int32), src)
    assert acl.rt.free(a) == 0
    assert acl.rt.free(b) == 0


def test_memcpy_async(device, stream, dev_buf):
    src = np.arange(4096, dtype=np.float64)
    n = src.nbytes
    a, b = dev_buf(n), dev_buf(n)
    out = np.zeros_like(src)
    assert acl.rt.memcpy_async(a, n, src.ctypes.data, n, H2D, stream) == 0
    assert acl.rt.memcpy_async(b, n, a, n, D2D, stream) == 0
    assert acl.rt.memcpy_async(out.ctypes.data, n, b, n, D2H, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(out, src)


def test_memcpy_async_validated_at_enqueue(device, stream, dev_buf):
    a = dev_buf(256)
    host = np.zeros(512, np.uint8)
    hp = host.ctypes.data
    assert acl.rt.memcpy_async(a, 8, hp, 16, H2D, stream) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.memcpy_async(0, 256, hp, 16, H2D, stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy_async(a, 256, hp, 16, 42, stream) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy_async(a, 512, hp, 512, H2D, stream) == H.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.memcpy_async(a, 256, hp, 16, H2D, 0xDEAD0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_stream(stream) == 0  # nothing failed later


# ------------------------------------------------------------------ memcpy2d

def test_memcpy2d(device, dev_buf):
    rows, spitch, width, dpitch = 4, 16, 8, 8
    src = np.arange(rows * spitch, dtype=np.uint8)
    d = dev_buf(rows * dpitch)
    assert acl.rt.memcpy2d(d, dpitch, src.ctypes.data, spitch, width, rows, H2D) == 0
    expected = src.reshape(rows, spitch)[:, :width].reshape(-1)
    np.testing.assert_array_equal(H.read_device(acl, d, rows * dpitch), expected)
    # back out into a wider pitch
    out = np.full(rows * 12, 0xFF, np.uint8)
    assert acl.rt.memcpy2d(out.ctypes.data, 12, d, dpitch, width, rows, D2H) == 0
    grid = out.reshape(rows, 12)
    np.testing.assert_array_equal(grid[:, :width], src.reshape(rows, spitch)[:, :width])
    assert (grid[:, width:] == 0xFF).all()


def test_memcpy2d_errors_and_empty(device, dev_buf):
    d = dev_buf(256)
    src = np.full(256, 9, np.uint8)
    sp = src.ctypes.data
    assert acl.rt.memcpy2d(d, 8, sp, 16, 9, 2, H2D) == H.ACL_ERROR_INVALID_PARAM   # width > dpitch
    assert acl.rt.memcpy2d(d, 16, sp, 8, 9, 2, H2D) == H.ACL_ERROR_INVALID_PARAM   # width > spitch
    assert acl.rt.memcpy2d(d, 16, sp, 16, 8, 2, 17) == H.ACL_ERROR_INVALID_PARAM   # kind
    H.write_device(acl, d, np.zeros(256, np.uint8))
    assert acl.rt.memcpy2d(d, 16, sp, 16, 8, 0, H2D) == 0  # height 0
    assert acl.rt.memcpy2d(d, 16, sp, 16, 0, 4, H2D) == 0  # width 0
    assert H.read_device(acl, d, 256).sum() == 0


def test_memcpy2d_async(device, stream, dev_buf):
    rows, pitch, width = 8, 32, 20
    src = np.arange(rows * pitch, dtype=np.uint8)
    d = dev_buf(rows * width)
    assert acl.rt.memcpy2d_async(d, width, src.ctypes.data, pitch, width, rows, H2D, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    expected = src.reshape(rows, pitch)[:, :width].reshape(-1)
    np.testing.assert_array_equal(H.read_device(acl, d, rows * width), expected)
    assert acl.rt.memcpy2d_async(d, 8, src.ctypes.data, pitch, 9, 1, H2D, stream) == H.ACL_ERROR_INVALID_PARAM


# -------------------------------------------------------------------- memset

def test_memset(device, dev_buf):
    d = dev_buf(1000)
    assert acl.rt.memset(d, 1000, 0x1AB, 1000) == 0  # value & 0xFF
    assert (H.read_device(acl, d, 1000) == 0xAB).all()
    assert acl.rt.memset(d + 10, 990, 0, 20) == 0
    out = H.read_device(acl, d, 1000)
    assert (out[10:30] == 0).all() and (out[:10] == 0xAB).all() and (out[30:] == 0xAB).all()
    assert acl.rt.memset(d, 1000, -1, 4) == 0
    assert (H.read_device(acl, d, 4) == 0xFF).all()


def test_memset_errors(device, dev_buf):
    d = dev_buf(100)
    assert acl.rt.memset(d, 100, 1, 0) == 0
    assert acl.rt.memset(d, 10, 1, 20) == H.ACL_ERROR_RT_PARAM_INVALID  # count > max
    assert acl.rt.memset(0, 10, 1, 10) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memset(d, 4096, 1, 4096) == H.ACL_ERROR_RT_PARAM_INVALID  # past the allocation


def test_memset_async(device, stream, dev_buf):
    d = dev_buf(1 << 20)
    assert acl.rt.memset_async(d, 1 << 20, 0x42, 1 << 20, stream) == 0
    assert acl.rt.memset_async(d, 1 << 20, 0x43, 16, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    out = H.read_device(acl, d, 1 << 20)
    assert (out[:16] == 0x43).all() and (out[16:] == 0x42).all()
    assert acl.rt.memset_async(d, 10, 1, 20, stream) == H.ACL_ERROR_RT_PARAM_INVALID


# --------------------------------------------------------------- strict mode

STRICT_PROBE = """
import numpy as np, acl
H2D, D2H, D2D = 1, 2, 3
results = {}
assert acl.init() == 0 and acl.rt.set_device(0) == 0
d, r = acl.rt.malloc(100, 0); assert r == 0
d2, r = acl.rt.malloc(256, 0); assert r == 0
h = np.arange(256, dtype=np.uint8)
out = np.zeros(256, np.uint8)
results["wrong_kind_h2d_as_d2h"] = acl.rt.memcpy(d, 100, h.ctypes.data, 100, D2H)
results["wrong_kind_d2h_as_h2d"] = acl.rt.memcpy(out.ctypes.data, 100, d, 100, H2D)
results["wrong_kind_d2d_as_h2d"] = acl.rt.memcpy(d2, 100, d, 100, H2D)
results["right_kind"] = acl.rt.memcpy(d, 100, h.ctypes.data, 100, H2D)
results["default_kind"] = acl.rt.memcpy(out.ctypes.data, 100, d, 100, 4)
results["data_ok"] = bool((out[:100] == h[:100]).all())
results["into_padding"] = acl.rt.memcpy(d, 160, h.ctypes.data, 120, H2D)
results["past_end"] = acl.rt.memcpy(d, 256, h.ctypes.data, 256, H2D)
hp, r = acl.rt.malloc_host(64); assert r == 0
results["memset_host_ptr"] = acl.rt.memset(hp, 64, 0, 64)
results["free_host_ptr"] = acl.rt.free(hp)
import os
if os.environ.get("OPENACL_STRICT") == "1":  # in default mode this would be a real use after free
    d3, r = acl.rt.malloc(4096, 0); assert r == 0
    assert acl.rt.free(d3) == 0
    results["use_after_free"] = acl.rt.memcpy(d3, 64, h.ctypes.data, 64, H2D)
    results["use_after_free_msg"] = bool(acl.get_recent_err_msg())
print(results)
"""


def _strict_results(env):
    import ast
    out = H.check_child(H.run_python(STRICT_PROBE, env=env))
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_strict_mode_rejects_what_hardware_would_corrupt():
    r = _strict_results({"OPENACL_STRICT": "1"})
    assert r["wrong_kind_h2d_as_d2h"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["wrong_kind_d2h_as_h2d"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["wrong_kind_d2d_as_h2d"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["right_kind"] == 0
    assert r["default_kind"] == 0 and r["data_ok"]
    assert r["into_padding"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["past_end"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["memset_host_ptr"] == H.ACL_ERROR_INVALID_PARAM
    assert r["free_host_ptr"] == H.ACL_ERROR_INVALID_PARAM
    assert r["use_after_free"] == H.ACL_ERROR_RT_PARAM_INVALID
    assert r["use_after_free_msg"]


def test_default_mode_same_program_succeeds():
    r = _strict_results({})
    assert r["wrong_kind_h2d_as_d2h"] == 0
    assert r["wrong_kind_d2h_as_h2d"] == 0
    assert r["wrong_kind_d2d_as_h2d"] == 0
    assert r["into_padding"] == 0
    assert r["past_end"] == H.ACL_ERROR_RT_PARAM_INVALID  # refused in every mode
    assert r["free_host_ptr"] == H.ACL_ERROR_INVALID_PARAM
    assert r["data_ok"]


def test_strict_mode_from_acl_json(tmp_path):
    import json
    p = tmp_path / "acl.json"
    p.write_text(json.dumps({"openacl": {"strict": "1"}}))
    code = f"""
import numpy as np, acl
assert acl.init({str(p)!r}) == 0 and acl.rt.set_device(0) == 0
d, r = acl.rt.malloc(64, 0)
h = np.zeros(64, np.uint8)
print(acl.rt.memcpy(d, 64, h.ctypes.data, 64, 2))
"""
    out = H.check_child(H.run_python(code))
    assert out.split()[-1] == str(H.ACL_ERROR_RT_PARAM_INVALID)


# ------------------------------------------------------------------- logging

LOG_PROBE = """
import numpy as np, acl
assert acl.init() == 0 and acl.rt.set_device(0) == 0
d, r = acl.rt.malloc(12345, 0); assert r == 0
h = np.zeros(100, np.uint8)
codes = [acl.rt.memcpy(d, 100, h.ctypes.data, 100, 2) for _ in range(3)]   # really H2D
codes += [acl.rt.memcpy(h.ctypes.data, 100, d, 100, 1) for _ in range(2)]  # really D2H
print("codes", codes)
print("leaked", hex(d))
import sys; sys.stdout.flush()
assert acl.rt.reset_device(0) == 0
print("mark-reset", flush=True)
assert acl.finalize() == 0
"""


def test_default_mode_logs_wrong_kind_once_and_leaks():
    proc = H.run_python(LOG_PROBE, env={"OPENACL_LOG": "warning"})
    out = H.check_child(proc)
    assert "codes [0, 0, 0, 0, 0]" in out
    leaked = out.split("leaked ")[1].split()[0].lower()
    err = proc.stderr.lower()
    warn_lines = [ln for ln in err.splitlines() if "aclrtmemcpy" in ln]
    # once per (call, kind): one line for the D2H misuse, one for the H2D misuse
    assert len([ln for ln in warn_lines if "device_to_host" in ln]) == 1, proc.stderr
    assert len([ln for ln in warn_lines if "host_to_device" in ln]) == 1, proc.stderr
    # reset_device and finalize both report the live allocation (address and size)
    leak_lines = [ln for ln in err.splitlines() if leaked in ln and "aclrtmemcpy" not in ln]
    assert len(leak_lines) >= 2, proc.stderr
    assert any("12345" in ln or "12384" in ln for ln in leak_lines)


def test_no_log_output_by_default():
    proc = H.run_python(LOG_PROBE, env={"OPENACL_LOG": "", "ASCEND_SLOG_PRINT_TO_STDOUT": "0"})
    H.check_child(proc)
    assert "aclrtMemcpy" not in proc.stderr and "aclrtMemcpy" not in proc.stdout


# ------------------------------------------------------------ other details

def test_free_messages_say_which(device):
    p, ret = acl.rt.malloc(777, 0)
    assert ret == 0
    msgs = []
    assert acl.rt.free(p + 64) == H.ACL_ERROR_INVALID_PARAM
    msgs.append(acl.get_recent_err_msg())
    assert acl.rt.free(0x1230) == H.ACL_ERROR_INVALID_PARAM
    msgs.append(acl.get_recent_err_msg())
    assert acl.rt.free(p) == 0
    assert acl.rt.free(p) == H.ACL_ERROR_INVALID_PARAM
    msgs.append(acl.get_recent_err_msg())
    assert all(m and "aclrtFree" in m for m in msgs)
    assert len(set(msgs)) == 3  # interior, unknown and double free are told apart
    assert hex(p + 64) in msgs[0].lower() and hex(p) in msgs[2].lower()


def test_over_capacity_message_numbers(device):
    request = 1 << 40
    assert acl.rt.malloc(request, 0)[1] == H.ACL_ERROR_RT_MEMORY_ALLOCATION
    msg = acl.get_recent_err_msg()
    assert str(request) in msg and str(H.DEFAULT_DEVICE_MEMORY) in msg


@pytest.mark.parametrize("kind", [5, 6])
def test_memcpy_other_kinds(device, dev_buf, kind):
    src = np.arange(128, dtype=np.uint8)
    a, b = dev_buf(128), dev_buf(128)
    H.write_device(acl, a, src)
    if kind == 5:  # HOST_TO_BUF_TO_DEVICE
        assert acl.rt.memcpy(b, 128, src.ctypes.data, 128, kind) == 0
    else:          # INNER_DEVICE_TO_DEVICE
        assert acl.rt.memcpy(b, 128, a, 128, kind) == 0
    np.testing.assert_array_equal(H.read_device(acl, b, 128), src)


REUSE_PROBE = """
import ctypes, acl
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
assert acl.init() == 0 and acl.rt.set_device(0) == 0
dst, r = acl.rt.malloc(4096, 0); assert r == 0
p, r = acl.rt.malloc(4097, 0); assert r == 0
assert acl.rt.free(p) == 0
hosts = [libc.malloc(4097) for _ in range(64)]   # the C heap's next blocks of that size
print("reused", sum(1 for h in hosts if p <= h < p + 4160))
ctypes.memset(hosts[-1], 7, 64)
print("copy", acl.rt.memcpy(dst, 4096, hosts[-1], 64, 1))
print("uaf", acl.rt.memcpy(dst, 4096, p, 64, 1))
"""


def test_strict_mode_tells_host_memory_from_freed_device_memory():
    """Device memory lives outside the C heap, so a host buffer (numpy does this
    all the time) never lands in a freed device block: strict mode copies from
    live host memory and still names a real use after free."""
    out = H.check_child(H.run_python(REUSE_PROBE, env={"OPENACL_STRICT": "1"}))
    assert "reused 0" in out, out
    assert "copy 0" in out, out
    assert "uaf 107000" in out, out
