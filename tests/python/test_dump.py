"""acl.mdl.init_dump / set_dump / finalize_dump and acl.json's `dump` section
through Python: a small ONNX model built with onnx.helper is dumped, the .npy
files are read back with np.load and compared with the intermediates numpy
computes (docs/models.md "Dump"; spec §1.1, §3.8; compat-notes §4)."""
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import acl
import acl_helpers as H

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_PARSE_FILE = 100006
ACL_ERROR_INVALID_DUMP_CONFIG = 100009
ACL_ERROR_DUMP_ALREADY_RUN = 100044
ACL_ERROR_DUMP_NOT_RUN = 100045

RNG = np.random.default_rng(7)
W = RNG.uniform(-1, 1, (4, 3)).astype(np.float32)
B = RNG.uniform(-0.5, 0.5, 3).astype(np.float32)
X = RNG.uniform(-1, 1, (2, 4)).astype(np.float32)
S = RNG.uniform(0.5, 2, (2, 3)).astype(np.float32)

# File-name forms of the op names ('/' and '.' become '_'). The optimiser may
# fuse layer1.add and act into the MatMul (see test_all_mode_files_match_numpy).
MATMUL, ADD, RELU, MUL = "MatMul._layer1_MatMul", "Add.layer1_add", "Relu.act", "Mul.scale"


def ok(ret, what=""):
    assert ret == H.ACL_SUCCESS, f"{what} -> {ret}: {acl.get_recent_err_msg()}"


def build_model(directory, name="pydump"):
    """y = relu(x @ W + B) * s; op names with '/' and '.' in them."""
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"], name="/layer1/MatMul"),
             helper.make_node("Add", ["xw", "B"], ["lin"], name="layer1.add"),
             helper.make_node("Relu", ["lin"], ["r"], name="act"),
             helper.make_node("Mul", ["r", "s"], ["y"], name="scale")]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    path = Path(directory) / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def reference():
    xw = X @ W
    lin = xw + B
    r = np.maximum(lin, 0)
    return {"xw": xw, "lin": lin, "r": r, "y": r * S}


def write_config(directory, dump):
    path = Path(directory) / "dump.json"
    path.write_text(json.dumps({"dump": dump}))
    return str(path)


class Run:
    """Device buffers and datasets for one model; execute() runs it once."""

    def __init__(self):
        self.sizes = [X.nbytes, S.nbytes, S.nbytes]
        self.ptrs, self.bufs = [], []
        for size in self.sizes:
            ptr, ret = acl.rt.malloc(size, H.ACL_MEM_MALLOC_HUGE_FIRST)
            ok(ret, "malloc")
            self.ptrs.append(ptr)
            self.bufs.append(acl.create_data_buffer(ptr, size))
        H.write_device(acl, self.ptrs[0], X)
        H.write_device(acl, self.ptrs[1], S)
        self.inputs = acl.mdl.create_dataset()
        self.outputs = acl.mdl.create_dataset()
        for ds, buf in ((self.inputs, self.bufs[0]), (self.inputs, self.bufs[1]), (self.outputs, self.bufs[2])):
            _, ret = acl.mdl.add_dataset_buffer(ds, buf)
            ok(ret, "add_dataset_buffer")

    def execute(self, model_id):
        ok(acl.mdl.execute(model_id, self.inputs, self.outputs), "execute")
        return H.read_device(acl, self.ptrs[2], S.nbytes, "float32").reshape(2, 3)

    def destroy(self):
        acl.mdl.destroy_dataset(self.inputs)
        acl.mdl.destroy_dataset(self.outputs)
        for buf, ptr in zip(self.bufs, self.ptrs):
            acl.destroy_data_buffer(buf)
            acl.rt.free(ptr)


@pytest.fixture
def run(device):
    r = Run()
    yield r
    r.destroy()
    acl.mdl.finalize_dump()  # whatever the test left


def load(path):
    model_id, ret = acl.mdl.load_from_file(str(path))
    ok(ret, "load_from_file")
    return model_id


FILE_RE = re.compile(r"^(?P<op>[^.]+\.[^.]+)\.(?P<task>\d+)\.(?P<stream>\d+)\.(?P<stamp>\d+)\.(?P<rest>.+)$")


def executions(root, model="pydump", model_id=None, device=0):
    """{index: {"<op_type>.<op_name>.<role>.<i>.npy": path}} after checking the tree
    {root}/{time}/{device}/{model}/{model_id}/{index}/{file}."""
    out = {}
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
        parts = path.relative_to(root).parts
        assert len(parts) == 6, parts
        time, dev, name, mid, index, fname = parts
        assert re.fullmatch(r"\d{14}", time), time
        assert dev == str(device) and name == model
        if model_id is not None:
            assert mid == str(model_id)
        m = FILE_RE.match(fname)
        assert m, fname
        assert m["stream"] == "0"
        out.setdefault(int(index), {})[f"{m['op']}.{m['rest']}"] = path
    return out


