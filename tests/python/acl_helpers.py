"""Shared constants and helpers for the pyACL test-suite.

The `acl` module exports no constants (pyacl-api.md §0.2), so, like every real
pyACL program, the tests define the values they use here.
"""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def build_dir():
    """The CMake build folder: $OPENACL_BUILD_DIR (relative paths are taken from
    the repository root), else <repo>/build."""
    value = os.environ.get("OPENACL_BUILD_DIR", "build")
    path = Path(value)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path


def python_dir():
    return build_dir() / "python"


# ---- codes ----
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_PARSE_FILE = 100006
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006
ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011
ACL_ERROR_RT_STREAM_NO_CB_REG = 107015
ACL_ERROR_RT_WAIT_TIMEOUT = 107019
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_REPORT_TIMEOUT = 507012
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047

# ---- enums ----
ACL_DEVICE = 0
ACL_HOST = 1

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3
ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7
ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100
ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000

ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_MEMCPY_DEFAULT = 4
ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6
ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7

ACL_DDR_MEM = 0
ACL_HBM_MEM = 1

ACL_EVENT_SYNC = 0x1
ACL_EVENT_TIME_LINE = 0x8
ACL_STREAM_FAST_LAUNCH = 0x1
ACL_STREAM_FAST_SYNC = 0x2

ACL_STREAM_STATUS_COMPLETE = 0
ACL_STREAM_STATUS_NOT_READY = 1
ACL_EVENT_RECORDED_STATUS_NOT_READY = 0
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
ACL_EVENT_STATUS_COMPLETE = 0
ACL_EVENT_STATUS_NOT_READY = 1
ACL_EVENT_WAIT_STATUS_COMPLETE = 0
ACL_EVENT_WAIT_STATUS_NOT_READY = 1

ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1

# numpy type numbers used by acl.util.ptr_to_numpy
NPY_BYTE = 1
NPY_UBYTE = 2
NPY_INT = 5
NPY_FLOAT = 11

DEFAULT_DEVICE_COUNT = 2
DEFAULT_DEVICE_MEMORY = 16 * 1024 ** 3
DEFAULT_SOC_NAME = "Ascend310P3"

# Variables that change the runtime's defaults; the suite runs without them.
SCRUBBED_ENV = ("OPENACL_DEVICE_COUNT", "OPENACL_DEVICE_MEMORY",
                "OPENACL_SOC_NAME", "OPENACL_STRICT")


def cann_malloc_size(size):
    """Bytes aclrtMalloc takes from a device for a request of `size` bytes."""
    return (size + 31) // 32 * 32 + 32


def child_env(extra=None):
    env = dict(os.environ)
    for name in SCRUBBED_ENV:
        env.pop(name, None)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(python_dir()) + (os.pathsep + old if old else "")
    if extra:
        env.update(extra)
    return env


def run_python(code, env=None, timeout=60, args=()):
    """Runs `code` in a fresh interpreter that can import acl."""
    return subprocess.run([sys.executable, "-c", code, *args], env=child_env(env),
                          capture_output=True, text=True, timeout=timeout)


