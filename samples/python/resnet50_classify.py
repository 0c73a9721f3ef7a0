"""Image classification with pyACL, written the way Ascend samples are.

    python3 resnet50_classify.py MODEL.om [--onnx SOURCE.onnx] [--runs N] [--device ID]

Loads an offline model built by `atc` (any model taking one NCHW float32
image and returning class scores, e.g. ResNet-50 from scripts/make_models.py),
prepares a 224x224 RGB picture (a synthetic, deterministic one: nothing is
downloaded) the way the samples do — scale to [0, 1], subtract the ImageNet
mean, divide by the std, HWC -> CHW — copies it to the device, executes, copies
the scores back and prints the top 5 classes with their probabilities and the
median latency of `execute`. With --onnx (and onnxruntime installed) it also
runs the source model in onnxruntime and prints the largest difference.

The weights of the project's models are seeded random, so the classes are not
meaningful; the pipeline is exactly that of a real classifier.
"""
import argparse
import sys
import time

import numpy as np

import acl

# pyACL exports no constants: programs define the ones they use.
ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_FLOAT = 0
NAME = "resnet50_classify"


def check(ret, what):
    if ret != ACL_SUCCESS:
        print(f"{NAME}: {what} failed with {ret}: {acl.get_recent_err_msg()}", file=sys.stderr)
        sys.exit(1)


def synthetic_picture(height=224, width=224):
    """A deterministic RGB picture (uint8 HWC): gradients and a disc."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    r = 255 * x / (width - 1)
    g = 255 * y / (height - 1)
    b = np.where((x - width / 2) ** 2 + (y - height / 2) ** 2 < (min(height, width) / 4) ** 2, 230.0, 40.0)
    return np.stack([r, g, b], axis=-1).astype(np.uint8)


def preprocess(picture):
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    x = (picture.astype(np.float32) / 255.0 - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1)[np.newaxis])  # 1x3xHxW


class Classifier:
    def __init__(self, device_id, model_path):
        self.device_id = device_id
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(device_id), "acl.rt.set_device")
        self.context, ret = acl.rt.create_context(device_id)
        check(ret, "acl.rt.create_context")
        t0 = time.perf_counter()
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check(ret, "acl.mdl.load_from_file")
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.inputs, self.input_dataset = self._dataset(acl.mdl.get_num_inputs(self.desc),
                                                        acl.mdl.get_input_size_by_index)
        self.outputs, self.output_dataset = self._dataset(acl.mdl.get_num_outputs(self.desc),
                                                          acl.mdl.get_output_size_by_index)

    def _dataset(self, count, size_of):
        dataset = acl.mdl.create_dataset()
        buffers = []
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "acl.rt.malloc")
            data_buffer = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, data_buffer)
            check(ret, "acl.mdl.add_dataset_buffer")
            buffers.append((ptr, size, data_buffer))
        return buffers, dataset

    def describe(self):
        dims, ret = acl.mdl.get_input_dims(self.desc, 0)
        check(ret, "acl.mdl.get_input_dims")
        out, ret = acl.mdl.get_output_dims(self.desc, 0)
        check(ret, "acl.mdl.get_output_dims")
        if acl.mdl.get_input_data_type(self.desc, 0) != ACL_FLOAT:
            print(f"{NAME}: the model's input is not float32", file=sys.stderr)
            sys.exit(1)
        return dims, out

    def infer(self, image):
        ptr, size, _ = self.inputs[0]
        if image.nbytes != size:
            print(f"{NAME}: the picture has {image.nbytes} bytes; the model takes {size}", file=sys.stderr)
            sys.exit(1)
        check(acl.rt.memcpy(ptr, size, image.ctypes.data, image.nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
              "acl.rt.memcpy (host to device)")
        t0 = time.perf_counter()
        check(acl.mdl.execute(self.model_id, self.input_dataset, self.output_dataset), "acl.mdl.execute")
        elapsed = time.perf_counter() - t0
        out_ptr, out_size, _ = self.outputs[0]
        scores = np.empty(out_size // 4, dtype=np.float32)
        check(acl.rt.memcpy(scores.ctypes.data, scores.nbytes, out_ptr, out_size,
                            ACL_MEMCPY_DEVICE_TO_HOST), "acl.rt.memcpy (device to host)")
        return scores, elapsed

    def release(self):
        for buffers, dataset in ((self.inputs, self.input_dataset), (self.outputs, self.output_dataset)):
            for ptr, _, data_buffer in buffers:
                check(acl.destroy_data_buffer(data_buffer), "acl.destroy_data_buffer")
                check(acl.rt.free(ptr), "acl.rt.free")
            check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")
        check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
        check(acl.rt.destroy_context(self.context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(self.device_id), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="offline model (.om) built by atc")
    parser.add_argument("--onnx", help="the source ONNX model: compare with onnxruntime")
    parser.add_argument("--runs", type=int, default=10, help="executions timed (default 10)")
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()

    net = Classifier(args.device, args.model)
    in_dims, out_dims = net.describe()
    print(f"{NAME}: loaded {args.model} in {net.load_ms:.1f} ms: input {in_dims['name']} {in_dims['dims']}, "
          f"output {out_dims['name']} {out_dims['dims']}")
    n, c, h, w = in_dims["dims"]
    image = preprocess(synthetic_picture(h, w))
    times = []
    for _ in range(max(1, args.runs)):
        scores, elapsed = net.infer(image)
        times.append(elapsed)
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    print(f"{NAME}: execute median {np.median(times) * 1e3:.2f} ms over {len(times)} runs")
    print(f"{NAME}: top 5 (class: probability):")
    for k in np.argsort(-probs)[:5]:
        print(f"    {k:4d}: {probs[k]:.4f}")

    if args.onnx:
        try:
            import onnxruntime as ort
        except ImportError:
            print(f"{NAME}: onnxruntime not installed; comparison skipped")
        else:
            session = ort.InferenceSession(args.onnx, providers=["CPUExecutionProvider"])
            ref = session.run(None, {session.get_inputs()[0].name: image})[0].reshape(-1)
            diff = float(np.abs(ref - scores).max())
            scale = float(np.abs(ref).max())
            print(f"{NAME}: largest difference from onnxruntime {diff:.3g} (scores up to {scale:.3g})")
            if diff > 1e-3 * max(1.0, scale):
                print(f"{NAME}: outputs differ from onnxruntime", file=sys.stderr)
                sys.exit(1)
    net.release()
    print(f"{NAME}: OK")


if __name__ == "__main__":
    main()
