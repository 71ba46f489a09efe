#!/usr/bin/python3
"""Host contractions: Kiln's own kernels vs library calls (oneDNN) vs ONNX Runtime CPU.

For each zoo model (models/export_zoo.py; exported when missing), in one run on this
machine: compile for the host with `--contractions kiln` and with the default
(`auto`: convolutions and matrix products through oneDNN), check both outputs
against PyTorch's reference, time both with `kiln bench` (p50) on one thread
(KILN_NUM_THREADS=1: Kiln's thread pool, and oneDNN's threads too) and on every core
(the default), and time ONNX Runtime's CPU provider on the
same input (p50, default threads: all cores; like oneDNN's). Prints one table;
--write saves it to docs/results/DATE-host-contractions.md.

ONNX Runtime is a PyPI package: run this script with a virtual environment's python
made with --system-site-packages (torch and numpy from Debian), e.g.
  python3 -m venv --system-site-packages /tmp/ortvenv && /tmp/ortvenv/bin/pip install onnxruntime
  /tmp/ortvenv/bin/python bench/host_contractions.py --kiln build/bin/kiln resnet50
Without onnxruntime the ORT columns are empty.

usage: bench/host_contractions.py --kiln build/bin/kiln [--zoo build/models] [--write] [MODEL ...]
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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"]


def pinned_shape(zoo, name):
    with open(os.path.join(zoo, name + ".meta.json")) as f:
        return "x".join(str(d) for d in json.load(f)["shape"])


def kiln_build(kiln, zoo, name, out, contractions):
    model = os.path.join(zoo, name + ".onnx")
    t0 = time.perf_counter()
    subprocess.run([kiln, "compile", model, "-q", "--emit", "lib", "-o", out,
                    "--contractions", contractions, "--report", out + ".json",
                    "--input-shape", "input=" + pinned_shape(zoo, name)], check=True)
    compile_s = time.perf_counter() - t0
    with open(out + ".json") as f:
        report = json.load(f)
    return compile_s, report["library_calls"], report["launches"]


def kiln_check(kiln, zoo, name, out):
    r = subprocess.run([kiln, "run", out, "--input", "input=" + os.path.join(zoo, name + ".input.npy"),
                        "--output-dir", out], check=True, capture_output=True, text=True)
    got = np.load(os.path.join(out, "output.npy"))
    want = np.load(os.path.join(zoo, name + ".output.npy"))
    return float(np.max(np.abs(got.astype(np.float64) - want)))


def kiln_latency(kiln, out, iterations, threads=None):
    env = dict(os.environ)
    env.pop("KILN_NUM_THREADS", None)
    if threads:
        env["KILN_NUM_THREADS"] = str(threads)
    b = subprocess.run([kiln, "bench", out, "--iterations", str(iterations), "--warmup", "3"],
                       check=True, capture_output=True, text=True, env=env).stdout
    return float(re.search(r"p50 ([0-9.]+)", b).group(1))


def ort_latency(zoo, name, iterations):
    try:
        import onnxruntime as ort
    except ImportError:
        return None, None
    s = ort.InferenceSession(os.path.join(zoo, name + ".onnx"), providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(zoo, name + ".input.npy"))
    feed = {s.get_inputs()[0].name: x}
    for _ in range(3):
        s.run(None, feed)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        s.run(None, feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), ort.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    args = ap.parse_args()
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out",
                    args.zoo, "--"] + args.models, check=True)
    kiln = os.path.abspath(args.kiln)
    header = ("| model | library calls / launches | max abs error own / library | "
              "Kiln own ms, 1 thread / all | Kiln library ms, 1 thread / all | "
              "library vs own | ORT CPU ms | library vs ORT |")
    rows = [header, "|" + "---|" * 8]
    ort_version = None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            own, lib = os.path.join(tmp, name + "-kiln"), os.path.join(tmp, name + "-library")
            kiln_build(kiln, args.zoo, name, own, "kiln")
            _, calls, launches = kiln_build(kiln, args.zoo, name, lib, "auto")
            err_own = kiln_check(kiln, args.zoo, name, own)
            err_lib = kiln_check(kiln, args.zoo, name, lib)
            # Kiln's own kernels take seconds per run on the big models: fewer runs.
            t_own1 = kiln_latency(kiln, own, max(3, args.iterations // 4), threads=1)
            t_own = kiln_latency(kiln, own, max(3, args.iterations // 4))
            t_lib1 = kiln_latency(kiln, lib, args.iterations, threads=1)
            t_lib = kiln_latency(kiln, lib, args.iterations)
            t_ort, ort_version = ort_latency(args.zoo, name, args.iterations)
            ort_cells = (f"{t_ort:.1f} | {t_lib / t_ort:.2f}x" if t_ort else " | ")
            row = (f"| {name} | {calls} / {launches} | {err_own:.1e} / {err_lib:.1e} | "
                   f"{t_own1:.1f} / {t_own:.1f} | {t_lib1:.1f} / {t_lib:.1f} | "
                   f"{t_own / t_lib:.1f}x | {ort_cells} |")
            rows.append(row)
            print(row, flush=True)
    table = "\n".join(rows)
    print("\n" + table)
    if args.write:
        date = datetime.date.today().isoformat()
        path = os.path.join(ROOT, "docs", "results", f"{date}-host-contractions.md")
        with open(path, "w") as f:
            f.write(f"# {date}: host contractions, Kiln's kernels vs oneDNN library calls vs "
                    f"ONNX Runtime\n\n")
            f.write(f"Machine: {platform.processor() or platform.machine()}, "
                    f"{os.cpu_count()} cores; ONNX Runtime {ort_version or 'absent'} (CPU, "
                    f"default threads); oneDNN from libdnnl2 (OpenMP). Kiln on 1 thread "
                    f"(KILN_NUM_THREADS=1: its pool and oneDNN) and on all cores. Batch 1, "
                    f"p50 of {args.iterations} runs (own kernels: {max(3, args.iterations // 4)}).\n\n")
            f.write("Command: `" + " ".join(["bench/host_contractions.py"] + sys.argv[1:]) + "`\n\n")
            f.write(table + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