# ---- the calls and their order ----

def test_functions_and_call_order(device, tmp_path):
    cfg = write_config(tmp_path, {"dump_path": str(tmp_path), "dump_list": [{"model_name": "pydump"}]})
    assert acl.mdl.set_dump(cfg) == ACL_ERROR_DUMP_NOT_RUN
    assert acl.mdl.finalize_dump() == ACL_ERROR_DUMP_NOT_RUN
    ok(acl.mdl.init_dump(), "init_dump")
    assert acl.mdl.init_dump() == ACL_ERROR_DUMP_ALREADY_RUN
    assert acl.mdl.set_dump() == ACL_ERROR_INVALID_PARAM
    assert acl.mdl.set_dump(str(tmp_path / "missing.json")) == ACL_ERROR_INVALID_FILE
    (tmp_path / "bad.json").write_text("{ nope")
    assert acl.mdl.set_dump(str(tmp_path / "bad.json")) == ACL_ERROR_PARSE_FILE
    bad = write_config(tmp_path, {"dump_path": str(tmp_path), "dump_list": [], "dump_mode": "both"})
    assert acl.mdl.set_dump(bad) == ACL_ERROR_INVALID_DUMP_CONFIG
    msg = acl.get_recent_err_msg()
    assert "dump_mode" in msg and '"all"' in msg, msg
    with pytest.raises(TypeError):
        acl.mdl.set_dump(None)
    cfg = write_config(tmp_path, {"dump_path": str(tmp_path), "dump_list": [{"model_name": "pydump"}]})
    ok(acl.mdl.set_dump(cfg), "set_dump")
    ok(acl.mdl.finalize_dump(), "finalize_dump")
    assert acl.mdl.finalize_dump() == ACL_ERROR_DUMP_NOT_RUN


# ---- what is written ----

def test_all_mode_files_match_numpy(run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    model = build_model(tmp_path)
    ok(acl.mdl.init_dump(), "init_dump")
    ok(acl.mdl.set_dump(write_config(tmp_path, {"dump_path": str(out), "dump_mode": "all",
                                                "dump_list": [{"model_name": "pydump"}]})), "set_dump")
    model_id = load(model)
    ref = reference()
    y = run.execute(model_id)
    np.testing.assert_allclose(y, ref["y"], rtol=1e-6)
    runs = executions(out, model_id=model_id)
    assert list(runs) == [0]
    files = runs[0]
    # The optimiser may fuse the Add and the Relu into the MatMul (bias and
    # activation epilogue): the MatMul then writes r and has B as a third input.
    # Whatever was fused, every dumped tensor is the numpy value it stands for.
    ops = {key.split(".input")[0].split(".output")[0] for key in files}
    assert {MATMUL, MUL} <= ops <= {MATMUL, ADD, RELU, MUL}, ops
    fused = ADD not in ops
    if fused:
        assert RELU not in ops
    expected = {
        f"{MATMUL}.input.0.npy": X, f"{MATMUL}.input.1.npy": W,
        f"{MATMUL}.output.0.npy": ref["r"] if fused else ref["xw"],
        f"{MUL}.input.0.npy": ref["r"], f"{MUL}.input.1.npy": S, f"{MUL}.output.0.npy": ref["y"],
    }
    if fused:
        expected[f"{MATMUL}.input.2.npy"] = B
    else:
        expected.update({f"{ADD}.input.0.npy": ref["xw"], f"{ADD}.input.1.npy": B, f"{ADD}.output.0.npy": ref["lin"],
                         f"{RELU}.input.0.npy": ref["lin"], f"{RELU}.output.0.npy": ref["r"]})
    assert sorted(files) == sorted(expected)
    for key, want in expected.items():
        got = np.load(files[key])
        assert got.dtype == np.float32 and got.shape == want.shape, key
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)
    # One op's files share the task id and the timestamp; task ids follow execution order.
    tasks = {}
    for key, path in files.items():
        m = FILE_RE.match(path.name)
        tasks.setdefault(key.split(".input")[0].split(".output")[0], set()).add((m["task"], m["stamp"]))
    assert all(len(v) == 1 for v in tasks.values()), tasks
    order = sorted(tasks, key=lambda op: int(next(iter(tasks[op]))[0]))
    assert order == ([MATMUL, MUL] if fused else [MATMUL, ADD, RELU, MUL])


