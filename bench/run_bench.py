#!/usr/bin/python3
"""Kiln's benchmark: compile the zoo, time it next to PyTorch, print one table.

For each model exported by models/export_zoo.py (ONNX + reference input/output):
compile for the host with `kiln compile --report`, check the output against PyTorch's
reference, time `kiln bench` and PyTorch CPU eager on the same input in the same run,
and print: compile time, kernels, arena vs lower bound, Kiln and PyTorch latency and
their ratio. With --write, the table goes to docs/results/DATE-bench-host.md.

Needs Debian's python3-torch and python3-torchvision (to re-create the models for
PyTorch timing). CUDA columns come with the CUDA target.

usage: bench/run_bench.py --kiln build/bin/kiln [--zoo build/models] [--write]
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_zoo  # noqa: E402


def torch_latency(name, batch, example, iterations):
    torch.manual_seed(0)
    model, _ = export_zoo.build(name, batch)
    model.eval()
    x = torch.from_numpy(example)
    with torch.no_grad():
        for _ in range(2):
            model(x)
        times = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", default=os.path.join(os.path.dirname(__file__), "..", "build", "models"))
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("models", nargs="*", default=["resnet50", "mobilenet_v2", "inception_v3",
                                                  "squeezenet1_1", "transformer_encoder"])
    args = ap.parse_args()
    subprocess.run([sys.executable, os.path.join(os.path.dirname(export_zoo.__file__), "export_zoo.py"),
                    "--out", args.zoo] + args.models, check=True, stdout=subprocess.DEVNULL)
    torch.set_num_threads(os.cpu_count())
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            onnx_path = os.path.join(args.zoo, name + ".onnx")
            out = os.path.join(work, name)
            report = os.path.join(work, name + ".json")
            t0 = time.time()
            subprocess.run([args.kiln, "compile", onnx_path, "--emit", "lib", "-o", out,
                            "--report", report], check=True)
            compile_s = time.time() - t0
            r = json.load(open(report))
            p = subprocess.run([args.kiln, "run", out, "--input", os.path.join(args.zoo, name + ".input.npy"),
                                "--output-dir", os.path.join(out, "res")],
                               check=True, capture_output=True, text=True)
            got = np.load(p.stdout.split(": ", 1)[1].strip())
            ref = np.load(os.path.join(args.zoo, name + ".output.npy"))
            rel = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
            b = subprocess.run([args.kiln, "bench", out, "--iterations", str(args.iterations),
                                "--warmup", "1"], check=True, capture_output=True, text=True).stdout
            kiln_ms = float(re.search(r"p50 ([0-9.]+)", b).group(1))
            example = np.load(os.path.join(args.zoo, name + ".input.npy"))
            torch_ms = torch_latency(name, example.shape[0], example, args.iterations)
            rows.append((name, compile_s, r["kernels_out"], r["nodes_in"], r["arena_bytes"],
                         r["lower_bound_bytes"], rel, kiln_ms, torch_ms))
    header = ("| model | compile s | nodes → kernels | arena MB (lower bound) | rel err | "
              "kiln host ms | PyTorch CPU ms | kiln / PyTorch |\n|---|---|---|---|---|---|---|---|\n")
    table = header + "".join(
        f"| {n} | {c:.1f} | {nodes} → {k} | {a / 1e6:.2f} ({lb / 1e6:.2f}) | {e:.1e} | "
        f"{km:.1f} | {tm:.1f} | {km / tm:.2f} |\n"
        for n, c, k, nodes, a, lb, e, km, tm in rows)
    print(table)
    if args.write:
        day = datetime.date.today().isoformat()
        path = os.path.join(os.path.dirname(__file__), "..", "docs", "results", f"{day}-bench-host.md")
        with open(path, "w") as f:
            f.write(f"# Host benchmark, {day}\n\nMachine: {platform.machine()}, {os.cpu_count()} cores, "
                    f"{platform.platform()}; PyTorch {torch.__version__} ({torch.get_num_threads()} threads), "
                    "batch 1, p50 of the timed runs, same process run.\n\n"
                    f"Command: `bench/run_bench.py --kiln {args.kiln} --iterations {args.iterations} --write`\n\n")
            f.write(table)
        print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
