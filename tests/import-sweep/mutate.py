#!/usr/bin/env python3
"""Feeds `kiln import` corrupted copies of real models: truncations and byte flips.

Every run must end with exit 0 or one clean `kiln: error:` line and exit 1 — never a
signal, another exit code or a hang. Deterministic (seeded).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    models = []
    for suite in ("node", "pytorch-converted", "simple"):
        for d, _, files in os.walk(os.path.join(args.data, suite)):
            if "model.onnx" in files:
                models.append(os.path.join(d, "model.onnx"))
    models.sort()
    if not models:
        print("no models found", file=sys.stderr)
        return 1
    counts = {"ok": 0, "error": 0}
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        for i in range(args.cases):
            src = rng.choice(models)
            data = bytearray(open(src, "rb").read())
            kind = rng.choice(["truncate", "flip", "flip", "splice"])
            if kind == "truncate":
                data = data[: rng.randrange(1, len(data))]
            elif kind == "flip":
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                other = open(rng.choice(models), "rb").read()
                cut = rng.randrange(len(data))
                data = data[:cut] + other[rng.randrange(len(other)):]
            with open(path, "wb") as f:
                f.write(data)
            try:
                p = subprocess.run([args.kiln, "import", path, "-o", os.devnull],
                                   capture_output=True, text=True, errors="replace", timeout=60)
            except subprocess.TimeoutExpired:
                bad.append(f"HANG {kind} of {src}")
                continue
            lines = p.stderr.strip().splitlines()
            if p.returncode == 0:
                counts["ok"] += 1
            elif p.returncode == 1 and len(lines) == 1 and lines[0].startswith("kiln: error: "):
                counts["error"] += 1
            else:
                keep = os.path.join(tempfile.gettempdir(), f"kiln-mutant-{args.seed}-{i}.onnx")
                with open(keep, "wb") as f:
                    f.write(data)
                bad.append(f"CRASH rc={p.returncode} {kind} of {src} (kept {keep}): {p.stderr[-300:]}")
    print(f"mutants: {args.cases}, imported {counts['ok']}, clean errors {counts['error']}, "
          f"crashes/hangs {len(bad)}")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
