"""acl.prof: the op-info subscription (records decoded by acl.prof's readers
and by an independent decoder written here from the documented 80-byte
layout), argument and ordering errors, a pipe nobody reads, collection to
files (CSV and Chrome trace parsed back) and the openacl-msprof wrapper.
Contract: pyacl-api.md §5, compat-notes §3, docs/profiling.md."""
import csv
import json
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import acl
import acl_helpers as H

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ACL_AICORE_NONE = 0xFF
ACL_PROF_ACL_API = 0x1
ACL_PROF_TASK_TIME = 0x2
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_INVALID_MODEL_ID = 100011
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_PROF_ALREADY_RUN = 100042
ACL_ERROR_PROF_NOT_RUN = 100043
ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046
ACL_ERROR_PROF_API_CONFLICT = 148047
RECORD = 80

W = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
X = np.array([[1, -2, 3], [0.5, -0.25, 4]], dtype=np.float32)
S = np.array([2, -1, 0.5], dtype=np.float32)
OP_NAMES = {"add": "Add", "relu": "Relu", "mul": "Mul", "sub": "Sub"}
MSPROF = H.REPO_ROOT / "tools" / "msprof" / "openacl-msprof"


def ok(ret, what=""):
    assert ret == H.ACL_SUCCESS, f"{what} -> {ret}: {acl.get_recent_err_msg()}"


def build_model(directory):
    """y = Relu(x + W) * s, z = x - s: four nodes the engine keeps apart."""
    nodes = [helper.make_node("Add", ["x", "W"], ["t"], name="add"),
             helper.make_node("Relu", ["t"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "s"], ["y"], name="mul"),
             helper.make_node("Sub", ["x", "s"], ["z"], name="sub")]
    graph = helper.make_graph(
        nodes, "profnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(W, "W")])
    path = Path(directory) / "profnet.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


class Run:
    """A loaded model with its buffers; execute() runs it once."""

    def __init__(self, path):
        self.model_id, ret = acl.mdl.load_from_file(str(path))
        ok(ret, "load_from_file")
        self.ptrs, self.bufs = [], []
        self.inputs, self.outputs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        for ds, array in ((self.inputs, X), (self.inputs, S), (self.outputs, X), (self.outputs, X)):
            ptr, ret = acl.rt.malloc(array.nbytes, H.ACL_MEM_MALLOC_HUGE_FIRST)
            ok(ret, "malloc")
            H.write_device(acl, ptr, array)
            self.ptrs.append(ptr)
            self.bufs.append(acl.create_data_buffer(ptr, array.nbytes))
            _, ret = acl.mdl.add_dataset_buffer(ds, self.bufs[-1])
            ok(ret, "add_dataset_buffer")

    def execute(self, times=1):
        for _ in range(times):
            ok(acl.mdl.execute(self.model_id, self.inputs, self.outputs), "execute")

    def destroy(self):
        acl.mdl.destroy_dataset(self.inputs)
        acl.mdl.destroy_dataset(self.outputs)
        for buf, ptr in zip(self.bufs, self.ptrs):
            acl.destroy_data_buffer(buf)
            acl.rt.free(ptr)
        acl.mdl.unload(self.model_id)


@pytest.fixture
def run(device, tmp_path):
    r = Run(build_model(tmp_path))
    yield r
    r.destroy()


# ---- an independent decoder (pyacl-api.md §5.4) ----

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def signature(record):
    """Start 0xFFFFFFFF over bytes [4, 80), no final XOR."""
    crc = 0xFFFFFFFF
    for b in record[4:RECORD]:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


FIELDS = ("signature", "model_id", "flag", "thread_id", "op_index", "duration", "start", "end",
          "execution_time", "cube_fops", "vector_fops", "dev_id", "pad")


def decode(data):
    out = []
    for off in range(0, len(data), RECORD):
        rec = data[off:off + RECORD]
        fields = dict(zip(FIELDS, struct.unpack("<4I7Q2I", rec)))
        fields["signature_ok"] = fields["signature"] == signature(rec)
        out.append(fields)
    return out


def read_all(fd, chunk):
    data = bytearray()
    while True:
        part = os.read(fd, chunk)
        if not part:
            return bytes(data)
        data += part


# ---- subscription ----

def test_subscription_flow_decodes_both_ways(run):
    size, ret = acl.prof.get_op_desc_size()
    assert (size, ret) == (RECORD, 0)
    r, w = os.pipe()
    cfg = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
    assert cfg != 0, acl.get_recent_err_msg()
    ok(acl.prof.model_subscribe(run.model_id, cfg), "model_subscribe")
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(read_all(r, size * 10)))
    reader.start()
    run.execute(3)
    ok(acl.prof.model_un_subscribe(run.model_id), "model_un_subscribe")
    reader.join(10)
    assert not reader.is_alive(), "no EOF after unsubscribe"
    os.close(r)
    with pytest.raises(OSError):
        os.fstat(w)  # the library closed the write end
    ok(acl.prof.destroy_subscribe_config(cfg), "destroy_subscribe_config")

    data = chunks[0]
    assert len(data) == 4 * 3 * RECORD
    ptr = acl.util.bytes_to_ptr(data)
    num, ret = acl.prof.get_op_num(ptr, len(data))
    assert (num, ret) == (12, 0)
    seen = []
    for i, d in enumerate(decode(data)):
        assert d["signature_ok"], i
        assert d["model_id"] == run.model_id and d["flag"] == 0 and d["pad"] == 0 and d["dev_id"] == 0
        assert d["duration"] == d["end"] - d["start"]
        assert acl.prof.get_model_id(ptr, len(data), i) == run.model_id
        assert acl.prof.get_op_start(ptr, len(data), i) == d["start"]
        assert acl.prof.get_op_end(ptr, len(data), i) == d["end"]
        assert acl.prof.get_op_duration(ptr, len(data), i) == d["duration"]
        type_len, ret = acl.prof.get_op_type_len(ptr, len(data), i)
        assert ret == 0
        op_type, ret = acl.prof.get_op_type_v2(ptr, len(data), i)
        assert ret == 0 and len(op_type) + 1 == type_len
        op_name, ret = acl.prof.get_op_name(ptr, len(data), i, 257)
        assert ret == 0
        assert OP_NAMES[op_name] == op_type
        seen.append(op_name)
        # Read once.
        assert acl.prof.get_op_type_v2(ptr, len(data), i) == (None, ACL_ERROR_INVALID_PARAM)
        assert acl.prof.get_op_name(ptr, len(data), i, 257) == ("", ACL_ERROR_INVALID_PARAM)
    assert seen == ["add", "relu", "mul", "sub"] * 3 or sorted(seen) == sorted(list(OP_NAMES) * 3)


