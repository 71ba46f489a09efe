#!/usr/bin/python3
"""What the Python bindings add to a run: the tiny model (a run of a few microseconds,
so the binding's own cost shows) through kiln.Model.run from numpy, next to the C ABI
from C++ (`kiln bench`, which binds the same tensors and calls kiln_context_run), in
the same run. Both: p50 over ITERATIONS runs after a warm-up, ROUNDS alternating
rounds, the median of the rounds' p50s.

usage: bench/python_overhead.py --kiln build/bin/kiln --package-dir build/python
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--package-dir", required=True)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, args.package_dir)
    os.environ["KILN"] = args.kiln
    import kiln
    out = os.path.join(tempfile.mkdtemp(prefix="kiln-pybench-"), "tiny")
    model = kiln.compile(os.path.join(ROOT, "models", "tiny", "tiny_cnn.onnx"),
                         input_shapes={"input": (1, 1, 10, 10)}, output_dir=out)
    feeds = {"input": np.load(os.path.join(ROOT, "models", "tiny", "tiny_cnn.input.npy"))}

    def python_p50():
        for _ in range(200):
            model.run(feeds)
        times = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            model.run(feeds)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    def c_abi_p50():
        r = subprocess.run([args.kiln, "bench", out, "--iterations", str(args.iterations),
                            "--warmup", "200"], capture_output=True, text=True, check=True)
        for line in r.stdout.splitlines():
            if line.startswith("latency ms:"):
                return float(line.split("p50")[1].split()[0])
        raise SystemExit("no latency in: " + r.stdout)

    py, c = [], []
    for _ in range(args.rounds):
        py.append(python_p50())
        c.append(c_abi_p50())
    p, q = statistics.median(py), statistics.median(c)
    print("| tiny model, host | p50 us | vs C ABI |")
    print("|---|---|---|")
    print(f"| C ABI (kiln bench) | {q * 1e3:.1f} | 1.00x |")
    print(f"| Python kiln.Model.run | {p * 1e3:.1f} | {p / q:.2f}x |")
    print(f"(binding overhead {1e3 * (p - q):.1f} us a run: dict in, outputs allocated, "
          "dict out)")


if __name__ == "__main__":
    sys.exit(main())
