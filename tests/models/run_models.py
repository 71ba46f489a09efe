#!/usr/bin/python3
"""End-to-end model tests: compile each model for a target, run it on its reference
input, compare with the PyTorch reference output.

Models are given as NAME=PATH.onnx; PATH.input.npy and PATH.output.npy must sit beside
the model (models/export_zoo.py writes them; the tiny committed models carry theirs).
The check is relative to the reference's scale: max |out - ref| / max |ref| must stay
within --rtol (fp32 default 1e-4). Prints one line per model: max abs and relative
error, compile and run wall time.

usage: run_models.py --kiln build/bin/kiln [--target host] [--input-shape ...] MODEL...
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--target", default="host")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("models", nargs="+", help="PATH.onnx[:NAME=DIMS,...] (input-shape pins)")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for spec in args.models:
            path, _, pins = spec.partition(":")
            name = os.path.basename(path)[: -len(".onnx")]
            base = path[: -len(".onnx")]
            out = os.path.join(work, name)
            cmd = [args.kiln, "compile", path, "--target", args.target, "--emit", "lib", "-o", out]
            for pin in filter(None, pins.split(",")):
                cmd += ["--input-shape", pin]
            t0 = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True)
            compile_s = time.time() - t0
            if p.returncode != 0:
                print(f"FAIL {name}: compile: {p.stderr.strip()}")
                failed = True
                continue
            t0 = time.time()
            p = subprocess.run([args.kiln, "run", out, "--input", base + ".input.npy",
                                "--output-dir", os.path.join(out, "res")],
                               capture_output=True, text=True)
            run_s = time.time() - t0
            if p.returncode != 0:
                print(f"FAIL {name}: run: {p.stderr.strip()}")
                failed = True
                continue
            written = [line.split(": ", 1)[1] for line in p.stdout.splitlines() if ": " in line]
            got = np.load(written[0])
            ref = np.load(base + ".output.npy")
            if got.shape != ref.shape:
                print(f"FAIL {name}: shape {got.shape} != reference {ref.shape}")
                failed = True
                continue
            abs_err = float(np.abs(got.astype(np.float64) - ref).max())
            rel_err = abs_err / max(float(np.abs(ref).max()), 1e-30)
            ok = rel_err <= args.rtol and np.isfinite(got).all()
            failed |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs {abs_err:.3e}, rel {rel_err:.3e} "
                  f"(compile {compile_s:.1f} s, run {run_s:.2f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
