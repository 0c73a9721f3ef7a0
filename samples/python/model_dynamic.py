#!/usr/bin/env python3
"""Dynamic batch and dynamic image size, through gears built by atc.

A model with a free dimension is compiled by `atc` into an offline model
(.om) with a fixed set of gears: --dynamic_batch_size="1,2,4,8" (batch sizes)
or --dynamic_image_size="8,8;16,16;24,32" (height,width pairs). Such a model
has one extra input, "ascend_mbatch_shape_data" (the last one). The program:

  1. finds it with get_input_index_by_name and allocates
     get_input_size_by_index bytes for it, in its place in the input dataset;
  2. allocates the data input for the largest gear;
  3. before each execute, picks a gear with set_dynamic_batch_size or
     set_dynamic_hw_size (it writes the choice into that extra input);
  4. reads the real output shape with get_cur_output_dims.

Both models are built here with onnx.helper; atc is taken from $OPENACL_ATC
(default build/bin/atc, relative to the repository).

    PYTHONPATH=build/python python3 samples/python/model_dynamic.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_DYNAMIC_TENSOR_NAME = "ascend_mbatch_shape_data"

DEVICE_ID = 0
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATC = os.environ.get("OPENACL_ATC", os.path.join(REPO_ROOT, "build", "bin", "atc"))

BATCH_GEARS = [1, 2, 4, 8]
IMAGES = 7                              # processed as 4 + 2 + 1: the gears, largest first
HW_GEARS = [(8, 8), (16, 16), (24, 32)]
CHANNELS, FILTERS, CLASSES = 3, 4, 5


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def conv_reference(x, w, b):
    """3x3 convolution with padding 1, NCHW, plus bias, in numpy."""
    n, _, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd), np.float32)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out + b[None, :, None, None]


def save(graph, folder, name):
    path = os.path.join(folder, f"{name}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def build_classifier(folder):
    """image[N,3,8,8] -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> scores[N,5]; N free."""
    rng = np.random.default_rng(4)
    cw = rng.standard_normal((FILTERS, CHANNELS, 3, 3)).astype(np.float32) * 0.4
    cb = rng.standard_normal(FILTERS).astype(np.float32) * 0.1
    fw = rng.standard_normal((FILTERS, CLASSES)).astype(np.float32)
    fb = rng.standard_normal(CLASSES).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["image", "cw", "cb"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["scores"], name="fc")],
        "classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", CHANNELS, 8, 8])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", CLASSES])],
        [numpy_helper.from_array(a, n) for a, n in ((cw, "cw"), (cb, "cb"), (fw, "fw"), (fb, "fb"))])
    return (save(graph, folder, "classifier"),
            lambda x: np.maximum(conv_reference(x, cw, cb), 0).mean(axis=(2, 3)) @ fw + fb)


def build_filter(folder):
    """x[1,3,H,W] -> Relu(Conv 3x3) -> y[1,4,H,W]; H and W free."""
    rng = np.random.default_rng(6)
    cw = rng.standard_normal((FILTERS, CHANNELS, 3, 3)).astype(np.float32) * 0.4
    cb = rng.standard_normal(FILTERS).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "filter",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, FILTERS, "H", "W"])],
        [numpy_helper.from_array(cw, "cw"), numpy_helper.from_array(cb, "cb")])
    return save(graph, folder, "filter"), lambda x: np.maximum(conv_reference(x, cw, cb), 0)


def run_atc(onnx_path, *options):
    """Compiles onnx_path into <same name>_gears.om with atc; returns the .om path."""
    output = os.path.splitext(onnx_path)[0] + "_gears"
    cmd = [ATC, f"--model={onnx_path}", "--framework=5", f"--output={output}", "--soc_version=Ascend310", *options]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SampleError(f"atc exited {proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}")
    print(f"  atc      : {os.path.basename(onnx_path)} {' '.join(options)} -> {os.path.basename(output)}.om")
    return output + ".om"


class GearModel:
    """A loaded gear model, its description, and datasets sized for its largest gear."""

    def __init__(self, path, cleanup):
        self.model_id, ret = acl.mdl.load_from_file(path)
        check_ret("acl.mdl.load_from_file", ret)
        cleanup.append(lambda: acl.mdl.unload(self.model_id))
        self.desc = acl.mdl.create_desc()
        if self.desc == 0:
            raise SampleError("acl.mdl.create_desc returned 0")
        cleanup.append(lambda: acl.mdl.destroy_desc(self.desc))
        check_ret("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))

        self.gear_index, ret = acl.mdl.get_input_index_by_name(self.desc, ACL_DYNAMIC_TENSOR_NAME)
        check_ret(f"acl.mdl.get_input_index_by_name({ACL_DYNAMIC_TENSOR_NAME})", ret)
        num_inputs = acl.mdl.get_num_inputs(self.desc)
        self.in_ptrs = []
        self.inputs = self._dataset([acl.mdl.get_input_size_by_index(self.desc, i) for i in range(num_inputs)],
                                    self.in_ptrs, cleanup, "input")
        self.out_ptrs = []
        self.outputs = self._dataset([acl.mdl.get_output_size_by_index(self.desc, i)
                                      for i in range(acl.mdl.get_num_outputs(self.desc))],
                                     self.out_ptrs, cleanup, "output")
        dims, ret = acl.mdl.get_input_dims(self.desc, 0)
        check_ret("acl.mdl.get_input_dims", ret)
        print(f"  model    : id {self.model_id}, {num_inputs} inputs: '{dims['name']}' {dims['dims']} and "
              f"'{ACL_DYNAMIC_TENSOR_NAME}' at index {self.gear_index} "
              f"({acl.mdl.get_input_size_by_index(self.desc, self.gear_index)} bytes)")

    @staticmethod
    def _dataset(sizes, ptrs, cleanup, what):
        dataset = acl.mdl.create_dataset()
        if dataset == 0:
            raise SampleError(f"acl.mdl.create_dataset ({what}) returned 0")
        cleanup.append(lambda: acl.mdl.destroy_dataset(dataset))
        for size in sizes:
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check_ret(f"acl.rt.malloc ({what}, {size} bytes)", ret)
            cleanup.append(lambda p=ptr: acl.rt.free(p))
            buffer = acl.create_data_buffer(ptr, size)
            if buffer == 0:
                raise SampleError(f"acl.create_data_buffer ({what}) returned 0")
            cleanup.append(lambda b=buffer: acl.destroy_data_buffer(b))
            _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
            check_ret(f"acl.mdl.add_dataset_buffer ({what})", ret)
            ptrs.append(ptr)
        return dataset

    def execute(self, x):
        """Copies x in, executes under the gear already selected, returns output 0
        in the shape get_cur_output_dims reports."""
        x = np.ascontiguousarray(x, np.float32)
        check_ret("acl.rt.memcpy H2D", acl.rt.memcpy(self.in_ptrs[0], x.nbytes, x.ctypes.data, x.nbytes,
                                                     ACL_MEMCPY_HOST_TO_DEVICE))
        check_ret("acl.mdl.execute", acl.mdl.execute(self.model_id, self.inputs, self.outputs))
        dims, ret = acl.mdl.get_cur_output_dims(self.desc, 0)
        check_ret("acl.mdl.get_cur_output_dims", ret)
        out = np.zeros(dims["dims"], np.float32)
        check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(out.ctypes.data, out.nbytes, self.out_ptrs[0], out.nbytes,
                                                     ACL_MEMCPY_DEVICE_TO_HOST))
        return out


def dynamic_batch(folder, cleanup):
    onnx_path, reference = build_classifier(folder)
    om = run_atc(onnx_path, f"--input_shape=image:-1,{CHANNELS},8,8",
                 f"--dynamic_batch_size={','.join(map(str, BATCH_GEARS))}")
    model = GearModel(om, cleanup)
    batch, ret = acl.mdl.get_dynamic_batch(model.desc)
    check_ret("acl.mdl.get_dynamic_batch", ret)
    if batch["batch"] != BATCH_GEARS:
        raise SampleError(f"gears {batch['batch']}, built with {BATCH_GEARS}")
    print(f"  gears    : batch sizes {batch['batch']}")

    images = np.random.default_rng(8).uniform(0, 1, (IMAGES, CHANNELS, 8, 8)).astype(np.float32)
    scores = np.zeros((IMAGES, CLASSES), np.float32)
    done = 0
    while done < IMAGES:
        # the largest gear that the remaining images fill completely
        gear = max(g for g in batch["batch"] if g <= IMAGES - done)
        check_ret("acl.mdl.set_dynamic_batch_size",
                  acl.mdl.set_dynamic_batch_size(model.model_id, model.inputs, model.gear_index, gear))
        out = model.execute(images[done:done + gear])
        if list(out.shape) != [gear, CLASSES]:
            raise SampleError(f"gear {gear}: output dims {list(out.shape)}")
        scores[done:done + gear] = out
        print(f"  batch {gear}  : images {done}..{done + gear - 1}, output dims {list(out.shape)}")
        done += gear
    if not np.allclose(scores, reference(images), rtol=1e-4, atol=1e-5):
        raise SampleError("dynamic batch scores differ from numpy")
    print(f"  verified : {IMAGES} images, no padding, every score matches numpy")


def dynamic_image_size(folder, cleanup):
    onnx_path, reference = build_filter(folder)
    om = run_atc(onnx_path, f"--input_shape=x:1,{CHANNELS},-1,-1",
                 "--dynamic_image_size=" + ";".join(f"{h},{w}" for h, w in HW_GEARS))
    model = GearModel(om, cleanup)
    hw, ret = acl.mdl.get_dynamic_hw(model.desc, -1)
    check_ret("acl.mdl.get_dynamic_hw", ret)
    if [tuple(p) for p in hw["hw"]] != HW_GEARS:
        raise SampleError(f"gears {hw['hw']}, built with {HW_GEARS}")
    print(f"  gears    : image sizes (h, w) {hw['hw']}")
    rng = np.random.default_rng(9)
    for h, w in reversed(HW_GEARS):
        x = rng.uniform(-1, 1, (1, CHANNELS, h, w)).astype(np.float32)
        check_ret("acl.mdl.set_dynamic_hw_size",
                  acl.mdl.set_dynamic_hw_size(model.model_id, model.inputs, model.gear_index, h, w))
        out = model.execute(x)
        if not np.allclose(out, reference(x), rtol=1e-4, atol=1e-5):
            raise SampleError(f"{h}x{w}: output differs from numpy")
        print(f"  image {h}x{w}: output dims {list(out.shape)}, matches numpy")


def main():
    if not os.path.exists(ATC):
        print(f"model_dynamic: FAILED: atc not found at {ATC} (build it, or set OPENACL_ATC)", file=sys.stderr)
        return 1
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"model_dynamic: FAILED: acl.init -> {check}", file=sys.stderr)
        return 1
    cleanup = []
    failure = None
    with tempfile.TemporaryDirectory(prefix="openacl_sample_") as folder:
        try:
            check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
            cleanup.append(lambda: acl.rt.reset_device(DEVICE_ID))
            dynamic_batch(folder, cleanup)
            dynamic_image_size(folder, cleanup)
        except SampleError as exc:
            failure = str(exc)
        errors = [str(ret) for ret in (undo() for undo in reversed(cleanup)) if ret != ACL_SUCCESS]
    acl.finalize()
    if failure or errors:
        print(f"model_dynamic: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    print("model_dynamic: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
