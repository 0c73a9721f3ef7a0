"""acl.create_data_buffer & co. (pyacl-api.md §3.1, docs/runtime.md "Data buffers")."""
import numpy as np
import pytest

import acl
import acl_helpers as H


def test_create_and_read_back(acl_env):
    arr = np.zeros(100, np.float32)
    buf = acl.create_data_buffer(arr.ctypes.data, arr.nbytes)
    assert isinstance(buf, int) and buf != 0
    assert acl.get_data_buffer_addr(buf) == arr.ctypes.data
    assert acl.get_data_buffer_size_v2(buf) == 400
    assert acl.get_data_buffer_size(buf) == 400
    assert acl.destroy_data_buffer(buf) == 0


def test_works_before_init():
    buf = acl.create_data_buffer(0x10000, 64)
    assert buf != 0
    assert acl.get_data_buffer_addr(buf) == 0x10000
    assert acl.get_data_buffer_size_v2(buf) == 64
    assert acl.destroy_data_buffer(buf) == 0


def test_wraps_device_memory_without_owning_it(device):
    ptr, ret = acl.rt.malloc(256, 0)
    assert ret == 0
    buf = acl.create_data_buffer(ptr, 256)
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.rt.free(ptr) == 0  # the memory was not freed by destroy


def test_null_zero_is_legal():
    buf = acl.create_data_buffer(0, 0)
    assert buf != 0
    assert acl.get_data_buffer_addr(buf) == 0
    assert acl.get_data_buffer_size_v2(buf) == 0
    assert acl.get_data_buffer_size(buf) == 0
    assert acl.destroy_data_buffer(buf) == 0


def test_null_with_size_is_refused():
    assert acl.create_data_buffer(0, 16) == 0
    assert acl.get_recent_err_msg()


def test_large_size_v2(acl_env):
    size = (1 << 33) + 5
    buf = acl.create_data_buffer(0x20000, size)
    assert buf != 0
    assert acl.get_data_buffer_size_v2(buf) == size
    assert acl.destroy_data_buffer(buf) == 0


def test_update_data_buffer():
    a = np.zeros(8, np.int64)
    b = np.zeros(32, np.int64)
    buf = acl.create_data_buffer(a.ctypes.data, a.nbytes)
    assert acl.update_data_buffer(buf, b.ctypes.data, b.nbytes) == 0
    assert acl.get_data_buffer_addr(buf) == b.ctypes.data
    assert acl.get_data_buffer_size_v2(buf) == 256
    assert acl.update_data_buffer(buf, 0, 0) == 0
    assert acl.get_data_buffer_addr(buf) == 0
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.update_data_buffer(buf, a.ctypes.data, 8) == H.ACL_ERROR_INVALID_PARAM


def test_destroy_twice_and_bogus():
    buf = acl.create_data_buffer(0, 0)
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.destroy_data_buffer(buf) == H.ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(0xDEADBEEF0) == H.ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(-1) == H.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("bogus", [0, 0x1234560, 2 ** 64 - 1, -8])
def test_getters_on_unknown_handles(bogus):
    assert acl.get_data_buffer_addr(bogus) == 0
    assert acl.get_data_buffer_size_v2(bogus) == 0
    assert acl.get_data_buffer_size(bogus) == 0


def test_stale_handle_getters():
    buf = acl.create_data_buffer(0x30000, 10)
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.get_data_buffer_addr(buf) == 0
    assert acl.get_data_buffer_size_v2(buf) == 0


def test_many_buffers_distinct():
    bufs = [acl.create_data_buffer(0x1000 * (i + 1), i) for i in range(200)]
    assert len(set(bufs)) == 200 and 0 not in bufs
    for i, b in enumerate(bufs):
        assert acl.get_data_buffer_addr(b) == 0x1000 * (i + 1)
        assert acl.get_data_buffer_size_v2(b) == i
    for b in bufs:
        assert acl.destroy_data_buffer(b) == 0

