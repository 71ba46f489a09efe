#!/usr/bin/python3
"""Exports Kiln's model zoo to ONNX with Debian's python3-torch and python3-torchvision.

Random weights from a fixed seed; nothing is downloaded. Each model is written to
OUT/FILE.onnx with OUT/FILE.input.npy (the example input), OUT/FILE.output.npy (PyTorch's
output for it, the reference) and OUT/FILE.meta.json, skipping models whose file
already exists unless --force. Exported files live under the build tree, never in git.

Files are named NAME[_reduced][_bB]: `--batch 1 8` writes resnet50.onnx and
resnet50_b8.onnx; `--reduced` writes the reduced-size variants CI runs (same
architecture, fewer blocks, narrower, lower resolution).

usage: models/export_zoo.py [--out DIR] [--opset N] [--batch B ...] [--reduced] [--force] [NAME ...]
"""
import argparse
import inspect
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision


class EncoderLayer(torch.nn.Module):
    """One post-norm BERT layer in plain torch (no fused kernels to trip the exporter)."""

    def __init__(self, hidden, heads, ffn, separate_qkv=False):
        super().__init__()
        self.heads = heads
        # separate_qkv: three projections, as HuggingFace's BertSelfAttention has them.
        self.proj = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(3)) \
            if separate_qkv else None
        self.qkv = None if separate_qkv else torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.norm1 = torch.nn.LayerNorm(hidden)
        self.ff1 = torch.nn.Linear(hidden, ffn)
        self.ff2 = torch.nn.Linear(ffn, hidden)
        self.norm2 = torch.nn.LayerNorm(hidden)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = [p(x) for p in self.proj] if self.proj else self.qkv(x).split(h, dim=-1)
        q = q.reshape(b, s, self.heads, d).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(b, s, h)
        x = self.norm1(x + self.out(ctx))
        return self.norm2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class TransformerEncoder(torch.nn.Module):
    """A BERT-base-like encoder: embeddings -> N post-norm layers (GELU, LayerNorm)."""

    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, seq=128,
                 separate_qkv=False):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        self.norm = torch.nn.LayerNorm(hidden)
        self.layers = torch.nn.ModuleList(EncoderLayer(hidden, heads, ffn, separate_qkv)
                                          for _ in range(layers))

    def forward(self, ids):
        x = self.norm(self.embed(ids) + self.pos)
        for layer in self.layers:
            x = layer(x)
        return x


class GPT2Block(torch.nn.Module):
    """One pre-norm GPT-2 block: causal self-attention and a tanh-GELU MLP."""

    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(hidden)
        self.c_attn = torch.nn.Linear(hidden, 3 * hidden)
        self.c_proj = torch.nn.Linear(hidden, hidden)
        self.ln_2 = torch.nn.LayerNorm(hidden)
        self.c_fc = torch.nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = torch.nn.Linear(4 * hidden, hidden)
        causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool)).view(1, 1, seq, seq)
        self.register_buffer("causal", causal)
        self.register_buffer("mask_value", torch.tensor(torch.finfo(torch.float32).min))

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=-1)
        q = q.reshape(b, s, self.heads, d).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / d ** 0.5
        # As GPT-2 masks: future positions get the most negative float, not -inf.
        scores = torch.where(self.causal, scores, self.mask_value)
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.c_proj(ctx)
        mlp = torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(mlp)


class GPT2Stack(torch.nn.Module):
    """GPT-2-small's block stack: token + learned position embeddings, N causal blocks,
    the final LayerNorm; returns the hidden states (no LM head). GPT-2's N(0, 0.02) init."""

    def __init__(self, layers=12, hidden=768, heads=12, vocab=50257, seq=128):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(seq, hidden)
        self.register_buffer("positions", torch.arange(seq))
        self.blocks = torch.nn.ModuleList(GPT2Block(hidden, heads, seq) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(hidden)
        for m in self.modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.zeros_(m.bias)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(self.positions)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x)


