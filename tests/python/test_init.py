"""acl.init / finalize / finalize_reference, acl.json handling, and the global
helpers that work without init (docs/runtime.md "Init and acl.json")."""
import json
import math

import numpy as np
import pytest

import acl
import acl_helpers as H


# ---------------------------------------------------------------- before init

def test_get_run_mode_before_init_returns_host():
    # compat-notes §1.2: acllite calls it at import time, before acl.init().
    assert acl.rt.get_run_mode() == (H.ACL_HOST, H.ACL_SUCCESS)


def test_get_run_mode_after_init(acl_env):
    assert acl.rt.get_run_mode() == (H.ACL_HOST, H.ACL_SUCCESS)


def test_get_soc_name_default():
    assert acl.get_soc_name() == H.DEFAULT_SOC_NAME
    assert "Ascend310P" in acl.get_soc_name()


def test_get_soc_name_configurable_by_env():
    out = H.check_child(H.run_python(
        "import acl; print(acl.get_soc_name()); print(acl.init()); print(acl.get_soc_name())",
        env={"OPENACL_SOC_NAME": "Ascend910B1"}))
    assert out.split() == ["Ascend910B1", "0", "Ascend910B1"]


def test_get_version_shape_and_values():
    result = acl.get_version()
    assert isinstance(result, tuple) and len(result) == 4
    major, minor, patch, ret = result
    assert ret == H.ACL_SUCCESS
    assert (major, minor, patch) == (1, 15, 0)  # ACL_*_VERSION in include/acl/acl.h


@pytest.mark.parametrize("call", [
    lambda: acl.rt.set_device(0),
    lambda: acl.rt.reset_device(0),
    lambda: acl.rt.get_device_count()[-1],
    lambda: acl.rt.get_device()[-1],
    lambda: acl.rt.create_context(0)[-1],
    lambda: acl.rt.get_context()[-1],
    lambda: acl.rt.create_stream()[-1],
    lambda: acl.rt.create_event()[-1],
    lambda: acl.rt.malloc(64, 0)[-1],
    lambda: acl.rt.malloc_host(64)[-1],
    lambda: acl.rt.free(0x1000),
    lambda: acl.rt.get_mem_info(H.ACL_HBM_MEM)[-1],
    lambda: acl.rt.synchronize_device(),
    lambda: acl.rt.synchronize_stream(0),
    lambda: acl.rt.process_report(10),
    lambda: acl.rt.set_op_wait_timeout(0),
], ids=["set_device", "reset_device", "get_device_count", "get_device", "create_context",
        "get_context", "create_stream", "create_event", "malloc", "malloc_host", "free",
        "get_mem_info", "synchronize_device", "synchronize_stream", "process_report",
        "set_op_wait_timeout"])
def test_runtime_calls_before_init_return_uninitialize(call):
    assert call() == H.ACL_ERROR_UNINITIALIZE


def test_failure_before_init_records_a_message():
    assert acl.rt.create_stream()[-1] == H.ACL_ERROR_UNINITIALIZE
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip()


# ------------------------------------------------------- init / finalize order

def test_init_finalize_basic():
    assert acl.init() == H.ACL_SUCCESS
    assert acl.rt.get_device_count() == (H.DEFAULT_DEVICE_COUNT, H.ACL_SUCCESS)
    assert acl.finalize() == H.ACL_SUCCESS
    assert acl.rt.get_device_count()[-1] == H.ACL_ERROR_UNINITIALIZE


def test_init_with_empty_path():
    assert acl.init("") == H.ACL_SUCCESS
    assert acl.finalize() == H.ACL_SUCCESS


def test_init_twice_returns_repeat_and_finalize_clears_all():
    assert acl.init() == H.ACL_SUCCESS
    assert acl.init() == H.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.init() == H.ACL_ERROR_REPEAT_INITIALIZE
    # one finalize drops every reference
    assert acl.finalize() == H.ACL_SUCCESS
    assert acl.rt.set_device(0) == H.ACL_ERROR_UNINITIALIZE
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE


def test_finalize_without_init():
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE


def test_repeat_init_does_not_look_at_the_file(tmp_path):
    assert acl.init() == H.ACL_SUCCESS
    assert acl.init(str(tmp_path / "missing.json")) == H.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.finalize() == H.ACL_SUCCESS


def test_init_again_after_finalize():
    for _ in range(3):
        assert acl.init() == H.ACL_SUCCESS
        assert acl.rt.set_device(0) == H.ACL_SUCCESS
        assert acl.finalize() == H.ACL_SUCCESS


def test_finalize_reference_counts():
    assert acl.init() == H.ACL_SUCCESS
    assert acl.init() == H.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.init() == H.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.finalize_reference() == (2, H.ACL_SUCCESS)
    assert acl.rt.get_device_count()[-1] == H.ACL_SUCCESS
    assert acl.finalize_reference() == (1, H.ACL_SUCCESS)
    assert acl.rt.set_device(0) == H.ACL_SUCCESS
    assert acl.finalize_reference() == (0, H.ACL_SUCCESS)
    # torn down at zero
    assert acl.rt.get_device_count()[-1] == H.ACL_ERROR_UNINITIALIZE
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE


def test_finalize_releases_live_resources():
    assert acl.init() == H.ACL_SUCCESS
    assert acl.rt.set_device(0) == H.ACL_SUCCESS
    s, ret = acl.rt.create_stream()
    assert ret == 0
    ev, ret = acl.rt.create_event()
    assert ret == 0
    p, ret = acl.rt.malloc(1 << 20, 0)
    assert ret == 0
    assert acl.rt.record_event(ev, s) == 0
    assert acl.finalize() == H.ACL_SUCCESS
    # everything is gone: a new session starts clean
    assert acl.init() == H.ACL_SUCCESS
    assert acl.rt.set_device(0) == H.ACL_SUCCESS
    free, total, ret = acl.rt.get_mem_info(H.ACL_HBM_MEM)
    assert ret == 0 and free == total == H.DEFAULT_DEVICE_MEMORY
    assert acl.rt.destroy_stream(s) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_event(ev) == H.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free(p) == H.ACL_ERROR_INVALID_PARAM
    assert acl.finalize() == H.ACL_SUCCESS


def test_init_none_is_a_type_error():
    with pytest.raises(TypeError):
        acl.init(None)
    assert acl.finalize() == H.ACL_ERROR_REPEAT_FINALIZE  # nothing was initialised


# ------------------------------------------------------------------ acl.json
# Each runs in its own interpreter: the "first successful init's file" rule
# is process-wide state.

INIT_PROBE = """
import json, sys, acl
results = []
for path in sys.argv[1:]:
    ret = acl.init(path)
    results.append(ret)
    if ret == 0:
        results.append(acl.rt.get_device_count())
        acl.finalize()
print(json.dumps(results))
"""


def _init_results(tmp_path, *contents, env=None):
    paths = []
    for i, content in enumerate(contents):
        if content is None:
            paths.append(str(tmp_path / f"missing{i}.json"))
            continue
        p = tmp_path / f"acl{i}.json"
        p.write_text(content if isinstance(content, str) else json.dumps(content))
        paths.append(str(p))
    out = H.check_child(H.run_python(INIT_PROBE, env=env, args=paths))
    return json.loads(out.strip().splitlines()[-1])