def test_model_unsubscribe_alias_and_string_limits(run):
    r, w = os.pipe()
    cfg = acl.prof.create_subscribe_config(0, 0, w)
    assert cfg != 0
    ok(acl.prof.model_subscribe(run.model_id, cfg))
    run.execute()
    ok(acl.prof.model_unsubscribe(run.model_id), "model_unsubscribe")  # the alias
    data = read_all(r, 4096)
    os.close(r)
    acl.prof.destroy_subscribe_config(cfg)
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.prof.get_op_start(ptr, len(data), 0) == 0  # time_info_switch 0
    assert acl.prof.get_op_type(ptr, len(data), 0, 4097) == ("", ACL_ERROR_INVALID_PARAM)
    assert acl.prof.get_op_type(ptr, len(data), 0, 1) == ("", ACL_ERROR_INVALID_PARAM)  # shorter: kept
    name_len, ret = acl.prof.get_op_name_len(ptr, len(data), 0)
    assert ret == 0
    name, ret = acl.prof.get_op_name(ptr, len(data), 0, name_len - 1)  # == strlen: one char less
    assert ret == 0 and len(name) == name_len - 2
    op_type, ret = acl.prof.get_op_type(ptr, len(data), 0, 65)
    assert ret == 0 and op_type in OP_NAMES.values()


