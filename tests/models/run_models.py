#!/usr/bin/python3
"""End-to-end model tests: compile each model for each target, run it on its reference
input where the target can run here, compare with the PyTorch reference output.

Models are given as PATH.onnx[:NAME=DIMS,...]; PATH.input.npy and PATH.output.npy must
sit beside the model (models/export_zoo.py writes them; the tiny committed models carry
theirs). The check is relative to the reference's scale: max |out - ref| / max |ref| must
stay within --rtol (fp32 default 1e-4; give a looser one with --precision fp16).

host: compile (--emit lib), run, compare.
cuda: compile (--emit lib), assemble the PTX with ptxas for sm_80 and sm_90 when ptxas
      is installed, and run and compare when a CUDA driver is present (--cuda-run auto);
      without one the line says "not run".
cuda-sim: the cuda kernels compiled for the host and run by the SIMT simulator: run and
      compare, like host.

Prints one line per model and target (max abs and relative error, kernels, compile and
run wall time) and exits 1 if any failed.

usage: run_models.py --kiln build/bin/kiln [--targets host,cuda,cuda-sim] [--jobs N] MODEL...
"""
import argparse
import concurrent.futures
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ptx"))
import ptx_check  # noqa: E402

PTX_ARCHS = ["sm_80", "sm_90"]


def cuda_driver_present():
    if os.environ.get("KILN_CUDA_DRIVER"):
        return False  # a stand-in driver (the mock) computes nothing to compare
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def compare(got, base):
    """(relative error or None on a shape mismatch, text) for the run's first output
    against PATH.output.npy."""
    ref = np.load(base + ".output.npy")
    if got.shape != ref.shape:
        return None, f"shape {got.shape} != reference {ref.shape}"
    abs_err = float(np.abs(got.astype(np.float64) - ref).max())
    rel_err = abs_err / max(float(np.abs(ref).max()), 1e-30)
    return rel_err, f"max abs {abs_err:.3e}, rel {rel_err:.3e}"


def check(args, spec, target, work, run_cuda, ptxas):
    path, _, pins = spec.partition(":")
    name = os.path.basename(path)[: -len(".onnx")]
    base = path[: -len(".onnx")]
    out = os.path.join(work, f"{name}.{target}")
    cmd = [args.kiln, "compile", path, "--target", target, "--emit", "lib", "-o", out]
    if args.precision != "fp32":
        cmd += ["--precision", args.precision, "--no-precision-check"]
    if args.contractions:
        cmd += ["--contractions", args.contractions]
    if args.allow_tf32:
        cmd += ["--allow-tf32"]
    for pin in filter(None, pins.split(",")):
        cmd += ["--input-shape", pin]
    label = f"{name} [{target}]"
    t0 = time.time()
    # cuda: assembled below for every arch (kiln's own ptxas run would repeat one).
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env={**os.environ, "KILN_PTXAS": "off"} if target == "cuda" else None)
    compile_s = time.time() - t0
    if p.returncode != 0:
        return False, f"FAIL {label}: compile: {p.stderr.strip()}"
    facts = [f"compile {compile_s:.1f} s"]
    if target == "cuda":
        ptx = os.path.join(out, "model.ptx")
        with open(ptx) as f:
            facts.append(f"{len(re.findall(r'[.]entry[ ]', f.read()))} kernels")
        failure = ptx_check.assemble(ptxas, PTX_ARCHS, ptx, 600)
        if failure:
            return False, f"FAIL {label}: {failure}"
        facts.append("ptxas " + " ".join(PTX_ARCHS) if ptxas else "no ptxas")
        if not run_cuda:
            return True, f"ok   {label}: not run (no CUDA driver); " + ", ".join(facts)
    t0 = time.time()
    p = subprocess.run([args.kiln, "run", out, "--input", base + ".input.npy",
                        "--output-dir", os.path.join(out, "res")],
                       capture_output=True, text=True)
    facts.append(f"run {time.time() - t0:.2f} s")
    if p.returncode != 0:
        return False, f"FAIL {label}: run: {p.stderr.strip()}"
    written = [line.split(": ", 1)[1] for line in p.stdout.splitlines() if ": " in line]
    got = np.load(written[0])
    rel, text = compare(got, base)
    ok = rel is not None and rel <= args.rtol and np.isfinite(got).all()
    return ok, f"{'ok  ' if ok else 'FAIL'} {label}: {text} ({', '.join(facts)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--targets", default="host", help="comma-separated: host, cuda, cuda-sim")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--contractions", choices=["auto", "kiln", "library"],
                    help="passed to kiln compile (default: its default)")
    ap.add_argument("--precision", choices=["fp32", "fp16"], default="fp32",
                    help="fp16: --precision fp16 (cuda, cuda-sim: the tensor-core kernels)")
    ap.add_argument("--allow-tf32", action="store_true",
                    help="cuda, cuda-sim: f32 contractions on tensor cores in TF32")
    ap.add_argument("--cuda-run", choices=["auto", "never"], default="auto")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("models", nargs="+", help="PATH.onnx[:NAME=DIMS,...] (input-shape pins)")
    args = ap.parse_args()
    targets = args.targets.split(",")
    for t in targets:
        if t not in ("host", "cuda", "cuda-sim"):
            ap.error(f"unknown target {t}")
    run_cuda = args.cuda_run == "auto" and cuda_driver_present()
    ptxas = ptx_check.find_ptxas()
    failed = False
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(check, args, spec, t, work, run_cuda, ptxas)
                   for spec in args.models for t in targets]
        for fut in futures:
            ok, line = fut.result()
            failed |= not ok
            print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
