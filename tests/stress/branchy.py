#!/usr/bin/env python3
"""Stress test of Kiln's streams: random branchy ONNX graphs (fixed seeds) with
fan-out, fan-in, shared inputs and in-place candidates are compiled with 1, 2 and 4
streams for each target; each plan runs --repeat times (and once with --threads
contexts at once), and every output must equal the 1-stream plan's bitwise. A
missing event or a wrong memory reuse makes a run differ (host and cuda-sim run
streams as threads). The test fails if the multi-stream plans did not actually use
several streams (it would prove nothing).

usage: branchy.py --kiln KILN [--graphs N] [--repeat R] [--targets host,cuda-sim]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLS = 32, 64


def random_graph(seed):
    """A graph of MatMuls (kernel boundaries), elementwise ops, softmaxes,
    mean-centering and concats over [ROWS, COLS] tensors."""
    rng = random.Random(seed)
    nodes, inits = [], []
    pool = ["x", "y"]  # y: a second input many nodes share
    count = [0]

    def fresh(prefix):
        count[0] += 1
        return f"{prefix}{count[0]}"

    def weight(rows):
        name = fresh("w")
        w = np.random.RandomState(seed * 1000 + count[0]).uniform(
            -0.2, 0.2, (rows, COLS)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name))
        return name

    def pick():
        # Recent tensors more often: long chains and wide fan-outs both occur.
        k = min(len(pool), 1 + int(rng.expovariate(0.35)))
        return pool[-k] if rng.random() < 0.7 else rng.choice(pool)

    for _ in range(rng.randint(10, 18)):
        kind = rng.choice(["matmul", "matmul", "unary", "binary", "softmax", "center",
                           "concat"])
        out = fresh("t")
        if kind == "matmul":
            nodes.append(helper.make_node("MatMul", [pick(), weight(COLS)], [out]))
        elif kind == "unary":
            op = rng.choice(["Relu", "Sigmoid", "Tanh", "Neg", "Abs"])
            nodes.append(helper.make_node(op, [pick()], [out]))
        elif kind == "binary":
            op = rng.choice(["Add", "Mul", "Sub"])
            nodes.append(helper.make_node(op, [pick(), pick()], [out]))
        elif kind == "softmax":
            nodes.append(helper.make_node("Softmax", [pick()], [out], axis=-1))
        elif kind == "center":
            src, mean = pick(), fresh("m")
            nodes.append(helper.make_node("ReduceMean", [src], [mean], axes=[-1],
                                          keepdims=1))
            nodes.append(helper.make_node("Sub", [src, mean], [out]))
        else:
            cat = fresh("c")
            nodes.append(helper.make_node("Concat", [pick(), pick()], [cat], axis=1))
            nodes.append(helper.make_node("MatMul", [cat, weight(2 * COLS)], [out]))
        pool.append(out)
    # Every tensor nothing reads is an output (so every branch is computed).
    read = {i for n in nodes for i in n.input}
    sinks = [t for t in pool[2:] if t not in read] or [pool[-1]]
    f32 = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [ROWS, COLS])
    graph = helper.make_graph(nodes, f"branchy{seed}", [f32("x"), f32("y")],
                              [f32(s) for s in sinks], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model, sinks


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--graphs", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--targets", default="host,cuda-sim")
    args = ap.parse_args()
    targets = args.targets.split(",")
    work = tempfile.mkdtemp(prefix="kiln-branchy-")
    failures, multi, plans = [], 0, 0
    for seed in range(1, args.graphs + 1):
        model, sinks = random_graph(seed)
        path = os.path.join(work, f"g{seed}.onnx")
        onnx.save(model, path)
        rs = np.random.RandomState(seed)
        inputs = []
        for name in ("x", "y"):
            f = os.path.join(work, f"g{seed}.{name}.npy")
            np.save(f, rs.uniform(-1, 1, (ROWS, COLS)).astype(np.float32))
            inputs += ["--input", f"{name}={f}"]
        for target in targets:
            reference = None
            for streams in (1, 2, 4):
                out = os.path.join(work, f"g{seed}-{target}-{streams}")
                try:
                    run([args.kiln, "compile", path, "-o", out, "--emit", "lib", "-q",
                         "--target", target, "--max-streams", str(streams),
                         "--report", out + ".json"])
                    report = json.load(open(out + ".json"))
                    # The longest check with the most streams: --threads contexts.
                    threads = args.threads if streams == 4 and seed == 1 else 1
                    repeat = max(8, args.repeat // threads) if threads > 1 else args.repeat
                    run([args.kiln, "run", out, *inputs, "--output-dir", out + ".out",
                         "--repeat", str(repeat), "--threads", str(threads)])
                except RuntimeError as e:
                    failures.append(f"g{seed} {target} {streams} streams: {e}")
                    continue
                got = {s: np.load(os.path.join(out + ".out", s + ".npy")) for s in sinks}
                if streams == 1:
                    reference = got
                    continue
                plans += 1
                multi += report["streams"] > 1
                if reference is None:
                    continue
                for s in sinks:
                    if got[s].tobytes() != reference[s].tobytes():
                        diff = np.abs(got[s] - reference[s]).max()
                        failures.append(f"g{seed} {target} {streams} streams: output {s} "
                                        f"differs from the 1-stream plan (max abs {diff:g})")
                print(f"ok   g{seed} [{target}] {streams} streams: {report['streams']} used, "
                      f"{report['events']} events, {report['launches']} launches, "
                      f"runs {repeat} x {threads} thread(s)", flush=True)
    print(f"{plans} multi-stream plans, {multi} of them on more than one stream")
    if plans and multi * 2 < plans:
        failures.append(f"only {multi} of {plans} multi-stream plans used several streams: "
                        "the graphs do not exercise concurrency")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
