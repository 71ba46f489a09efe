#!/usr/bin/python3
"""Kiln's benchmark: compile the zoo, time it next to PyTorch, print one table.

For each model (and batch size) exported by models/export_zoo.py (ONNX + reference
input/output; exported here when missing): compile for the host with `kiln compile
--report --report-html`, check the output against PyTorch's reference, time `kiln bench`
and PyTorch CPU eager on the same input in the same run, and print: compile time,
kernels, arena vs lower bound, Kiln and PyTorch latency and their ratio.

On a machine where torch sees a GPU (and unless --no-cuda), also: compile for cuda,
check the output there, and time Kiln (kiln_model_run_device on PyTorch's CUDA tensors
and stream), PyTorch eager and torch.compile (PyTorch >= 2) on the same GPU in the same
run (CUDA events around each call after warm-up; p50; tools/gpu-check's measure), with
the ratios.

With --write, the table goes to docs/results/DATE-bench-host.md (DATE-bench-cuda.md with
the CUDA columns) and the compile reports to docs/results/DATE-reports/. Latency is p50
over --iterations timed runs after warm-up.

usage: bench/run_bench.py --kiln build/bin/kiln [--zoo build/models] [--batch 1 8] [--write]
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.join(ROOT, "tools", "gpu-check"))
import export_zoo  # noqa: E402
import gpu_check  # noqa: E402


def torch_latency(model, x, iterations):
    """p50 milliseconds of model(x) on the CPU after two warm-up calls."""
    with torch.no_grad():
        for _ in range(2):
            model(x)
        times = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def kiln_compile(kiln, onnx_path, out, target, extra):
    # Models exported with dynamic axes are pinned to their example input's shape.
    meta_path = onnx_path[: -len(".onnx")] + ".meta.json"
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("dynamic"):
            extra = extra + ["--input-shape",
                             f"{meta['input']}={'x'.join(map(str, meta['shape']))}"]
    t0 = time.time()
    subprocess.run([kiln, "compile", onnx_path, "--target", target, "--emit", "lib", "-o", out]
                   + extra, check=True)
    return time.time() - t0


def kiln_check(kiln, out, base):
    """Max error relative to the reference's scale of the artifact's output."""
    p = subprocess.run([kiln, "run", out, "--input", base + ".input.npy",
                        "--output-dir", os.path.join(out, "res")],
                       check=True, capture_output=True, text=True)
    got = np.load(p.stdout.splitlines()[0].split(": ", 1)[1].strip())
    ref = np.load(base + ".output.npy")
    return float(np.abs(got.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))


def kiln_latency(kiln, out, iterations):
    b = subprocess.run([kiln, "bench", out, "--iterations", str(iterations), "--warmup", "2"],
                       check=True, capture_output=True, text=True).stdout
    return float(re.search(r"p50 ([0-9.]+)", b).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--batch", type=int, nargs="+", default=[1])
    ap.add_argument("--no-cuda", action="store_true", help="host columns only")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("models", nargs="*", default=export_zoo.MODELS)
    args = ap.parse_args()
    subprocess.run([sys.executable, os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.zoo,
                    "--batch"] + [str(b) for b in args.batch] + ["--"] + args.models,
                   check=True, stdout=subprocess.DEVNULL)
    cuda = not args.no_cuda and torch.cuda.is_available()
    torch.set_num_threads(os.cpu_count())
    day = datetime.date.today().isoformat()
    reports = os.path.join(ROOT, "docs", "results", f"{day}-reports") if args.write \
        else tempfile.mkdtemp(prefix="kiln-reports-")
    os.makedirs(reports, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            for batch in args.batch:
                stem = export_zoo.file_name(name, batch, False)
                base = os.path.join(args.zoo, stem)
                out = os.path.join(work, stem)
                report = os.path.join(reports, stem + ".json")
                compile_s = kiln_compile(args.kiln, base + ".onnx", out, "host",
                                         ["--report", report,
                                          "--report-html", os.path.join(reports, stem + ".html")])
                r = json.load(open(report))
                row = {"model": stem, "compile_s": compile_s, "nodes": r["nodes_in"],
                       "kernels": r["kernels_out"], "arena": r["arena_bytes"],
                       "lower_bound": r["lower_bound_bytes"], "rel": kiln_check(args.kiln, out, base),
                       "kiln_ms": kiln_latency(args.kiln, out, args.iterations)}
                shutil.rmtree(out)
                torch.manual_seed(0)
                model, _ = export_zoo.build(name, batch)
                model.eval()
                x = torch.from_numpy(np.load(base + ".input.npy"))
                row["torch_ms"] = torch_latency(model, x, args.iterations)
                if cuda:
                    # Device tensors on PyTorch's stream for both, CUDA events around each
                    # call: the same measurement as tools/gpu-check.
                    row["cuda_compile_s"] = kiln_compile(args.kiln, base + ".onnx", out, "cuda",
                                                         ["--gpu-arch", "sm_90"])
                    g = gpu_check.measure(out, base, lambda: export_zoo.build(name, batch)[0],
                                          args.iterations, True)
                    row.update(cuda_rel=g.get("rel", float("nan")),
                               kiln_cuda_ms=g.get("kiln_ms", float("nan")),
                               eager_ms=g.get("eager_ms", float("nan")),
                               compiled_ms=g.get("compiled_ms", float("nan")))
                    shutil.rmtree(out)
                rows.append(row)
                print(json.dumps(row), flush=True)

    header = ("| model | compile s | nodes → kernels | arena MB (lower bound) | rel err | "
              "kiln host ms | PyTorch CPU ms | kiln / PyTorch |")
    rule = "|---|---|---|---|---|---|---|---|"
    if cuda:
        header += " cuda compile s | cuda rel err | kiln cuda ms | eager ms | torch.compile ms | kiln / eager | kiln / compile |"
        rule += "---|---|---|---|---|---|---|"
    lines = [header, rule]
    for r in rows:
        line = (f"| {r['model']} | {r['compile_s']:.1f} | {r['nodes']} → {r['kernels']} | "
                f"{r['arena'] / 1e6:.2f} ({r['lower_bound'] / 1e6:.2f}) | {r['rel']:.1e} | "
                f"{r['kiln_ms']:.1f} | {r['torch_ms']:.1f} | {r['kiln_ms'] / r['torch_ms']:.2f} |")
        if cuda:
            line += (f" {r['cuda_compile_s']:.1f} | {r['cuda_rel']:.1e} | {r['kiln_cuda_ms']:.3f} | "
                     f"{r['eager_ms']:.3f} | {r['compiled_ms']:.3f} | "
                     f"{r['kiln_cuda_ms'] / r['eager_ms']:.2f} | {r['kiln_cuda_ms'] / r['compiled_ms']:.2f} |")
        lines.append(line)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.write:
        kind = "cuda" if cuda else "host"
        path = os.path.join(ROOT, "docs", "results", f"{day}-bench-{kind}.md")
        gpu = f"; GPU {torch.cuda.get_device_name()}" if cuda else ""
        with open(path, "w") as f:
            f.write(f"# {'CUDA and host' if cuda else 'Host'} benchmark, {day}\n\n"
                    f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}{gpu}; "
                    f"PyTorch {torch.__version__} ({torch.get_num_threads()} threads); p50 of "
                    f"{args.iterations} timed runs after warm-up, Kiln and PyTorch in the same run.\n\n"
                    f"Command: `bench/run_bench.py --kiln {args.kiln} --iterations {args.iterations} "
                    f"--batch {' '.join(map(str, args.batch))} --write`\n\n"
                    f"Compile reports (JSON and HTML) per model: {day}-reports/.\n\n")
            f.write(table)
        print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