def test_reader_validation():
    rec = bytearray(RECORD)
    struct.pack_into("<I", rec, 4, 9)
    struct.pack_into("<I", rec, 0, signature(rec))
    good = bytes(rec)
    assert acl.prof.get_op_num(acl.util.bytes_to_ptr(good), RECORD) == (1, 0)
    assert acl.prof.get_model_id(acl.util.bytes_to_ptr(good), RECORD, 0) == 9
    two = good + good[:79]
    assert acl.prof.get_op_num(acl.util.bytes_to_ptr(two), len(two))[1] == ACL_ERROR_INVALID_PARAM
    bad = bytearray(good)
    bad[50] ^= 0xFF
    bad = good + bytes(bad)
    assert acl.prof.get_op_num(acl.util.bytes_to_ptr(bad), len(bad))[1] == ACL_ERROR_INVALID_PARAM
    assert "signature" in acl.get_recent_err_msg()
    assert acl.prof.get_model_id(acl.util.bytes_to_ptr(bad), len(bad), 0) == ACL_ERROR_INVALID_PARAM
    assert acl.prof.get_op_duration(acl.util.bytes_to_ptr(good), RECORD, 1) == 0  # index out of range
    assert acl.prof.get_op_type_len(acl.util.bytes_to_ptr(good), RECORD, 0)[1] == ACL_ERROR_INVALID_PARAM
    assert acl.prof.get_op_num(0, RECORD)[1] == ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("name, args", [
    ("create_subscribe_config", (1, 255)), ("create_subscribe_config", ("1", 255, 3)),
    ("model_subscribe", (1,)), ("model_un_subscribe", ("x",)), ("model_unsubscribe", ()),
    ("get_op_num", (0,)), ("get_op_type", (0, 80, 0)), ("get_op_name_v2", (0, 80)),
    ("get_op_start", (0, 80, "0")), ("init", (None,)), ("init", (1,)), ("start", ()),
    ("create_config", ([0], 0, 0)), ("set_config", (1, 200)), ("get_op_desc_size", (1,)),
])
def test_argument_errors_raise(name, args):
    with pytest.raises(TypeError, match=f"acl.prof.{name} args parse failed"):
        getattr(acl.prof, name)(*args)


def test_create_config_needs_a_list():
    with pytest.raises(TypeError, match="argument 1 is not list"):
        acl.prof.create_config((0,), 0, 0, ACL_PROF_TASK_TIME)


def test_ordering_errors(run, tmp_path):
    r, w = os.pipe()
    cfg = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
    assert acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, r) == 0  # a read end
    assert acl.prof.create_subscribe_config(3, ACL_AICORE_NONE, w) == 0
    assert acl.prof.model_subscribe(run.model_id + 1000, cfg) == ACL_ERROR_INVALID_MODEL_ID
    assert acl.prof.model_un_subscribe(run.model_id) == ACL_ERROR_INVALID_MODEL_ID
    ok(acl.prof.model_subscribe(run.model_id, cfg))
    assert acl.prof.model_subscribe(run.model_id, cfg) == ACL_ERROR_PROF_REPEAT_SUBSCRIBE
    assert acl.prof.init(str(tmp_path)) == ACL_ERROR_PROF_API_CONFLICT
    ok(acl.prof.model_un_subscribe(run.model_id))
    assert read_all(r, 4096) == b""
    os.close(r)
    ok(acl.prof.init(str(tmp_path)))
    assert acl.prof.init(str(tmp_path)) == ACL_ERROR_REPEAT_INITIALIZE
    r2, w2 = os.pipe()
    cfg2 = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w2)
    assert acl.prof.model_subscribe(run.model_id, cfg2) == ACL_ERROR_PROF_API_CONFLICT
    ok(acl.prof.finalize())
    assert acl.prof.finalize() == ACL_ERROR_PROF_NOT_RUN
    for c in (cfg, cfg2):
        ok(acl.prof.destroy_subscribe_config(c))
    assert acl.prof.destroy_subscribe_config(cfg) == ACL_ERROR_INVALID_PARAM
    os.close(r2)
    os.close(w2)


