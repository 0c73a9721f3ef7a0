#!/usr/bin/env python3
"""Many images through a fixed-batch model.

Builds a tiny image classifier with onnx.helper (Conv 3x3 -> Relu ->
GlobalAveragePool -> Flatten -> Gemm) whose input is a fixed batch of
BATCH images [BATCH, 3, 8, 8]. IMAGES images are classified BATCH at a time:
each image is copied to its row of one device input buffer (pointer
arithmetic on the buffer's address), the last, partial batch is padded with
zero rows, and the padded rows' results are ignored. Every result is checked
against numpy.

    PYTHONPATH=build/python python3 samples/python/model_multi_batch.py
"""
import os
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

DEVICE_ID = 0
BATCH = 4
IMAGES = 10                    # 3 batches: 4 + 4 + 2 (+ 2 padding rows)
CHANNELS, HEIGHT, WIDTH = 3, 8, 8
FILTERS, CLASSES = 4, 5


class SampleError(RuntimeError):
    pass


def check_ret(what, ret):
    if ret != ACL_SUCCESS:
        raise SampleError(f"{what} failed, ret={ret}: {acl.get_recent_err_msg()}")


def build_model(folder):
    rng = np.random.default_rng(3)
    conv_w = rng.standard_normal((FILTERS, CHANNELS, 3, 3)).astype(np.float32) * 0.4
    conv_b = rng.standard_normal(FILTERS).astype(np.float32) * 0.1
    fc_w = rng.standard_normal((FILTERS, CLASSES)).astype(np.float32)
    fc_b = rng.standard_normal(CLASSES).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["c"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["scores"], name="fc")],
        "tiny_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [BATCH, CHANNELS, HEIGHT, WIDTH])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [BATCH, CLASSES])],
        [numpy_helper.from_array(conv_w, "conv_w"), numpy_helper.from_array(conv_b, "conv_b"),
         numpy_helper.from_array(fc_w, "fc_w"), numpy_helper.from_array(fc_b, "fc_b")])
    path = os.path.join(folder, "tiny_classifier.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)

    def reference(images):
        n = images.shape[0]
        padded = np.pad(images, ((0, 0), (0, 0), (1, 1), (1, 1)))
        conv = np.zeros((n, FILTERS, HEIGHT, WIDTH), np.float32)
        for i in range(3):
            for j in range(3):
                conv += np.einsum("nchw,fc->nfhw", padded[:, :, i:i + HEIGHT, j:j + WIDTH], conv_w[:, :, i, j])
        pooled = np.maximum(conv + conv_b[None, :, None, None], 0).mean(axis=(2, 3))
        return pooled @ fc_w + fc_b

    return path, reference


def run(folder, cleanup):
    model_path, reference = build_model(folder)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check_ret("acl.mdl.load_from_file", ret)
    cleanup.append(lambda: acl.mdl.unload(model_id))
    desc = acl.mdl.create_desc()
    if desc == 0:
        raise SampleError("acl.mdl.create_desc returned 0")
    cleanup.append(lambda: acl.mdl.destroy_desc(desc))
    check_ret("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))
    in_dims, ret = acl.mdl.get_input_dims(desc, 0)
    check_ret("acl.mdl.get_input_dims", ret)
    out_dims, ret = acl.mdl.get_output_dims(desc, 0)
    check_ret("acl.mdl.get_output_dims", ret)
    batch = in_dims["dims"][0]
    in_size = acl.mdl.get_input_size_by_index(desc, 0)
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    image_bytes = in_size // batch
    print(f"  model    : '{in_dims['name']}' {in_dims['dims']} -> '{out_dims['name']}' {out_dims['dims']}; "
          f"{image_bytes} bytes per image")

    # one input and one output buffer, reused for every batch
    in_ptr, ret = acl.rt.malloc(in_size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc (input)", ret)
    cleanup.append(lambda: acl.rt.free(in_ptr))
    out_ptr, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc (output)", ret)
    cleanup.append(lambda: acl.rt.free(out_ptr))
    datasets = []
    for ptr, size, what in ((in_ptr, in_size, "input"), (out_ptr, out_size, "output")):
        buffer = acl.create_data_buffer(ptr, size)
        if buffer == 0:
            raise SampleError(f"acl.create_data_buffer ({what}) returned 0")
        cleanup.append(lambda b=buffer: acl.destroy_data_buffer(b))
        dataset = acl.mdl.create_dataset()
        if dataset == 0:
            raise SampleError(f"acl.mdl.create_dataset ({what}) returned 0")
        cleanup.append(lambda d=dataset: acl.mdl.destroy_dataset(d))
        _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
        check_ret(f"acl.mdl.add_dataset_buffer ({what})", ret)
        datasets.append(dataset)

    rng = np.random.default_rng(11)
    # noise around a per-image colour, so that the images are told apart
    images = (rng.uniform(-0.5, 0.5, (IMAGES, CHANNELS, HEIGHT, WIDTH))
              + rng.uniform(-2, 2, (IMAGES, CHANNELS, 1, 1))).astype(np.float32)
    scores = np.zeros((IMAGES, CLASSES), np.float32)
    batch_out = np.zeros((batch, CLASSES), np.float32)
    for first in range(0, IMAGES, batch):
        count = min(batch, IMAGES - first)
        for row in range(count):              # each image to its row of the batch
            image = np.ascontiguousarray(images[first + row])
            check_ret("acl.rt.memcpy H2D", acl.rt.memcpy(in_ptr + row * image_bytes, image_bytes,
                                                         image.ctypes.data, image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))
        if count < batch:                     # pad the partial batch
            pad_bytes = (batch - count) * image_bytes
            check_ret("acl.rt.memset (padding)", acl.rt.memset(in_ptr + count * image_bytes, pad_bytes, 0,
                                                               pad_bytes))
        check_ret("acl.mdl.execute", acl.mdl.execute(model_id, datasets[0], datasets[1]))
        check_ret("acl.rt.memcpy D2H", acl.rt.memcpy(batch_out.ctypes.data, batch_out.nbytes, out_ptr, out_size,
                                                     ACL_MEMCPY_DEVICE_TO_HOST))
        scores[first:first + count] = batch_out[:count]   # padding rows ignored
        note = f", {batch - count} padding row(s) ignored" if count < batch else ""
        print(f"  batch    : images {first}..{first + count - 1} -> classes "
              f"{batch_out[:count].argmax(axis=1).tolist()}{note}")

    want = reference(images)
    if not np.allclose(scores, want, rtol=1e-4, atol=1e-5):
        raise SampleError(f"scores differ from numpy by up to {np.abs(scores - want).max()}")
    print(f"  verified : {IMAGES} images in {-(-IMAGES // batch)} executions, every score matches numpy")


def main():
    check = acl.init()
    if check != ACL_SUCCESS:
        print(f"model_multi_batch: FAILED: acl.init -> {check}", file=sys.stderr)
        return 1
    cleanup = []
    failure = None
    with tempfile.TemporaryDirectory(prefix="openacl_sample_") as folder:
        try:
            check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
            cleanup.append(lambda: acl.rt.reset_device(DEVICE_ID))
            run(folder, cleanup)
        except SampleError as exc:
            failure = str(exc)
        errors = [str(ret) for ret in (undo() for undo in reversed(cleanup)) if ret != ACL_SUCCESS]
    acl.finalize()
    if failure or errors:
        print(f"model_multi_batch: FAILED: {failure or ''} teardown: {errors}", file=sys.stderr)
        return 1
    print("model_multi_batch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
