#!/usr/bin/env python3
"""Runs `kiln import` over every model.onnx of Debian's libonnx-testdata.

Each model must either import (exit 0) or fail with one clean `kiln: error:` line
(exit 1). A crash (signal, other exit code, or output without the error prefix) or a
hang (over --timeout seconds) is a failure of the sweep. Prints the counts per suite.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

SUITES = ["node", "simple", "pytorch-converted", "pytorch-operator"]


def run_one(kiln, model, timeout):
    try:
        p = subprocess.run([kiln, "import", model, "-o", os.devnull],
                           capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    err = p.stderr.strip()
    if p.returncode == 0:
        return "imported", ""
    lines = err.splitlines()
    if p.returncode == 1 and len(lines) == 1 and lines[0].startswith("kiln: error: "):
        return "error", lines[0]
    return "crash", f"rc={p.returncode} {err[-300:]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args()

    models = []
    for suite in SUITES:
        root = os.path.join(args.data, suite)
        for dirpath, _, files in os.walk(root):
            if "model.onnx" in files:
                models.append((suite, os.path.join(dirpath, "model.onnx")))
    models.sort()
    if not models:
        print(f"no models found under {args.data}", file=sys.stderr)
        return 1

    start = time.time()
    counts = {}
    bad = []
    errors = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_one, args.kiln, m, args.timeout): (s, m) for s, m in models}
        for f in concurrent.futures.as_completed(futures):
            suite, model = futures[f]
            status, detail = f.result()
            counts.setdefault(suite, {}).setdefault(status, 0)
            counts[suite][status] += 1
            if status in ("crash", "hang"):
                bad.append((model, status, detail))
            elif status == "error":
                errors.append(detail)
    total = {}
    for suite in SUITES:
        c = counts.get(suite, {})
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
        print(f"{suite:18s} " + " ".join(f"{k}={c.get(k, 0)}" for k in ("imported", "error", "crash", "hang")))
    print(f"{'total':18s} " + " ".join(f"{k}={total.get(k, 0)}" for k in ("imported", "error", "crash", "hang"))
          + f"  ({len(models)} models, {time.time() - start:.1f} s)")
    if args.show_errors:
        for e in sorted(errors):
            print("  " + e)
    for model, status, detail in bad:
        print(f"{status.upper()}: {model}: {detail}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
