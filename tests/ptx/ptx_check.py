#!/usr/bin/python3
"""Kiln's PTX check: compile models for `--target cuda` and assemble the PTX.

Without a GPU, this is how the cuda target is held to account: every kernel of every
model given must compile to PTX that `ptxas` accepts for each --arch (sm_80 and sm_90
by default: the default PTX target and the H200), and for --emit-lib models the
generated runtime (model.cpp) must compile and link against kiln_runtime.

Models: --conformance-expectations FILE takes every node test FILE lists as `pass`
(the host conformance), plus any MODEL[:NAME=DxD...] arguments. Reports kernels
(.entry count), PTX bytes and the pass rate; exits 1 on any compile or ptxas failure.
Without ptxas (no CUDA toolkit) the PTX is still generated and checked to be
non-empty, and the run says ptxas was skipped.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def check(kiln, ptxas, archs, model, shapes, work, emit_lib, timeout):
    name = os.path.basename(os.path.dirname(model)) if model.endswith("/model.onnx") \
        else os.path.splitext(os.path.basename(model))[0]
    out = os.path.join(work, name)
    cmd = [kiln, "compile", model, "--target", "cuda", "-o", out]
    if emit_lib:
        cmd += ["--emit", "lib"]
    for s in shapes:
        cmd += ["--input-shape", s]
    try:
        # This script assembles every arch itself: kiln's own ptxas run (its
        # report's statistics) would only repeat one of them.
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "KILN_PTXAS": "off"})
    except subprocess.TimeoutExpired:
        return name, "fail", "compile timed out", 0, 0
    if r.returncode != 0:
        status = "crash" if r.returncode < 0 or r.returncode > 1 else "fail"
        return name, status, "compile: " + (r.stderr.strip().splitlines() or ["?"])[-1], 0, 0
    with open(os.path.join(out, "model.ptx")) as f:
        ptx = f.read()
    kernels = len(re.findall(r"\.entry\s", ptx))
    failure = assemble(ptxas, archs, os.path.join(out, "model.ptx"), timeout)
    if failure:
        return name, "fail", failure, kernels, len(ptx)
    shutil.rmtree(out, ignore_errors=True)
    return name, "pass", "", kernels, len(ptx)


def find_ptxas():
    """ptxas from PATH or the CUDA toolkit's default place; None when neither has it."""
    if shutil.which("ptxas"):
        return shutil.which("ptxas")
    return "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None


def assemble(ptxas, archs, ptx_path, timeout):
    """Assembles `ptx_path` for each arch; the first failure as text, or "" (also when
    there is no ptxas)."""
    if not ptxas:
        return ""
    for arch in archs:
        p = subprocess.run([ptxas, f"-arch={arch}", ptx_path,
                            "-o", os.path.splitext(ptx_path)[0] + f".{arch}.cubin"],
                           capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            return f"ptxas {arch}: " + p.stderr.strip()[:300]
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--ptxas", default=find_ptxas())
    ap.add_argument("--arch", action="append", help="default: sm_80 and sm_90")
    ap.add_argument("--conformance-expectations")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--emit-lib", action="store_true", help="also build libmodel.so")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("models", nargs="*", help="MODEL[:NAME=DxD,...]")
    args = ap.parse_args()
    archs = args.arch or ["sm_80", "sm_90"]

    jobs = []
    if args.conformance_expectations:
        with open(args.conformance_expectations) as f:
            for line in f:
                parts = line.split()
                path = os.path.join(args.data, parts[0], "model.onnx") if parts else ""
                # The expectations also list the pytorch-* tests, not under --data.
                if len(parts) == 2 and parts[1] == "pass" and os.path.exists(path):
                    jobs.append((path, []))
    for m in args.models:
        path, _, shapes = m.partition(":")
        jobs.append((path, [s for s in shapes.split(",") if s]))
    if not jobs:
        print("no models", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="kiln-ptx-")
    start = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(check, args.kiln, args.ptxas, archs, m, s, work,
                               args.emit_lib, args.timeout) for m, s in jobs]
        for fut in concurrent.futures.as_completed(futures):
            results.append(fut.result())
    shutil.rmtree(work, ignore_errors=True)
    passed = [r for r in results if r[1] == "pass"]
    kernels = sum(r[3] for r in results)
    bad = [r for r in results if r[1] != "pass"]
    for name, status, detail, _, _ in sorted(bad):
        print(f"{status.upper()} {name}: {detail}")
    if args.verbose:
        for name, _, _, k, size in sorted(passed):
            print(f"ok {name}: {k} kernels, {size} bytes of PTX")
    assembled = "assembled by ptxas for " + ", ".join(archs) if args.ptxas \
        else "ptxas not found: generated only"
    print(f"ptx: {len(passed)}/{len(results)} models, {kernels} kernels, {assembled} "
          f"({time.time() - start:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