def test_acl_json_file_errors(tmp_path):
    deep_obj = "{" + '"a":{' * 11 + "}" * 11 + "}"
    deep_arr = '{"a":' + "[" * 11 + "]" * 11 + "}"
    results = _init_results(
        tmp_path,
        None,                                      # missing file
        '{"dump": {',                              # malformed
        deep_obj,                                  # objects nested > 10
        deep_arr,                                  # arrays nested > 10
        {"err_msg_mode": "2"},                     # bad values
        {"err_msg_mode": 1},
        {"defaultDevice": {"default_device": "7"}},
        {"defaultDevice": {"default_device": "x"}},
        {"acl_graph": {"event_mode": "2"}},
    )
    assert results == [H.ACL_ERROR_INVALID_FILE, H.ACL_ERROR_PARSE_FILE,
                       H.ACL_ERROR_PARSE_FILE, H.ACL_ERROR_PARSE_FILE,
                       H.ACL_ERROR_INVALID_PARAM, H.ACL_ERROR_INVALID_PARAM,
                       H.ACL_ERROR_INVALID_PARAM, H.ACL_ERROR_INVALID_PARAM,
                       H.ACL_ERROR_INVALID_PARAM]


def test_acl_json_empty_file_and_valid_keys(tmp_path):
    results = _init_results(tmp_path, "")
    assert results == [0, [H.DEFAULT_DEVICE_COUNT, 0]]
    cfg = {"err_msg_mode": "1", "defaultDevice": {"default_device": "1"},
           "acl_graph": {"event_mode": "0"}, "some_unknown_key": {"x": [1, 2]}}
    results = _init_results(tmp_path, cfg)
    assert results == [0, [H.DEFAULT_DEVICE_COUNT, 0]]


def test_acl_json_nesting_of_ten_is_accepted(tmp_path):
    ten = "{" + '"a":{' * 9 + "}" * 9 + "}"
    assert _init_results(tmp_path, ten) == [0, [H.DEFAULT_DEVICE_COUNT, 0]]


def test_acl_json_openacl_section(tmp_path):
    cfg = {"openacl": {"device_count": 3, "device_memory": "64M", "soc_name": "Ascend310B1"}}
    p = tmp_path / "acl.json"
    p.write_text(json.dumps(cfg))
    code = f"""
import acl
print(acl.init({str(p)!r}))
print(acl.rt.get_device_count())
print(acl.rt.set_device(2))
print(acl.rt.get_mem_info(1))
print(acl.get_soc_name())
print(acl.finalize())
"""
    # acl.json overrides the environment
    out = H.check_child(H.run_python(code, env={"OPENACL_DEVICE_COUNT": "5"})).split("\n")
    assert out[:6] == ["0", "(3, 0)", "0", f"({64 << 20}, {64 << 20}, 0)", "Ascend310B1", "0"]


def test_acl_json_reinit_applies_the_new_file(tmp_path):
    # docs/runtime.md: re-initialising after finalize reads the file again and
    # applies it (CANN would refuse a different file with 100000)
    files = []
    for name, count in (("three.json", 3), ("four.json", 4)):
        p = tmp_path / name
        p.write_text(json.dumps({"openacl": {"device_count": count}}))
        files.append(str(p))
    out = H.check_child(H.run_python(INIT_PROBE, args=[files[0], files[0], files[1]]))
    results = json.loads(out.strip().splitlines()[-1])
    assert results == [0, [3, 0], 0, [3, 0], 0, [4, 0]]


def test_device_count_env():
    out = H.check_child(H.run_python(
        "import acl; print(acl.init()); print(acl.rt.get_device_count()); "
        "print(acl.rt.set_device(3)); print(acl.rt.set_device(4))",
        env={"OPENACL_DEVICE_COUNT": "4"}))
    assert out.split("\n")[:4] == ["0", "(4, 0)", "0", str(H.ACL_ERROR_RT_INVALID_DEVICEID)]


def test_err_msg_mode_process_level(tmp_path):
    p = tmp_path / "acl.json"
    p.write_text(json.dumps({"err_msg_mode": "1"}))
    code = f"""
import threading, acl
assert acl.init({str(p)!r}) == 0
codes = []
t = threading.Thread(target=lambda: codes.append(acl.rt.free(0x12340)))
t.start(); t.join()
print(codes[0])
msg = acl.get_recent_err_msg()
print(bool(msg))
"""
    out = H.check_child(H.run_python(code)).split()
    assert out == [str(H.ACL_ERROR_INVALID_PARAM), "True"]