def test_layer_filter_output_mode_and_indexes(run, tmp_path):
    model = build_model(tmp_path)
    ok(acl.mdl.init_dump(), "init_dump")
    ok(acl.mdl.set_dump(write_config(tmp_path, {"dump_path": str(tmp_path), "dump_list": [
        {"model_name": "pydump", "layer": ["scale", "/layer1/MatMul"]}]})), "set_dump")
    model_id = load(model)
    run.execute(model_id)
    run.execute(model_id)
    # dump_path is tmp_path itself: the model and config files lie next to the dump tree.
    root = tmp_path / "dump_tree"
    root.mkdir()
    for child in tmp_path.iterdir():
        if child.is_dir() and re.fullmatch(r"\d{14}", child.name):
            child.rename(root / child.name)
    runs = executions(root, model_id=model_id)
    assert sorted(runs) == [0, 1]
    ref = reference()
    for files in runs.values():
        assert sorted(files) == [f"{MATMUL}.output.0.npy", f"{MUL}.output.0.npy"]
        np.testing.assert_allclose(np.load(files[f"{MUL}.output.0.npy"]), ref["y"], rtol=1e-5, atol=1e-6)
        # xw unfused, r with the bias and Relu fused into the MatMul.
        matmul = np.load(files[f"{MATMUL}.output.0.npy"])
        assert any(np.allclose(matmul, ref[k], rtol=1e-5, atol=1e-6) for k in ("xw", "r")), matmul


def test_stats(run, tmp_path):
    model = build_model(tmp_path)
    ok(acl.mdl.init_dump(), "init_dump")
    ok(acl.mdl.set_dump(write_config(tmp_path, {"dump_path": str(tmp_path), "dump_data": "stats",
                                                "dump_mode": "all",
                                                "dump_list": [{"model_name": "pydump", "layer": ["scale"]}]})),
       "set_dump")
    model_id = load(model)
    run.execute(model_id)
    stats = list(tmp_path.rglob("*.stats.csv"))
    assert len(stats) == 1 and stats[0].name.startswith(MUL + ".")
    lines = stats[0].read_text().splitlines()
    assert lines[0] == "tensor,dtype,shape,count,min,max,mean,nan_count"
    ref = reference()
    for line, (label, want) in zip(lines[1:], [("input.0", ref["r"]), ("input.1", S), ("output.0", ref["y"])]):
        f = line.split(",")
        assert f[:4] == [label, "float32", "2x3", "6"], line
        np.testing.assert_allclose([float(v) for v in f[4:7]], [want.min(), want.max(), want.mean()], rtol=1e-5,
                                   atol=1e-6)
        assert f[7] == "0"
    assert len(lines) == 4


def test_model_not_listed_writes_nothing(run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    model = build_model(tmp_path, name="other")
    ok(acl.mdl.init_dump(), "init_dump")
    ok(acl.mdl.set_dump(write_config(tmp_path, {"dump_path": str(out),
                                                "dump_list": [{"model_name": "pydump"}]})), "set_dump")
    run.execute(load(model))
    assert list(out.iterdir()) == []


def test_acl_json_dump_section(tmp_path):
    """acl.init(acl.json with a dump section) in a fresh interpreter: init_dump is refused, the model is dumped."""
    out = tmp_path / "out"
    out.mkdir()
    model = build_model(tmp_path)
    acl_json = tmp_path / "acl.json"
    acl_json.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_mode": "output",
                                             "dump_list": [{"model_name": "pydump", "layer": ["scale"]}]}}))
    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        import acl
        assert acl.init({str(acl_json)!r}) == 0, acl.get_recent_err_msg()
        assert acl.rt.set_device(0) == 0
        assert acl.mdl.init_dump() == {ACL_ERROR_DUMP_ALREADY_RUN}
        assert acl.mdl.finalize_dump() == {ACL_ERROR_DUMP_NOT_RUN}
        mid, ret = acl.mdl.load_from_file({str(model)!r})
        assert ret == 0
        ptrs = []
        ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
        for ds, arr in ((ins, np.load({str(tmp_path / 'x.npy')!r})), (ins, np.load({str(tmp_path / 's.npy')!r})),
                        (outs, np.zeros((2, 3), np.float32))):
            p, ret = acl.rt.malloc(arr.nbytes, 0)
            assert ret == 0
            assert acl.rt.memcpy(p, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0
            acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(p, arr.nbytes))
        assert acl.mdl.execute(mid, ins, outs) == 0, acl.get_recent_err_msg()
        print(mid)
        assert acl.finalize() == 0
    """)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "s.npy", S)
    model_id = int(H.check_child(H.run_python(code)).strip())
    runs = executions(out, model_id=model_id)
    assert list(runs) == [0]
    assert list(runs[0]) == [f"{MUL}.output.0.npy"]
    np.testing.assert_allclose(np.load(runs[0][f"{MUL}.output.0.npy"]), reference()["y"], rtol=1e-5)


def test_acl_json_bad_dump_section_fails_init(tmp_path):
    acl_json = tmp_path / "acl.json"
    acl_json.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "missing"),
                                             "dump_list": [{"model_name": "m"}]}}))
    code = textwrap.dedent(f"""
        import acl
        print(acl.init({str(acl_json)!r}))
        print(acl.get_recent_err_msg())
    """)
    out = H.check_child(H.run_python(code)).splitlines()
    assert out[0] == str(ACL_ERROR_INVALID_DUMP_CONFIG)
    assert "dump_path" in out[1]
