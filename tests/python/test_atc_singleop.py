"""atc --singleop: single-operator .om files from CANN's ops.json, and
acl.op.set_model_dir loading them (compat-notes §1.14, §2).
"""
import json

import numpy as np
import pytest

import acl
import acl_helpers as H
from test_atc import ATC, check_fails, check_ok, run_atc

pytestmark = pytest.mark.skipif(not ATC.exists(), reason=f"atc not built ({ATC})")

OPS = [
    {"op": "Add",
     "input_desc": [{"format": "ND", "shape": [2, 3], "type": "float"},
                    {"format": "ND", "shape": [2, 3], "type": "float"}],
     "output_desc": [{"format": "ND", "shape": [2, 3], "type": "float"}]},
    {"op": "Cast",
     "input_desc": [{"format": "ND", "shape": [4], "type": "float"}],
     "output_desc": [{"format": "ND", "shape": [4], "type": "float16"}],
     "attr": [{"name": "dst_type", "type": "int", "value": 1}]},
]


def write_ops(tmp_path, ops):
    path = tmp_path / "ops.json"
    path.write_text(json.dumps(ops))
    return path


def test_builds_one_om_per_op(tmp_path):
    out = tmp_path / "op_models"
    out.mkdir()
    proc = check_ok(run_atc(f"--singleop={write_ops(tmp_path, OPS)}", f"--output={out}", "--soc_version=Ascend310P3"))
    assert "ATC run success" in proc.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == ["0_Add.om", "1_Cast.om"], names
    # Mode 6 reads them like any .om.
    info = check_ok(run_atc("--mode=6", f"--om={out / '0_Add.om'}")).stdout
    assert "single op: Add(float32[2,3] ND, float32[2,3] ND) -> (float32[2,3] ND)" in info, info


def test_every_bad_op_is_listed(tmp_path):
    out = tmp_path / "op_models"
    out.mkdir()
    ops = OPS + [{"op": "Addd", "input_desc": [], "output_desc": []},
                 {"op": "Add", "input_desc": [{"format": "ND", "shape": [2], "type": "float"},
                                              {"format": "ND", "shape": [3], "type": "float"}],
                  "output_desc": [{"format": "ND", "shape": [2], "type": "float"}]}]
    proc = check_fails(run_atc(f"--singleop={write_ops(tmp_path, ops)}", f"--output={out}"),
                       "2 of 4 op(s) cannot be built", "op 2 (Addd)", "did you mean Add", "op 3 (Add)")
    assert proc.returncode != 0


@pytest.mark.parametrize("ops,needle", [
    ("not json", "not valid JSON"),
    ([{"op": "Add", "input_desc": [{"shape": [2], "type": "float99"}]}], "input_desc[0].type"),
    ([{"input_desc": []}], "missing op type"),
])
def test_bad_ops_json(tmp_path, ops, needle):
    path = tmp_path / "ops.json"
    path.write_text(ops if isinstance(ops, str) else json.dumps(ops))
    out = tmp_path / "o"
    out.mkdir()
    check_fails(run_atc(f"--singleop={path}", f"--output={out}"), needle)


def test_output_folder_must_exist(tmp_path):
    check_fails(run_atc(f"--singleop={write_ops(tmp_path, OPS)}", f"--output={tmp_path / 'missing'}"),
                "does not exist")


@pytest.mark.skipif(not hasattr(acl.op, "set_model_dir"), reason="acl.op.set_model_dir not built")
def test_set_model_dir_loads_and_ops_run(tmp_path, device):
    out = tmp_path / "op_models"
    out.mkdir()
    check_ok(run_atc(f"--singleop={write_ops(tmp_path, OPS)}", f"--output={out}"))
    assert acl.op.set_model_dir(str(out)) == 0, acl.get_recent_err_msg()
    from op_util import run_op
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, = run_op("Add", [a, a])
    np.testing.assert_array_equal(y, a + a)
    # A folder that does not exist is an error; an empty one is not.
    assert acl.op.set_model_dir(str(tmp_path / "missing")) != 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert acl.op.set_model_dir(str(empty)) == 0
