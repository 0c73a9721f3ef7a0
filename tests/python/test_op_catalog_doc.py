"""docs/op-catalog.md is what the op registry says (openacl_op_catalog prints it).

Regenerate after changing a catalogue entry:
    build/bin/openacl_op_catalog > docs/op-catalog.md
"""
import subprocess

import pytest

import acl_helpers as H

TOOL = H.build_dir() / "bin" / "openacl_op_catalog"
DOC = H.REPO_ROOT / "docs" / "op-catalog.md"


@pytest.mark.skipif(not TOOL.exists(), reason=f"openacl_op_catalog not built ({TOOL})")
def test_catalogue_doc_is_generated_from_the_registry():
    out = subprocess.run([str(TOOL)], capture_output=True, text=True, check=True, timeout=60).stdout
    assert DOC.read_text() == out, (
        "docs/op-catalog.md is out of date: run build/bin/openacl_op_catalog > docs/op-catalog.md")
    # Every op named in the single-operator issue is there.
    for op in ["Add", "Sub", "Mul", "RealDiv", "Div", "Pow", "Maximum", "Minimum", "Exp", "Log", "Sqrt", "Rsqrt",
               "Abs", "Neg", "Square", "Relu", "Sigmoid", "Tanh", "Gelu", "SoftmaxV2", "LogSoftmaxV2", "Select",
               "Cast", "MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "Conv2D", "MaxPool", "AvgPool",
               "ReduceSum", "ReduceMean", "ReduceMax", "ArgMaxV2", "TopK", "Transpose", "Reshape", "ExpandDims",
               "Squeeze", "Slice", "StridedSlice", "ConcatD", "ConcatV2", "SplitD", "GatherV2", "Pad", "Fill",
               "Tile", "LayerNorm", "NonZero", "Unique"]:
        assert f"| `{op}` |" in out, f"{op} is not in the catalogue"
