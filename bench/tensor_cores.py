#!/usr/bin/env python3
"""Tensor-core figures per zoo model (issue 37), all from `kiln compile --target cuda`
reports, in one run on this machine:

- launches, and how many run Kiln's tensor-core kernels (fp16, --contractions kiln);
- the cost model's sum of launch estimates for the device model (h200 by default) with
  the tensor-core kernels and with --no-tensor-cores (the SIMT kernels), batch as exported;
  and with every call the libraries take (--contractions library) and the cost model's
  choice per contraction (--contractions auto, the default: its engines counted);
- ptxas -v over the tensor-core kernels (where ptxas is found): most registers per
  thread, spill bytes, the lowest and highest occupancy;
- compile time (report total, and its emit phase) fp32 and fp16, cold (an empty kernel
  cache) and warm (the same compile again), as a compile without --report takes it
  (no ptxas run: KILN_PTXAS=off).

  bench/tensor_cores.py --kiln build/bin/kiln --zoo /tmp/zoo [--gpu-arch sm_90] \\
      resnet50 transformer_encoder ...

The zoo comes from models/export_zoo.py (NAME.onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def compile_report(kiln, model, out, cache, extra, ptxas=True):
    report = out + ".json"
    cmd = [kiln, "compile", model, "--target", "cuda", "-o", out, "--report", report,
           *extra]
    env = {**os.environ, "KILN_KERNEL_CACHE": cache}
    if not ptxas:
        env["KILN_PTXAS"] = "off"  # a compile without --report does not assemble
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    with open(report) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--gpu-arch", default="sm_90")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    fp16 = ["--precision", "fp16", "--no-precision-check", "--gpu-arch", args.gpu_arch]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            model = os.path.join(args.zoo, name + ".onnx")
            out = os.path.join(work, name)
            times = {}
            for label, extra in (("fp32", ["--gpu-arch", args.gpu_arch]), ("fp16", fp16)):
                cache = os.path.join(work, f"cache-{name}-{label}")
                cold = compile_report(args.kiln, model, out, cache, extra, ptxas=False)
                warm = compile_report(args.kiln, model, out, cache, extra, ptxas=False)
                times[label] = (cold["compile_ms_total"] / 1e3, cold["compile_ms"]["emit"] / 1e3,
                                warm["compile_ms_total"] / 1e3)
            own = fp16 + ["--contractions", "kiln"]
            cache = os.path.join(work, "cache-own")
            tc = compile_report(args.kiln, model, out, cache, own)
            simt = compile_report(args.kiln, model, out, cache, own + ["--no-tensor-cores"])
            lib = compile_report(args.kiln, model, out, cache, fp16 + ["--contractions", "library"])
            auto = compile_report(args.kiln, model, out, cache, fp16)
            engines = {}
            for k in auto["kernels"]:
                if "engine" in k:
                    engines[k["engine"]] = engines.get(k["engine"], 0) + 1
            kernels = [k for k in tc["gpu_kernels"] if k["tensor_cores"]]
            rows.append((name, tc["launches"], tc["tensor_core_launches"],
                         simt["sequential_ns"] / 1e3, tc["sequential_ns"] / 1e3,
                         max((k["registers"] for k in kernels), default=0),
                         sum(k["spill_stores"] + k["spill_loads"] for k in kernels),
                         min((k["occupancy"] for k in kernels), default=0),
                         max((k["occupancy"] for k in kernels), default=0),
                         tc["gpu_kernels_from"], times, lib["sequential_ns"] / 1e3,
                         auto["sequential_ns"] / 1e3, engines))
    print(f"| model | launches | on tensor cores | estimate SIMT (us) | estimate TC (us) | "
          f"TC/SIMT | TC regs max | TC spill bytes | TC occupancy | fp32 cold s (emit) | "
          f"fp32 warm s | fp16 cold s (emit) | fp16 warm s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, launches, tcl, simt, tcn, regs, spills, occ0, occ1, src, t, *_) in rows:
        print(f"| {name} | {launches} | {tcl} | {simt:.1f} | {tcn:.1f} | {tcn / simt:.2f} | "
              f"{regs} | {spills} | {occ0:.2f}-{occ1:.2f} | {t['fp32'][0]:.1f} "
              f"({t['fp32'][1]:.1f}) | {t['fp32'][2]:.1f} | {t['fp16'][0]:.1f} "
              f"({t['fp16'][1]:.1f}) | {t['fp16'][2]:.1f} |")
    print(f"\nresources from: {rows[0][9] if rows else '-'}")
    print("\n| model | estimate library (us) | estimate auto (us) | estimate TC (us) | "
          "auto engines |\n|---|---|---|---|---|")
    for r in rows:
        engines = ", ".join(f"{n} {e}" for e, n in sorted(r[13].items()))
        print(f"| {r[0]} | {r[11]:.1f} | {r[12]:.1f} | {r[4]:.1f} | {engines} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