class LSTMClassifier(torch.nn.Module):
    """A sequence classifier: a bidirectional multi-layer LSTM (batch first) and a linear
    head on the last step's features."""

    def __init__(self, features=128, hidden=256, layers=2, classes=10):
        super().__init__()
        self.lstm = torch.nn.LSTM(features, hidden, num_layers=layers, batch_first=True,
                                  bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


class GatedCNN(torch.nn.Module):
    """A CNN whose activation depends on the data: scripted, so the export holds an If
    whose condition is computed from the input."""

    def __init__(self, width=32, classes=10):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, width, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(width, width, 3, padding=1)
        self.fc = torch.nn.Linear(width, classes)

    def forward(self, x):
        y = self.conv1(x)
        if bool(y.mean() > 0.0):
            y = torch.relu(y)
        else:
            y = torch.sigmoid(y) - 0.5
        y = torch.relu(self.conv2(y))
        return self.fc(y.mean(dim=(2, 3)))


class DynamicEncoder(TransformerEncoder):
    """The encoder with a dynamic sequence length: positions are sliced to the input's
    length, so that the export with dynamic axes computes shapes from Shape nodes."""

    def forward(self, ids):
        x = self.norm(self.embed(ids) + self.pos[:, : ids.shape[1]])
        for layer in self.layers:
            x = layer(x)
        return x


class AffineNet(torch.nn.Module):
    """BatchNorm and constant scales and shifts after every contraction kind, and a
    standalone BatchNorm: what kiln-fold-batchnorm and kiln-fold-affine rewrite."""

    def __init__(self, width):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(width)
        self.up = torch.nn.ConvTranspose2d(width, width, 2, stride=2, groups=2)
        self.bn2 = torch.nn.BatchNorm2d(width)
        self.bn3 = torch.nn.BatchNorm2d(width)
        self.fc = torch.nn.Linear(width, 2 * width)
        self.bn4 = torch.nn.BatchNorm1d(2 * width)
        self.proj = torch.nn.Parameter(torch.randn(2 * width, width) * 0.1)
        self.scale = torch.nn.Parameter(torch.rand(width, 1, 1) + 0.5)
        self.shift = torch.nn.Parameter(torch.randn(width, 1, 1))
        for bn in (self.bn1, self.bn2, self.bn3, self.bn4):  # non-trivial statistics
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv(x)))
        y = self.bn2(self.up(y)) * self.scale + self.shift
        y = self.bn3(torch.relu(y))                    # standalone: after a Relu
        z = self.bn4(self.fc(y.mean(dim=(2, 3))))       # Gemm + BatchNorm1d
        return (z @ self.proj) * 0.5                    # MatMul * constant


def he_init(net):
    """He (fan-in) init for every convolution. torchvision's own inits leave a random
    network's activations nowhere near a trained one's: through GoogLeNet's 57
    convolutions (N(0, 0.01)) and MobileNetV2's 52 (fan-out) they fade to ~1e-9, leaving
    an output that is the last layer's bias whatever the input; through Inception v3's
    (N(0, 0.1)) they grow to ~3e12, past f16's range. He init keeps every layer's
    signal at the input's scale, so the checks mean something."""
    for m in net.modules():
        if isinstance(m, torch.nn.Conv2d):
            torch.nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
    return net