def check_child(proc):
    assert proc.returncode == 0, (
        f"child exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout


class CallbackServer:
    """A Python thread that serves launch_callback: it loops process_report()
    until stopped, the way pyACL programs do."""

    def __init__(self, acl, context=None, timeout_ms=20):
        self.acl = acl
        self.context = context
        self.timeout_ms = timeout_ms
        self._stop = False
        self._streams = []
        self.report_codes = set()
        self.set_context_ret = None
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._started = threading.Event()
        self._thread.start()
        self._started.wait(5)
        self.tid = self._thread.ident

    def _loop(self):
        if self.context is not None:
            self.set_context_ret = self.acl.rt.set_context(self.context)
        self._started.set()
        while not self._stop:
            self.report_codes.add(self.acl.rt.process_report(self.timeout_ms))

    def subscribe(self, stream):
        ret = self.acl.rt.subscribe_report(self.tid, stream)
        if ret == ACL_SUCCESS:
            self._streams.append(stream)
        return ret

    def stop(self):
        for stream in self._streams:
            self.acl.rt.unsubscribe_report(self.tid, stream)
        self._streams = []
        self._stop = True
        self._thread.join(10)
        assert not self._thread.is_alive(), "callback thread did not stop"


class Gate:
    """Holds a stream: a BLOCK callback that waits until open() is called.
    Needs a CallbackServer subscribed to the stream."""

    def __init__(self, acl, stream, limit_s=10.0):
        self.acl = acl
        self.event = threading.Event()
        self.entered = threading.Event()
        self.limit_s = limit_s

        def hold(_data):
            self.entered.set()
            self.event.wait(self.limit_s)

        self.ret = acl.rt.launch_callback(hold, None, ACL_CALLBACK_BLOCK, stream)
        assert self.ret == ACL_SUCCESS, f"launch_callback -> {self.ret}"

    def wait_entered(self, timeout=5.0):
        assert self.entered.wait(timeout), "the gate callback never ran"

    def open(self):
        self.event.set()


def wait_until(predicate, timeout=5.0, step=0.005):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def read_device(acl, ptr, size, dtype="uint8"):
    """Copies `size` bytes of device memory into a new numpy array (D2H)."""
    import numpy as np
    out = np.zeros(size, np.uint8)
    ret = acl.rt.memcpy(out.ctypes.data, size, ptr, size, ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == ACL_SUCCESS, f"memcpy D2H -> {ret}"
    return out.view(dtype)


def write_device(acl, ptr, array):
    """Copies a numpy array to device memory (H2D)."""
    import numpy as np
    src = np.ascontiguousarray(array)
    ret = acl.rt.memcpy(ptr, src.nbytes, src.ctypes.data, src.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == ACL_SUCCESS, f"memcpy H2D -> {ret}"


def execute_model(acl, model_id, inputs, output_sizes, gear=None):
    """Runs acl.mdl.execute once: each numpy array of `inputs` copied into a
    device buffer of its own (an int entry: an empty buffer of that many
    bytes, e.g. the gear input), one zero-size-safe device buffer per entry
    of `output_sizes` (bytes). gear: (index of the gear input, batch) for
    acl.mdl.set_dynamic_batch_size. Returns the outputs as uint8 arrays.
    Everything it made is destroyed again, also when a step fails."""
    made = []  # (ptr, data buffer)
    datasets = []

    def check(ret, what):
        assert ret == ACL_SUCCESS, f"{what} -> {ret}: {acl.get_recent_err_msg()}"

    def dataset(items):
        ds = acl.mdl.create_dataset()
        datasets.append(ds)
        for item in items:
            size = item if isinstance(item, int) else item.nbytes
            ptr, ret = acl.rt.malloc(max(size, 1), ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, f"malloc({size})")
            buf = acl.create_data_buffer(ptr, size)
            made.append((ptr, buf))
            if not isinstance(item, int):
                write_device(acl, ptr, item)
            _, ret = acl.mdl.add_dataset_buffer(ds, buf)
            check(ret, "add_dataset_buffer")
        return ds

    try:
        ins = dataset(inputs)
        if gear is not None:
            check(acl.mdl.set_dynamic_batch_size(model_id, ins, gear[0], gear[1]), "set_dynamic_batch_size")
        outs = dataset(output_sizes)
        check(acl.mdl.execute(model_id, ins, outs), "execute")
        first = len(inputs)
        return [read_device(acl, made[first + i][0], size) for i, size in enumerate(output_sizes)]
    finally:
        for ds in datasets:
            check(acl.mdl.destroy_dataset(ds), "destroy_dataset")
        for ptr, buf in made:
            check(acl.destroy_data_buffer(buf), "destroy_data_buffer")
            check(acl.rt.free(ptr), "free")
