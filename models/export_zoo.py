#!/usr/bin/python3
"""Exports Kiln's model zoo to ONNX with Debian's python3-torch and python3-torchvision.

Random weights from a fixed seed; nothing is downloaded. Each model is written to
OUT/NAME.onnx with OUT/NAME.input.npy (the example input), OUT/NAME.output.npy (PyTorch's
output for it, the reference) and OUT/NAME.meta.json, skipping models whose file
already exists unless --force. Exported files live under the build tree, never in git.

usage: models/export_zoo.py [--out DIR] [--opset N] [--batch B] [--force] [NAME ...]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision


class EncoderLayer(torch.nn.Module):
    """One post-norm BERT layer in plain torch (no fused kernels to trip the exporter)."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.norm1 = torch.nn.LayerNorm(hidden)
        self.ff1 = torch.nn.Linear(hidden, ffn)
        self.ff2 = torch.nn.Linear(ffn, hidden)
        self.norm2 = torch.nn.LayerNorm(hidden)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(x).split(h, dim=-1)
        q = q.reshape(b, s, self.heads, d).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(b, s, h)
        x = self.norm1(x + self.out(ctx))
        return self.norm2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class TransformerEncoder(torch.nn.Module):
    """A BERT-base-like encoder: embeddings -> N post-norm layers (GELU, LayerNorm)."""

    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, seq=128):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        self.norm = torch.nn.LayerNorm(hidden)
        self.layers = torch.nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, ids):
        x = self.norm(self.embed(ids) + self.pos)
        for layer in self.layers:
            x = layer(x)
        return x


def build(name, batch):
    if name == "resnet50":
        return torchvision.models.resnet50(), torch.randn(batch, 3, 224, 224)
    if name == "inception_v3":
        return (torchvision.models.inception_v3(aux_logits=True, init_weights=True),
                torch.randn(batch, 3, 299, 299))
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(), torch.randn(batch, 3, 224, 224)
    if name == "squeezenet1_1":
        return torchvision.models.squeezenet1_1(), torch.randn(batch, 3, 224, 224)
    if name == "transformer_encoder":
        return TransformerEncoder(), torch.randint(0, 30522, (batch, 128))
    raise SystemExit(f"unknown model {name}")


MODELS = ["resnet50", "inception_v3", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "build", "models"))
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("names", nargs="*", default=MODELS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names:
        path = os.path.join(args.out, f"{name}.onnx")
        if os.path.exists(path) and not args.force:
            print(f"{name}: cached at {path}")
            continue
        torch.manual_seed(0)
        model, example = build(name, args.batch)
        model.eval()
        start = time.time()
        with torch.no_grad():
            torch.onnx.export(model, example, path, opset_version=args.opset,
                              input_names=["input"], output_names=["output"],
                              do_constant_folding=True)
            reference = model(example)
        if isinstance(reference, (tuple, list)) or hasattr(reference, "logits"):
            reference = reference[0] if isinstance(reference, (tuple, list)) else reference.logits
        np.save(os.path.join(args.out, f"{name}.input.npy"), example.numpy())
        np.save(os.path.join(args.out, f"{name}.output.npy"), reference.detach().numpy())
        with open(os.path.join(args.out, f"{name}.meta.json"), "w") as f:
            json.dump({"input": "input", "shape": list(example.shape),
                       "dtype": str(example.dtype), "opset": args.opset}, f)
        print(f"{name}: exported in {time.time() - start:.1f} s to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