def test_pipe_never_read_does_not_block(run):
    os.environ["OPENACL_PROF_FLUSH_TIMEOUT_MS"] = "200"
    try:
        r, w = os.pipe()
        cfg = acl.prof.create_subscribe_config(1, ACL_AICORE_NONE, w)
        ok(acl.prof.model_subscribe(run.model_id, cfg))
        t0 = time.monotonic()
        run.execute(1500)  # 6000 records, 480 kB: far more than the pipe holds
        t1 = time.monotonic()
        ok(acl.prof.model_un_subscribe(run.model_id))
        t2 = time.monotonic()
        assert t2 - t1 < 5, "unsubscribe waits at most the flush timeout"
        data = read_all(r, 65536)
        os.close(r)
        acl.prof.destroy_subscribe_config(cfg)
        assert 0 < len(data) < 6000 * RECORD and len(data) % RECORD == 0
        assert all(d["signature_ok"] for d in decode(data))
        print(f"executions {t1 - t0:.3f} s, unsubscribe {t2 - t1:.3f} s, {len(data) // RECORD} records written")
    finally:
        del os.environ["OPENACL_PROF_FLUSH_TIMEOUT_MS"]


# ---- collection to files ----

def prof_folder(root):
    found = sorted(Path(root).glob("PROF_*"))
    assert len(found) == 1, found
    return found[0]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


OP_SUMMARY_COLUMNS = ["Model Name", "Model ID", "Task ID", "Stream ID", "Infer ID", "Op Name", "OP Type",
                      "Task Type", "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim",
                      "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                      "Output Formats"]


def check_trace(path):
    """The trace-event format: an object with traceEvents; X events with
    numeric ts/dur, M events naming processes and threads."""
    doc = json.loads(Path(path).read_text())
    assert isinstance(doc["traceEvents"], list)
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M", "i", "b", "e") and isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0, e
        elif e["ph"] in ("i", "b", "e"):
            assert isinstance(e["ts"], (int, float)), e
        else:
            assert e["name"] in ("process_name", "thread_name", "process_sort_index"), e
    # Viewers need the slices of one row nested or disjoint.
    rows = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            rows.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for row, slices in rows.items():
        slices.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for begin, end in slices:
            while open_ends and open_ends[-1] <= begin + 1e-3:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-3, f"row {row}: {begin}..{end} overlaps"
            open_ends.append(end)
    return doc


def check_profile(folder, model_name, executions, nodes=4):
    ops = read_csv(next(folder.glob("device_0/summary/op_summary_*.csv")))
    assert list(ops[0].keys())[:len(OP_SUMMARY_COLUMNS)] == OP_SUMMARY_COLUMNS
    assert len(ops) == nodes * executions
    assert {r["Model Name"] for r in ops} == {model_name}
    stats = read_csv(next(folder.glob("device_0/summary/op_statistic_*.csv")))
    assert sum(int(r["Count"]) for r in stats) == len(ops)
    api = {r["API Name"]: r for r in read_csv(next(folder.glob("host/summary/api_statistic_*.csv")))}
    doc = check_trace(next(folder.glob("timeline/msprof_*.json")))
    op_slices = {(e["args"]["Infer ID"], e["args"]["Task ID"]): e for e in doc["traceEvents"]
                 if e.get("cat") == "op"}
    for r in ops:
        e = op_slices[(int(r["Infer ID"]), int(r["Task ID"]))]
        assert e["name"] == r["Op Name"]
        assert abs(e["ts"] - float(r["Task Start Time(us)"])) < 0.002
        assert abs(e["dur"] - float(r["Task Duration(us)"])) < 0.002
    return ops, api, doc


def test_collection_to_files(run, tmp_path):
    out = tmp_path / "prof"
    ok(acl.prof.init(str(out)), "init")
    cfg = acl.prof.create_config([0], ACL_AICORE_NONE, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)
    assert cfg != 0, acl.get_recent_err_msg()
    assert acl.prof.create_config([7], ACL_AICORE_NONE, 0, ACL_PROF_TASK_TIME) == 0
    ok(acl.prof.set_config(1, "300MB"), "set_config")
    ok(acl.prof.start(cfg), "start")
    assert acl.prof.start(cfg) == ACL_ERROR_PROF_ALREADY_RUN
    run.execute(2)
    ok(acl.prof.stop(cfg), "stop")
    assert acl.prof.stop(cfg) == ACL_ERROR_PROF_NOT_RUN
    ok(acl.prof.destroy_config(cfg))
    ok(acl.prof.finalize())
    ops, api, doc = check_profile(prof_folder(out), "profnet", 2)
    assert {r["OP Type"] for r in ops} == set(OP_NAMES.values())
    assert api["aclmdlExecute"]["Count"] == "2"
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {"AscendCL API", "Device 0"}


def test_acl_json_profiler_section(tmp_path):
    out = tmp_path / "out"
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"profiler": {"switch": "on", "output": str(out)}}))
    ok(acl.init(str(config)), "init")
    ok(acl.rt.set_device(0))
    r = Run(build_model(tmp_path))
    r.execute(3)
    assert acl.prof.init(str(tmp_path)) == ACL_ERROR_PROF_ALREADY_RUN
    r.destroy()
    ok(acl.finalize())
    check_profile(prof_folder(out), "profnet", 3)


