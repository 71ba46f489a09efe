#!/usr/bin/env python3
"""FP16 figures per zoo model (issue 14): `kiln compile --precision auto` against fp32
on one target.

For each model: compile time at fp32 and at auto (ratio), the ops auto kept in f32,
weight and arena bytes (auto / fp32, from the reports), the max error of each build's
output against PyTorch's f32 reference (relative to its max magnitude), and, for
classifiers, whether auto's top-1 equals fp32's on N random inputs.

  bench/precision.py --kiln build/bin/kiln --zoo /tmp/zoo-full [--target host] \\
      [--random 16] resnet50 mobilenet_v2 ...

The zoo comes from models/export_zoo.py (NAME.onnx, NAME.input.npy, NAME.output.npy).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CLASSIFIERS = {"resnet50", "mobilenet_v2", "squeezenet1_1", "inception_v3", "googlenet"}


def compile_model(kiln, onnx, target, precision, out):
    report = out + ".json"
    start = time.perf_counter()
    r = subprocess.run([kiln, "compile", onnx, "--target", target, "--precision", precision,
                        "--emit", "lib", "-o", out, "--report", report, "--quiet"],
                       capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"{precision}: {r.stderr.strip()[:300]}")
    with open(report) as f:
        return seconds, json.load(f)


def run(kiln, artifact, x, work):
    inp, outdir = os.path.join(work, "x.npy"), os.path.join(work, "out")
    os.makedirs(outdir, exist_ok=True)
    np.save(inp, x)
    r = subprocess.run([kiln, "run", artifact, "--input", inp, "--output-dir", outdir],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[:300])
    outs = sorted(f for f in os.listdir(outdir) if f.endswith(".npy"))
    return np.load(os.path.join(outdir, outs[0]))


def rel(a, b):
    return float(np.abs(a.astype(np.float64) - b).max() / max(np.abs(b).max(), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--target", default="host")
    ap.add_argument("--random", type=int, default=16)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            onnx = os.path.join(args.zoo, name + ".onnx")
            x = np.load(os.path.join(args.zoo, name + ".input.npy"))
            ref = np.load(os.path.join(args.zoo, name + ".output.npy"))
            row = {"model": name}
            try:
                builds = {}
                for p in ("fp32", "auto"):
                    out = os.path.join(work, f"{name}.{p}")
                    row[p + "_compile_s"], rep = compile_model(args.kiln, onnx, args.target, p, out)
                    builds[p] = (out, rep)
                    row[p + "_rel"] = rel(run(args.kiln, out, x, work), ref)
                rep32, rep16 = builds["fp32"][1], builds["auto"][1]
                prec = rep16["precision"]
                row["kept_f32"] = len(prec["kept_f32"])
                row["kept_auto"] = sum(1 for k in prec["kept_f32"]
                                       if k["reason"].startswith("auto"))
                row["validation_s"] = prec["validation_s"]
                row["weights"] = rep16["weight_bytes"] / rep32["weight_bytes"]
                row["arena"] = rep16["arena_bytes"] / rep32["arena_bytes"]
                if name in CLASSIFIERS and args.random:
                    rng = np.random.default_rng(0)
                    same = 0
                    for _ in range(args.random):
                        xr = rng.standard_normal(x.shape).astype(np.float32)
                        a = run(args.kiln, builds["auto"][0], xr, work)
                        b = run(args.kiln, builds["fp32"][0], xr, work)
                        same += int(a.reshape(-1).argmax() == b.reshape(-1).argmax())
                    row["top1_same"] = f"{same}/{args.random}"
            except RuntimeError as e:
                row["error"] = str(e)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(f"| model | fp32 compile s | auto compile s | ratio | kept f32 (by auto) | "
          f"weights auto/fp32 | arena auto/fp32 | fp32 max rel err | auto max rel err | "
          f"top-1 auto = fp32 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | error: {r['error'][:80]} |")
            continue
        print(f"| {r['model']} | {r['fp32_compile_s']:.1f} | {r['auto_compile_s']:.1f} | "
              f"{r['auto_compile_s'] / r['fp32_compile_s']:.2f} | {r['kept_f32']} "
              f"({r['kept_auto']}) | {r['weights']:.3f} | {r['arena']:.3f} | "
              f"{r['fp32_rel']:.1e} | {r['auto_rel']:.1e} | {r.get('top1_same', '-')} |")


if __name__ == "__main__":
    main()