def test_err_msg_is_per_thread_by_default(acl_env):
    import threading
    codes = []
    t = threading.Thread(target=lambda: codes.append(acl.rt.free(0x12340)))
    t.start()
    t.join()
    assert codes == [H.ACL_ERROR_INVALID_PARAM]
    assert not acl.get_recent_err_msg()  # the other thread's message is not ours


# ------------------------------------------------------ helpers without init

DTYPE_SIZES = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1,
               16: 8, 17: 16, 27: 2}


@pytest.mark.parametrize("dtype,size", sorted(DTYPE_SIZES.items()))
def test_data_type_size(dtype, size):
    assert acl.data_type_size(dtype) == size


@pytest.mark.parametrize("dtype", [-1, 13, 5, 999])
def test_data_type_size_unknown_is_zero(dtype):
    assert acl.data_type_size(dtype) == 0


def test_float16_round_trip_against_numpy():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.standard_normal(300).astype(np.float32) * 1000,
                             np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 6.1e-5, 5.96e-8,
                                       1e-9, 70000.0, -1e6, np.inf, -np.inf], np.float32)])
    for v in values:
        with np.errstate(over="ignore"):
            expected = int(np.array([v], np.float32).astype(np.float16).view(np.uint16)[0])
        bits = acl.float_to_float16(float(v))
        assert bits == expected, (float(v), hex(bits), hex(expected))
        back = acl.float16_to_float(bits)
        assert back == float(np.uint16(bits).view(np.float16)), hex(bits)


def test_float16_known_bits():
    assert acl.float16_to_float(0x3C00) == 1.0
    assert acl.float16_to_float(0xC000) == -2.0
    assert acl.float16_to_float(0x7BFF) == 65504.0
    assert acl.float16_to_float(0x0001) == pytest.approx(2 ** -24)
    assert math.isinf(acl.float16_to_float(0x7C00))
    assert math.isnan(acl.float16_to_float(0x7E00))
    assert acl.float_to_float16(1.0) == 0x3C00
    assert acl.float_to_float16(65520.0) == 0x7C00  # rounds to +inf
    assert acl.float_to_float16(1.0 + 2 ** -11) == 0x3C00  # tie -> even
    assert acl.float_to_float16(1.0 + 3 * 2 ** -11) == 0x3C02  # tie -> even (up)
    assert math.isnan(acl.float16_to_float(acl.float_to_float16(float("nan"))))


def test_app_log_returns_none():
    for level in range(4):
        assert acl.app_log(level, f"app_log level {level} from pytest") is None


def test_app_log_prints_with_cann_env():
    out = H.run_python("import acl; acl.app_log(3, 'hello-from-app-log')",
                       env={"ASCEND_SLOG_PRINT_TO_STDOUT": "1", "ASCEND_GLOBAL_LOG_LEVEL": "0"})
    assert out.returncode == 0
    assert "hello-from-app-log" in out.stdout


def test_get_recent_err_msg_before_any_failure_is_empty():
    out = H.check_child(H.run_python("import acl; print(repr(acl.get_recent_err_msg()))"))
    assert out.strip() in ("None", "''")


def test_device_settings_reread_after_finalize():
    code = """
import os, acl
print(acl.init(), acl.rt.get_device_count())
os.environ["OPENACL_DEVICE_COUNT"] = "3"
print(acl.rt.get_device_count())   # holds until finalize
print(acl.finalize())
print(acl.init(), acl.rt.get_device_count())
"""
    out = H.check_child(H.run_python(code)).strip().split("\n")
    assert out == ["0 (2, 0)", "(2, 0)", "0", "0 (3, 0)"]
