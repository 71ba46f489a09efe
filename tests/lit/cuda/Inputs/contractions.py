#!/usr/bin/python3
"""Contractions of odd shapes for the tensor-core kernels, and their check on cuda-sim.

  contractions.py write DIR    the models (DIR/<name>.onnx) and inputs (DIR/<name>.x.npy)
  contractions.py run-tf32 DIR  the same at fp32 with --allow-tf32 (mma.sync m16n8k8
                               .tf32), against numpy on the TF32-truncated operands
  contractions.py run DIR       each model compiled for cuda-sim with --precision fp16
                               (`kiln` from PATH), its stage checked to be a tensor-core
                               one (nvgpu.mma.sync), run by `kiln run`, and its output
                               against numpy in float64 on the model's f16-rounded inputs
                               and weights: max |error| / max |reference| <= 1e-2 (f16
                               storage of the outputs: ~1e-3; a fragment in the wrong
                               lane or register: ~1)

Shapes are chosen so that no tile divides them: rows, columns and K that end in
partial tiles, batch dims on the grid, convolutions with stride, padding, dilation
and groups (implicit GEMM).
"""
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def round_f16(a):
    return a.astype(np.float16).astype(np.float64)


def round_tf32(a):
    """f32 as the tensor cores read it in TF32: its top 19 bits."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32) & np.uint32(0xffffe000)
    return bits.view(np.float32).astype(np.float64)


ROUND = round_f16


def f16(a):
    """The multiplicand rounding of the run: f16 (--precision fp16) or TF32."""
    return ROUND(a)


def conv_ref(x, w, b, stride, pad, dilation, group):
    n, c, h, wd = x.shape
    co, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, co, oh, ow))
    per = co // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                           j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
                out[:, g * per:(g + 1) * per] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * per:(g + 1) * per, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def models():
    rng = np.random.RandomState(7)
    m = {}
    # GEMM with bias and Relu: M, K, N past any tile.
    w = rng.randn(72, 56).astype(np.float32) * 0.2
    b = rng.randn(56).astype(np.float32)
    x = rng.randn(40, 72).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             helper.make_node("Add", ["y", "b"], ["z"], name="bias"),
             helper.make_node("Relu", ["z"], ["out"], name="relu")]
    m["gemm"] = (nodes, [w, b], ["w", "b"], x, [40, 56],
                 lambda x, w=w, b=b: np.maximum(f16(x) @ f16(w) + f16(b), 0))
    # Two GEMMs: the second reads the first's f16 output, contiguous along K, which
    # cp.async copies into shared memory (the pipeline's asynchronous path).
    w1 = rng.randn(72, 64).astype(np.float32) * 0.2
    w2 = rng.randn(64, 40).astype(np.float32) * 0.2
    x = rng.randn(48, 72).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["out"], name="mm2")]
    m["mlp"] = (nodes, [w1, w2], ["w1", "w2"], x, [48, 40],
                lambda x, w1=w1, w2=w2: f16(np.maximum(f16(x) @ f16(w1), 0)) @ f16(w2))
    # Batched, both operands activations (attention's Q K^T).
    k = rng.randn(2, 3, 24, 20).astype(np.float32)
    x = rng.randn(2, 3, 20, 24).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "k"], ["out"], name="bmm")]
    m["batched"] = (nodes, [k], ["k"], x, [2, 3, 20, 20], lambda x, k=k: f16(x) @ f16(k))
    # Convolutions: 3x3 stride 2 pad 1; dilation 2; 2 groups; 1x1.
    for name, (c, co, h, kh, stride, pad, dil, group) in {
            "conv3x3s2": (20, 24, 13, 3, 2, 1, 1, 1),
            "conv_dilated": (16, 20, 11, 3, 1, 2, 2, 1),
            "conv_grouped": (32, 48, 9, 3, 1, 1, 1, 2),
            "conv1x1": (40, 36, 7, 1, 1, 0, 1, 1)}.items():
        w = rng.randn(co, c // group, kh, kh).astype(np.float32) * 0.2
        b = rng.randn(co).astype(np.float32)
        x = rng.randn(1, c, h, h).astype(np.float32)
        oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["out"], name=name,
                                  strides=[stride] * 2, pads=[pad] * 4,
                                  dilations=[dil] * 2, group=group)]
        m[name] = (nodes, [w, b], ["w", "b"], x, [1, co, oh, oh],
                   lambda x, w=w, b=b, s=stride, p=pad, d=dil, g=group:
                   conv_ref(f16(x), f16(w), f16(b), s, p, d, g))
    return m


def write(d):
    for name, (nodes, consts, cnames, x, oshape, _) in models().items():
        g = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
            [helper.make_tensor_value_info("out", TensorProto.FLOAT, oshape)],
            [numpy_helper.from_array(c, n) for c, n in zip(consts, cnames)])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, f"{d}/{name}.onnx")
        np.save(f"{d}/{name}.x.npy", x)


def run(d, tf32=False):
    global ROUND
    ROUND = round_tf32 if tf32 else round_f16
    fp16 = ["--allow-tf32"] if tf32 else ["--precision", "fp16", "--no-precision-check"]
    for name in models():
        model = f"{d}/{name}.onnx"
        plan = subprocess.run(["kiln", "compile", model, "--target", "cuda-sim", *fp16,
                               "--compile-to=plan"], capture_output=True, text=True,
                              check=True).stdout
        # A grouped convolution's output channel indexes both operands (the group
        # is not a loop of its own): not a contraction the mapping splits, SIMT.
        if ("nvgpu.mma.sync" in plan) != (name != "conv_grouped"):
            sys.exit(f"{name}: tensor-core stage {'not ' * (name != 'conv_grouped')}expected")
        subprocess.run(["kiln", "compile", model, "--target", "cuda-sim", *fp16, "--emit",
                        "lib", "-o", f"{d}/{name}.sim"], check=True)
        subprocess.run(["kiln", "run", f"{d}/{name}.sim", "--input", f"x={d}/{name}.x.npy",
                        "--output-dir", f"{d}/{name}.res"], check=True, capture_output=True)
        check(d, name, f"{d}/{name}.res/out.npy")


def check(d, name, result):
    _, _, _, _, _, ref = models()[name]
    expected = ref(np.load(f"{d}/{name}.x.npy"))
    got = np.load(result).astype(np.float64)
    if got.shape != expected.shape:
        sys.exit(f"{name}: shape {got.shape}, expected {expected.shape}")
    err = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
    print(f"{name}: max error {err:.2e} of the largest output")
    if not err <= 1e-2:
        sys.exit(f"{name}: error {err:.3e} exceeds 1e-2")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        run(sys.argv[2], tf32=sys.argv[1] == "run-tf32")
