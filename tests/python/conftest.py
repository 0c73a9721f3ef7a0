"""pytest configuration for the pyACL suite.

Finds the `acl` extension in <build>/python, where <build> is $OPENACL_BUILD_DIR
(absolute, or relative to the repository root) and defaults to <repo>/build:

    cmake -S . -B build -G Ninja && ninja -C build
    python3 -m pytest tests/python                    # uses ./build
    OPENACL_BUILD_DIR=build-pt python3 -m pytest tests/python
"""
import os
import sys

import pytest

import acl_helpers as H

# The tests assume the documented defaults (2 devices of 16G, Ascend310P3,
# default mode); tests that need other settings run in a subprocess.
for _name in H.SCRUBBED_ENV:
    os.environ.pop(_name, None)

sys.path.insert(0, str(H.python_dir()))
try:
    import acl  # noqa: E402
except ImportError as exc:  # pragma: no cover - environment problem
    raise pytest.UsageError(
        f"cannot import the acl module from {H.python_dir()} ({exc}); "
        "build it first or set OPENACL_BUILD_DIR") from exc


@pytest.fixture(autouse=True)
def _finalized_after_test():
    """Every test starts and ends uninitialised, whatever happened inside it."""
    acl.get_recent_err_msg()  # no message left over from an earlier test
    yield
    acl.finalize()
    acl.get_recent_err_msg()


@pytest.fixture
def acl_env():
    """acl.init() before the test, acl.finalize() after it (even on failure)."""
    ret = acl.init()
    assert ret == H.ACL_SUCCESS, f"acl.init() -> {ret}"
    acl.get_recent_err_msg()
    try:
        yield acl
    finally:
        acl.finalize()


@pytest.fixture
def device(acl_env):
    """Device 0 set for the calling thread; returns its id."""
    ret = acl.rt.set_device(0)
    assert ret == H.ACL_SUCCESS, f"set_device(0) -> {ret}"
    return 0


@pytest.fixture
def context(device):
    ctx, ret = acl.rt.get_context()
    assert ret == H.ACL_SUCCESS and ctx != 0
    return ctx


@pytest.fixture
def stream(device):
    s, ret = acl.rt.create_stream()
    assert ret == H.ACL_SUCCESS and s != 0, f"create_stream -> {ret}"
    yield s
    acl.rt.destroy_stream(s)


@pytest.fixture
def server(context):
    """A callback thread (threading.Thread) bound to the current context."""
    srv = H.CallbackServer(acl, context)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def dev_buf(device):
    """Factory: device buffers freed at teardown."""
    ptrs = []

    def make(size, policy=H.ACL_MEM_MALLOC_HUGE_FIRST):
        ptr, ret = acl.rt.malloc(size, policy)
        assert ret == H.ACL_SUCCESS and ptr != 0, f"malloc({size}) -> {ret}"
        ptrs.append(ptr)
        return ptr

    yield make
    for p in ptrs:
        acl.rt.free(p)
