#!/usr/bin/python3
"""Streams figures, measured in one run on this machine.

Host (2 cores here): each branchy model compiled with --max-streams 1 and 2, then
`kiln bench` run alternately (ROUNDS times each, --iterations N) and the median of
their p50 latencies compared: the speedup of running branches on two threads, and
the arena of the concurrent plan vs the sequential one (and their lower bounds).

Cuda (no GPU needed): each model compiled for the cuda target (--max-streams 4,
the default, H200 cost model): streams and events the plan uses, the cost model's
estimated critical path vs the sum of all launches, and the arena vs 1 stream.

usage: bench/streams.py --kiln build/bin/kiln [--zoo DIR] [--rounds 3] [--iterations 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HOST_MODELS = ["inception_v3", "squeezenet1_1", "googlenet"]
CUDA_MODELS = ["inception_v3", "googlenet", "resnet50", "transformer_encoder", "gpt2"]


def compile_model(kiln, model, out, extra):
    report = out + ".json"
    cmd = [kiln, "compile", model, "-o", out, "-q", "--report", report] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(" ".join(cmd) + "\n" + r.stderr)
    with open(report) as f:
        return json.load(f)


def p50(kiln, out, iterations):
    r = subprocess.run([kiln, "bench", out, "--iterations", str(iterations), "--warmup", "1"],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        if line.startswith("latency ms:"):
            return float(line.split("p50")[1].split()[0])
    raise SystemExit("no latency in: " + r.stdout)


def mib(b):
    return f"{b / 2**20:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", default="/tmp/zoo-full")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=5)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kiln-streams-")

    print(f"host: {os.cpu_count()} cores; p50 ms = median over {args.rounds} alternating "
          f"rounds of `kiln bench --iterations {args.iterations}`")
    print("| model | 1 stream p50 ms | 2 streams p50 ms | speedup | events | arena 1 / 2 streams MiB "
          "| lower bound 1 / 2 MiB |")
    print("|---|---|---|---|---|---|---|")
    for name in HOST_MODELS:
        model = os.path.join(args.zoo, name + ".onnx")
        outs, reports = {}, {}
        for s in (1, 2):
            outs[s] = os.path.join(work, f"{name}-host-{s}")
            reports[s] = compile_model(args.kiln, model, outs[s],
                                       ["--emit", "lib", "--max-streams", str(s)])
        times = {1: [], 2: []}
        for _ in range(args.rounds):
            for s in (1, 2):
                times[s].append(p50(args.kiln, outs[s], args.iterations))
        t1, t2 = statistics.median(times[1]), statistics.median(times[2])
        r1, r2 = reports[1], reports[2]
        print(f"| {name} | {t1:.0f} | {t2:.0f} | {t1 / t2:.2f}x | {r2['events']} | "
              f"{mib(r1['arena_bytes'])} / {mib(r2['arena_bytes'])} | "
              f"{mib(r1['lower_bound_bytes'])} / {mib(r2['lower_bound_bytes'])} |", flush=True)

    print()
    print("cuda (H200 cost model, --max-streams 4): estimated critical path vs all launches "
          "in sequence")
    print("| model | launches | streams | events | critical path us | sequential us | ratio "
          "| arena 4 / 1 stream MiB | lower bound 4 / 1 MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in CUDA_MODELS:
        model = os.path.join(args.zoo, name + ".onnx")
        r = compile_model(args.kiln, model, os.path.join(work, f"{name}-cuda"),
                          ["--target", "cuda"])
        est, seq = r["estimated_ns"] / 1e3, r["sequential_ns"] / 1e3
        print(f"| {name} | {r['launches']} | {r['streams']} | {r['events']} | {est:.0f} | "
              f"{seq:.0f} | {seq / est:.2f}x | {mib(r['arena_bytes'])} / "
              f"{mib(r['sequential_arena_bytes'])} | {mib(r['lower_bound_bytes'])} / "
              f"{mib(r['sequential_lower_bound_bytes'])} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