def build(name, batch, reduced=False):
    """The model and an example input. `reduced`: the same architecture, smaller (fewer
    blocks, narrower, lower resolution) so that CI can run every zoo model end to end."""
    image = 64 if reduced else 224
    if name in VARIANTS:
        return build(VARIANTS[name][0], batch, reduced)
    if name == "affine":
        return AffineNet(8 if reduced else 64), torch.randn(batch, 3, image // 2, image // 2)
    if name == "resnet50":
        if reduced:
            net = torchvision.models.resnet.ResNet(torchvision.models.resnet.Bottleneck,
                                                   [1, 1, 1, 1], width_per_group=16)
        else:
            net = torchvision.models.resnet50()
        return net, torch.randn(batch, 3, image, image)
    if name == "inception_v3":
        # Inception's stem needs 75x75 at least; it has no width knob.
        return (he_init(torchvision.models.inception_v3(aux_logits=True, init_weights=True)),
                torch.randn(batch, 3, 75 if reduced else 299, 75 if reduced else 299))
    if name == "googlenet":
        # Inception v1: four parallel branches per block, a branchy model for streams.
        return (he_init(torchvision.models.googlenet(aux_logits=False, init_weights=False)),
                torch.randn(batch, 3, image, image))
    if name == "mobilenet_v2":
        return (he_init(torchvision.models.mobilenet_v2(width_mult=0.25 if reduced else 1.0)),
                torch.randn(batch, 3, image, image))
    if name == "squeezenet1_1":
        return torchvision.models.squeezenet1_1(), torch.randn(batch, 3, image, image)
    if name in ("transformer_encoder", "transformer_encoder_qkv"):
        separate = name == "transformer_encoder_qkv"
        if reduced:
            return (TransformerEncoder(layers=2, hidden=128, heads=4, ffn=512, vocab=1000, seq=32,
                                       separate_qkv=separate),
                    torch.randint(0, 1000, (batch, 32)))
        return TransformerEncoder(separate_qkv=separate), torch.randint(0, 30522, (batch, 128))
    if name == "gpt2":
        if reduced:
            return (GPT2Stack(layers=2, hidden=128, heads=4, vocab=1000, seq=32),
                    torch.randint(0, 1000, (batch, 32)))
        return GPT2Stack(), torch.randint(0, 50257, (batch, 128))
    if name == "lstm":
        if reduced:
            return LSTMClassifier(features=16, hidden=32, layers=2), torch.randn(batch, 8, 16)
        return LSTMClassifier(), torch.randn(batch, 32, 128)
    if name == "gated_cnn":
        return GatedCNN(width=16 if reduced else 64), torch.randn(batch, 3, image // 2, image // 2)
    if name == "transformer_dynamic":
        if reduced:
            return (DynamicEncoder(layers=2, hidden=128, heads=4, ffn=512, vocab=1000, seq=32),
                    torch.randint(0, 1000, (batch, 24)))
        return DynamicEncoder(), torch.randint(0, 30522, (batch, 96))
    raise SystemExit(f"unknown model {name}")


# Models written as other exporters write them: the same network exported another
# way (base model, export options). resnet50_bn keeps its BatchNormalization nodes
# (TrainingMode.PRESERVE, as TensorFlow and Keras converters write them);
# transformer_encoder_op13 is exported at opset 13, where LayerNormalization is a
# ReduceMean/Sub/Pow/Sqrt/Div chain.
VARIANTS = {"resnet50_bn": ("resnet50", {"training": torch.onnx.TrainingMode.PRESERVE}),
            "transformer_encoder_op13": ("transformer_encoder", {"opset_version": 13})}

MODELS = ["resnet50", "inception_v3", "mobilenet_v2", "squeezenet1_1", "transformer_encoder",
          "gpt2", "lstm", "gated_cnn", "transformer_dynamic", "affine",
          "transformer_encoder_qkv", "googlenet"] + list(VARIANTS)

# How each model is exported beyond the default: scripted (data-dependent control
# flow stays in the graph) or with dynamic axes (Kiln pins them with --input-shape).
SCRIPTED = {"gated_cnn"}
PRESERVE = {"affine"}
DYNAMIC_AXES = {"transformer_dynamic": {"input": {0: "batch", 1: "sequence"},
                                        "output": {0: "batch", 1: "sequence"}}}


def file_name(name, batch, reduced):
    """resnet50, resnet50_b8, resnet50_reduced, resnet50_reduced_b8."""
    return name + ("_reduced" if reduced else "") + (f"_b{batch}" if batch != 1 else "")


def export(name, batch, reduced, out, opset, force):
    stem = file_name(name, batch, reduced)
    path = os.path.join(out, f"{stem}.onnx")
    if os.path.exists(path) and os.path.exists(os.path.join(out, f"{stem}.output.npy")) \
            and not force:
        print(f"{stem}: cached at {path}")
        return
    torch.manual_seed(0)
    model, example = build(name, batch, reduced)
    model.eval()
    start = time.time()
    with torch.no_grad():
        # The TorchScript exporter: newer PyTorch (2.9+) defaults to the dynamo one.
        legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters \
            else {}
        exported = torch.jit.script(model) if name in SCRIPTED else model
        options = {"opset_version": opset, **legacy}
        if name in PRESERVE:
            options["training"] = torch.onnx.TrainingMode.PRESERVE
        options.update(VARIANTS.get(name, (None, {}))[1])
        try:
            torch.onnx.export(exported, example, path, input_names=["input"],
                              output_names=["output"], dynamic_axes=DYNAMIC_AXES.get(name),
                              do_constant_folding=True, **options)
        except Exception as e:  # noqa: BLE001 - a PyTorch whose TorchScript exporter fails
            if not legacy or name in SCRIPTED or name in DYNAMIC_AXES:
                raise
            print(f"{stem}: TorchScript exporter failed ({type(e).__name__}: {e}); "
                  "exporting with the dynamo exporter", file=sys.stderr)
            options.update(dynamo=True, opset_version=max(opset, 18))
            torch.onnx.export(model, (example,), path, input_names=["input"],
                              output_names=["output"], **options)
        reference = model(example)
    if isinstance(reference, (tuple, list)) or hasattr(reference, "logits"):
        reference = reference[0] if isinstance(reference, (tuple, list)) else reference.logits
    np.save(os.path.join(out, f"{stem}.input.npy"), example.numpy())
    with open(os.path.join(out, f"{stem}.meta.json"), "w") as f:
        json.dump({"model": name, "batch": batch, "reduced": reduced, "input": "input",
                   "dynamic": name in DYNAMIC_AXES,
                   "shape": list(example.shape), "dtype": str(example.dtype),
                   "opset": options["opset_version"]}, f)
    # Last, so that a present reference means a complete export.
    np.save(os.path.join(out, f"{stem}.output.npy"), reference.detach().numpy())
    print(f"{stem}: exported in {time.time() - start:.1f} s to {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "build", "models"))
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--batch", type=int, nargs="+", default=[1],
                    help="batch sizes to export (e.g. --batch 1 8)")
    ap.add_argument("--reduced", action="store_true",
                    help="the reduced-size variants (NAME_reduced) that CI tests")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("names", nargs="*", default=MODELS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(os.cpu_count())
    for name in args.names:
        if name not in MODELS:
            raise SystemExit(f"unknown model {name} (known: {', '.join(MODELS)})")
        for batch in args.batch:
            export(name, batch, args.reduced, args.out, args.opset, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
