#!/usr/bin/python3
"""Fusion figures of the zoo on the cuda target: one table, measured in one run.

For each model exported by models/export_zoo.py (full size, batch 1): compile for cuda
with fusion and with --no-fuse, and print kernels, emitted launches (the PTX's .entry
count, which is what a run launches), global-memory bytes per inference from the compile
report (bytes_read + bytes_written) and their ratio to --no-fuse, compile time, and
whether the PTX assembles with ptxas for sm_80 and sm_90. With --before KILN, the same
launches and compile time for another kiln binary (an older commit) in the same run.

usage: bench/fusion_table.py --kiln build/bin/kiln [--zoo DIR] [--before OLD_KILN] [MODEL ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "ptx"))
import ptx_check  # noqa: E402

MODELS = ["resnet50", "mobilenet_v2", "inception_v3", "squeezenet1_1",
          "transformer_encoder", "gpt2", "resnet50_bn", "transformer_encoder_op13"]


def compile_cuda(kiln, model, out, extra):
    report = os.path.join(out, "report.json")
    cmd = [kiln, "compile", model, "--target", "cuda", "-o", out, "--report", report] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["failed"]
    with open(os.path.join(out, "model.ptx")) as f:
        entries = f.read().count(".entry ")
    with open(report) as f:
        rep = json.load(f)
    return {"entries": entries, "report": rep, "ptx": os.path.join(out, "model.ptx")}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo", default="/tmp/zoo-full")
    ap.add_argument("--before", help="another kiln binary to compare launches with")
    ap.add_argument("models", nargs="*", default=MODELS)
    args = ap.parse_args()
    ptxas = ptx_check.find_ptxas()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in args.models:
            model = os.path.join(args.zoo, name + ".onnx")
            if not os.path.exists(model):
                subprocess.run([sys.executable, os.path.join(ROOT, "models", "export_zoo.py"),
                                "--out", args.zoo, name], check=True)
            fused, err = compile_cuda(args.kiln, model, os.path.join(work, name + "-f"), [])
            unfused, err2 = compile_cuda(args.kiln, model, os.path.join(work, name + "-u"),
                                         ["--no-fuse"])
            if err or err2:
                rows.append((name, "error: " + " ".join(err or err2)))
                continue
            before = None
            if args.before:
                before, _ = compile_cuda(args.before, model, os.path.join(work, name + "-b"), [])
            ptx = "no ptxas"
            if ptxas:
                failure = ptx_check.assemble(ptxas, ["sm_80", "sm_90"], fused["ptx"], 600)
                ptx = "ok" if not failure else "FAIL " + failure
            fr, ur = fused["report"], unfused["report"]
            moved = fr["bytes_read"] + fr["bytes_written"]
            moved_u = ur["bytes_read"] + ur["bytes_written"]
            rows.append((name, fr["kernels_out"], fused["entries"],
                         before["entries"] if before else "-", unfused["entries"],
                         f"{moved / 1e6:.1f}", f"{moved_u / 1e6:.1f}", f"{moved_u / moved:.2f}",
                         f"{fr['compile_ms_total'] / 1000:.2f}",
                         f"{before['report']['compile_ms_total'] / 1000:.2f}" if before else "-",
                         ptx))
    head = ("model", "kernels", "launches", "launches before", "launches --no-fuse",
            "MB moved", "MB --no-fuse", "no-fuse/fused", "compile s", "compile s before",
            "ptxas sm_80+sm_90")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


if __name__ == "__main__":
    main()
