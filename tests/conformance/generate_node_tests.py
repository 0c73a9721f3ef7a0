#!/usr/bin/env python3
"""Writes the ONNX backend node tests to a folder, from the case definitions
that ship inside the PyPI `onnx` package (its wheel no longer carries the
generated data). Nothing is downloaded.

    generate_node_tests.py OUTDIR

Layout, as onnx's own data folder: OUTDIR/<test>/model.onnx and
OUTDIR/<test>/test_data_set_<k>/{input,output}_<j>.pb. Tests whose inputs or
outputs are not plain tensors (sequences, maps, optionals) get a file
`non_tensor_io` instead of data sets. OUTDIR/VERSION records the versions of
onnx and ml_dtypes (whose casts compute the 4-bit types' expected outputs);
a folder already complete for these versions is left as it is.
"""
import os
import shutil
import sys
import warnings


def main(out_dir: str) -> int:
    import onnx
    import onnx.backend.test.case.node as node_cases
    from onnx import numpy_helper

    import ml_dtypes

    stamp = os.path.join(out_dir, "VERSION")
    version = f"onnx {onnx.__version__}, ml_dtypes {ml_dtypes.__version__}"
    if os.path.exists(stamp) and open(stamp).read().strip() == version:
        return 0
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    for case in cases:
        d = os.path.join(out_dir, case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        tensor_io = all(v.type.HasField("tensor_type") for v in list(graph.input) + list(graph.output))
        if not tensor_io:
            open(os.path.join(d, "non_tensor_io"), "w").close()
            continue
        for k, (inputs, outputs) in enumerate(case.data_sets):
            sd = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(sd, exist_ok=True)
            for kind, values, decl in (("input", inputs, graph.input), ("output", outputs, graph.output)):
                for j, value in enumerate(values):
                    proto = value if isinstance(value, onnx.TensorProto) else numpy_helper.from_array(value, decl[j].name)
                    with open(os.path.join(sd, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(proto.SerializeToString())
    with open(stamp, "w") as f:
        f.write(version + "\n")
    print(f"wrote {len(cases)} node tests ({version}) to {out_dir}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
