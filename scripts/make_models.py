#!/usr/bin/python3
"""Generates the project's test/benchmark models with the real PyTorch ONNX
exporter and seeded random weights (nothing is downloaded).

    /usr/bin/python3 scripts/make_models.py OUT_DIR [--only NAME,...] [--batch N]

Runs with Debian's python3-torch / python3-torchvision (CPU builds for the
system /usr/bin/python3; PyPI's torch is a multi-gigabyte CUDA build). Writes
OUT_DIR/<name>.onnx and OUT_DIR/<name>.input_<i>.npy (seeded inputs), plus
OUT_DIR/models.json describing them. Skips everything when OUT_DIR/STAMP
matches this script's hash (generate once, cache).

--batch N (N > 1) writes batch-N versions beside them instead:
OUT_DIR/<name>_bN.onnx with a fixed batch dim N, the same seeded weights, and
OUT_DIR/<name>_bN.input_<i>.npy (the batch-1 inputs tiled N times, so every
sample of the batch is the batch-1 sample), indexed in OUT_DIR/models_bN.json
and cached by OUT_DIR/STAMP_bN. The batch-1 files, models.json and STAMP are
not touched. resnet18_dynamic has no batch-N version (its batch is dynamic).

Models:
  resnet50         torchvision ResNet-50, 1x3x224x224
  mobilenet_v2     torchvision MobileNetV2, 1x3x224x224
  bert_base        BERT-base-like encoder: 12 layers, hidden 768, 12 heads,
                   FFN 3072, GELU, post-LayerNorm; input ids 1x128 (int64)
  lraspp_mobilenet torchvision LR-ASPP MobileNetV3-Large segmentation net,
                   1x3x256x256 (bilinear Resize, hardswish, SE blocks)
  resnet18_dynamic torchvision ResNet-18 with a dynamic batch dim "N"
                   (input saved with batch 2)
"""
import hashlib
import json
import os
import sys

SEED = 0
OPSET = 17  # the newest torch 1.13's exporter writes; LayerNormalization is native from 17


def bert_like(layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, seq=128):
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.out = nn.Linear(hidden, hidden)
            self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
            self.ff1 = nn.Linear(hidden, ffn)
            self.ff2 = nn.Linear(ffn, hidden)
            self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, x, mask):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(hidden, dim=-1)
            def heads_of(t):
                return t.reshape(b, s, heads, hidden // heads).transpose(1, 2)
            q, k, v = heads_of(q), heads_of(k), heads_of(v)
            att = torch.matmul(q, k.transpose(-1, -2)) / (hidden // heads) ** 0.5 + mask
            ctx = torch.matmul(att.softmax(-1), v).transpose(1, 2).reshape(b, s, hidden)
            x = self.ln1(x + self.out(ctx))
            return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(512, hidden)
            self.ln = nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, ids, attention_mask):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.ln(self.tok(ids) + self.pos(pos))
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, mask)
            return x

    model = Bert()
    for p in model.parameters():  # BERT's init: N(0, 0.02)
        nn.init.normal_(p, std=0.02) if p.dim() > 1 else nn.init.zeros_(p)
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(0, vocab, (1, seq), generator=g)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[:, seq - 16:] = 0  # padding at the end, as real batches have
    return model, (ids, mask), ["input_ids", "attention_mask"], None


def vision(name, shape):
    import torch
    import torchvision

    def build():
        if name == "lraspp_mobilenet":
            m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)

            class Out(torch.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, x):
                    return self.inner(x)["out"]
            return Out(m)
        ctor = {"resnet50": torchvision.models.resnet50, "mobilenet_v2": torchvision.models.mobilenet_v2,
                "resnet18_dynamic": torchvision.models.resnet18}[name]
        return ctor(weights=None)

    model = build()
    g = torch.Generator().manual_seed(SEED)
    x = torch.rand(*shape, generator=g) * 2 - 1
    dynamic = {"input": {0: "N"}, "output": {0: "N"}} if name.endswith("_dynamic") else None
    return model, (x,), ["input"], dynamic


MODELS = {
    "resnet50": lambda: vision("resnet50", (1, 3, 224, 224)),
    "mobilenet_v2": lambda: vision("mobilenet_v2", (1, 3, 224, 224)),
    "bert_base": bert_like,
    "lraspp_mobilenet": lambda: vision("lraspp_mobilenet", (1, 3, 256, 256)),
    "resnet18_dynamic": lambda: vision("resnet18_dynamic", (2, 3, 224, 224)),
}


def main():
    import argparse
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("out")
    ap.add_argument("--only", help="comma-separated model names (adds to those already written)")
    ap.add_argument("--batch", type=int, default=1, help="write <name>_bN.onnx with batch N instead")
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    args = ap.parse_args()
    out, batch = args.out, args.batch
    only = set(args.only.split(",")) if args.only else None
    if batch < 1:
        ap.error("--batch must be >= 1")
    # Batch N has its own index and stamp, so either cache survives a run of the other.
    suffix = "" if batch == 1 else f"_b{batch}"
    names = [n for n in MODELS if batch == 1 or not n.endswith("_dynamic")]
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    stamp = os.path.join(out, "STAMP" + suffix)
    index = os.path.join(out, f"models{suffix}.json")
    if os.path.exists(stamp) and open(stamp).read().strip() == digest:
        have = json.load(open(index)) if os.path.exists(index) else {}
        if only is None or all(n in have and os.path.exists(os.path.join(out, have[n]["model"])) for n in only):
            print(f"models{suffix} in {out} are up to date ({digest})")
            return 0
    import numpy as np
    import torch
    torch.manual_seed(SEED)
    torch.set_num_threads(os.cpu_count() or 1)
    os.makedirs(out, exist_ok=True)
    # --only adds to the models already listed (a partial run keeps the others).
    info = json.load(open(index)) if only and os.path.exists(index) else {}
    for name in names:
        if only and name not in only:
            continue
        torch.manual_seed(SEED)
        model, inputs, input_names, dynamic = MODELS[name]()
        model.eval()
        if batch > 1:
            # Same weights (same seed, same construction order); the seeded
            # batch-1 inputs repeated along dim 0.
            inputs = tuple(t.repeat(batch, *([1] * (t.dim() - 1))) for t in inputs)
        path = os.path.join(out, f"{name}{suffix}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, inputs, path, opset_version=OPSET, input_names=input_names,
                              output_names=["output"], dynamic_axes=dynamic, do_constant_folding=True)
        files = []
        for i, t in enumerate(inputs):
            f = os.path.join(out, f"{name}{suffix}.input_{i}.npy")
            np.save(f, t.numpy())
            files.append(os.path.basename(f))
        info[name] = {"model": f"{name}{suffix}.onnx", "inputs": dict(zip(input_names, files)),
                      "dynamic": dynamic is not None}
        if batch > 1:
            info[name]["batch"] = batch
        print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)", flush=True)
    with open(index, "w") as f:
        json.dump(info, f, indent=1)
    if only is None:
        with open(stamp, "w") as f:
            f.write(digest + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