# ---- the msprof-style wrapper ----

APP = """
import sys
sys.path.insert(0, {tests!r})
import acl
from test_prof import Run, build_model
assert acl.init() == 0 and acl.rt.set_device(0) == 0
r = Run(build_model(sys.argv[1]))
r.execute(4)
r.destroy()
acl.rt.reset_device(0)
{finalize}
print("app done")
"""


@pytest.mark.parametrize("finalize", ["acl.finalize()", "pass"], ids=["finalize", "no-finalize"])
def test_msprof_wrapper_profiles_an_unmodified_program(tmp_path, finalize):
    app = tmp_path / "app.py"
    app.write_text(APP.format(tests=str(Path(__file__).parent), finalize=finalize))
    out = tmp_path / "result"
    proc = subprocess.run([sys.executable, str(MSPROF), f"--output={out}", sys.executable, str(app), str(tmp_path)],
                          env=H.child_env(), capture_output=True, text=True, timeout=120)
    H.check_child(proc)
    assert "app done" in proc.stdout
    assert "openacl-msprof: results in" in proc.stderr, proc.stderr
    check_profile(prof_folder(out), "profnet", 4)


def test_msprof_wrapper_application_form_and_errors(tmp_path):
    out = tmp_path / "r"
    proc = subprocess.run([sys.executable, str(MSPROF), f"--output={out}",
                           f"--application={sys.executable} -c \"import acl; acl.init(); acl.finalize()\""],
                          env=H.child_env(), capture_output=True, text=True, timeout=60)
    H.check_child(proc)
    assert len(list(out.glob("PROF_*"))) == 1
    proc = subprocess.run([sys.executable, str(MSPROF), "--output=" + str(out)], capture_output=True, text=True)
    assert proc.returncode == 2 and "no program" in proc.stderr
    proc = subprocess.run([sys.executable, str(MSPROF), sys.executable, "-c", "import sys; sys.exit(3)"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 3  # the program's own exit status


def test_msprof_wrapper_profiles_a_c_program(tmp_path):
    """The wrapper on a C binary: samples/c/model_run on a two-node model."""
    import mdl_models
    exe = H.build_dir() / "bin" / "model_run"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    model = mdl_models.two_outputs(tmp_path)
    out = tmp_path / "result"
    proc = subprocess.run([sys.executable, str(MSPROF), f"--output={out}", "--ascendcl=on", "--task-time=on",
                           str(exe), str(model.path), "--loop", "3"],
                          env=H.child_env(), capture_output=True, text=True, timeout=120)
    H.check_child(proc)
    assert "model_run: OK" in proc.stdout
    ops, api, _ = check_profile(prof_folder(out), "two_outputs", 3, nodes=2)
    assert {r["Op Name"] for r in ops} == {"add", "mul"}
    assert api["aclmdlExecute"]["Count"] == "3"


def test_msproftx_annotations(run, tmp_path):
    stamp = acl.prof.create_stamp()
    assert stamp != 0
    ok(acl.prof.set_stamp_trace_message(stamp, "inference", 9))
    assert acl.prof.pop() == ACL_ERROR_INVALID_PARAM
    assert acl.prof.range_stop(99999) == ACL_ERROR_INVALID_PARAM
    ok(acl.prof.init(str(tmp_path)))
    cfg = acl.prof.create_config([0], ACL_AICORE_NONE, 0, 0x80 | ACL_PROF_TASK_TIME)  # ACL_PROF_MSPROFTX
    ok(acl.prof.start(cfg))
    ok(acl.prof.mark(stamp))
    ok(acl.prof.mark_ex("checkpoint", 0))
    step = acl.prof.create_step_info()
    assert step != 0
    assert acl.prof.get_step_timestamp(step, 1, 0) == ACL_ERROR_INVALID_PARAM  # END before START
    ok(acl.prof.get_step_timestamp(step, 0, 0))
    ok(acl.prof.get_step_timestamp(step, 1, 0))
    assert acl.prof.destroy_step_info(step) is None
    range_id, ret = acl.prof.range_start(stamp)
    assert ret == 0 and range_id >= 1
    ok(acl.prof.push(stamp))
    run.execute(2)
    ok(acl.prof.pop())
    ok(acl.prof.range_stop(range_id))
    ok(acl.prof.stop(cfg))
    acl.prof.destroy_config(cfg)
    ok(acl.prof.finalize())
    assert acl.prof.destroy_stamp(stamp) is None
    doc = check_trace(next(prof_folder(tmp_path).glob("timeline/msprof_*.json")))
    tx = [e for e in doc["traceEvents"] if e.get("cat") == "msproftx"]
    assert sorted(e["ph"] for e in tx) == ["X", "b", "b", "e", "e", "i", "i"]
    assert {e["name"] for e in tx if not e["name"].startswith("Step ")} == {"inference", "checkpoint"}
    assert sorted(e["ph"] for e in tx if e["name"].startswith("Step ")) == ["b", "e"]


def test_single_ops_are_profiled(device, tmp_path):
    # aclopExecuteV2 / aclopCast executions are op_summary rows too, under
    # CANN's invalid model id (they belong to no model).
    from op_util import run_op
    out = tmp_path / "prof"
    ok(acl.prof.init(str(out)), "init")
    cfg = acl.prof.create_config([0], ACL_AICORE_NONE, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)
    assert cfg != 0, acl.get_recent_err_msg()
    ok(acl.prof.start(cfg), "start")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(3):
        y, = run_op("Add", [a, a])
    np.testing.assert_array_equal(y, a + a)
    ok(acl.prof.stop(cfg), "stop")
    ok(acl.prof.destroy_config(cfg))
    ok(acl.prof.finalize())
    folder = prof_folder(out)
    ops = read_csv(next(folder.glob("device_0/summary/op_summary_*.csv")))
    adds = [r for r in ops if r["OP Type"] == "Add"]
    assert len(adds) == 3, ops
    assert {r["Model ID"] for r in adds} == {str(0xFFFFFFFF)}
    assert {r["Model Name"] for r in adds} == {"Add"}
    assert {r["Input Shapes"] for r in adds} == {"2,3;2,3"}
    api = {r["API Name"]: r for r in read_csv(next(folder.glob("host/summary/api_statistic_*.csv")))}
    assert api["aclopExecuteV2"]["Count"] == "3"
    check_trace(next(folder.glob("timeline/msprof_*.json")))


def test_msprof_wrapper_profiles_the_main_job(tmp_path):
    # The quick start's classifier (samples/python/resnet50_classify.py) run
    # unmodified under openacl-msprof, on a small classifier: the timeline a
    # user opens in Perfetto holds every op of every execution.
    import mdl_models
    model = mdl_models.classifier(tmp_path, size=32, classes=10)
    sample = Path(__file__).resolve().parents[2] / "samples" / "python" / "resnet50_classify.py"
    out = tmp_path / "result"
    proc = subprocess.run([sys.executable, str(MSPROF), f"--output={out}", sys.executable, str(sample),
                           str(model.path), "--runs", "3"], env=H.child_env(), cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120)
    H.check_child(proc)
    assert "resnet50_classify: OK" in proc.stdout
    folder = prof_folder(out)
    ops = read_csv(next(folder.glob("device_0/summary/op_summary_*.csv")))
    executions = {r["Infer ID"] for r in ops}
    assert len(executions) >= 3, executions
    assert "Conv" in {r["OP Type"] for r in ops}
    doc = check_trace(next(folder.glob("timeline/msprof_*.json")))
    assert sum(1 for e in doc["traceEvents"] if e.get("cat") == "op") == len(ops)
