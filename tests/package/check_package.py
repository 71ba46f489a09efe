#!/usr/bin/env python3
"""The installed package as a user consumes it: `cmake --install` into a temporary
prefix, then examples/classify configured against it with find_package(Kiln) and
kiln_add_model, built and run, for the host target (weights from the file, and
embedded) and the cuda target (against the mock driver, which checks every launch
but computes nothing). The host example's top-5 must equal the top-5 of `kiln run`
(the installed kiln, `--emit lib`, which must find the installed runtime). Touching
the model must make the build compile it again. examples/two-models links two
models (host, and cuda-sim with its weights built in) into one program; both must
give `kiln run`'s output.

usage: check_package.py --build BUILD_DIR --mock-driver libkiln_mock_cuda.so
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def top5(lines):
    rows = [line.split() for line in lines.strip().splitlines()]
    return [(int(c), float(s)) for c, s in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--mock-driver", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kiln-package-")
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", args.build, "--prefix", prefix])
    kiln = os.path.join(prefix, "bin", "kiln")
    for f in ("lib/cmake/Kiln/KilnConfig.cmake", "lib/libkiln_runtime.a",
              "lib/libkiln_runtime.so", "include/kiln/runtime/Model.h"):
        if not os.path.exists(os.path.join(prefix, f)):
            raise SystemExit(f"FAIL: the install has no {f}")

    # The model is copied so that touching it is safe; the input is the tiny model's.
    model = os.path.join(work, "tiny_cnn.onnx")
    shutil.copy(os.path.join(ROOT, "models", "tiny", "tiny_cnn.onnx"), model)
    image = os.path.join(ROOT, "models", "tiny", "tiny_cnn.input.npy")

    # The reference: the installed kiln's own library and `kiln run`.
    ref_dir = os.path.join(work, "ref")
    run([kiln, "compile", model, "--input-shape", "input=1x1x10x10", "-o", ref_dir,
         "--emit", "lib", "-q"])
    run([kiln, "run", ref_dir, "--input", f"input={image}", "--output-dir", ref_dir + ".out"])
    probs = np.load(os.path.join(ref_dir + ".out", "probs.npy")).reshape(-1)
    order = sorted(range(probs.size), key=lambda i: (-probs[i], i))[:5]
    expected = [(i, float(probs[i])) for i in order]

    def example(name, *defs, env=None):
        build = os.path.join(work, name)
        run(["cmake", "-S", os.path.join(ROOT, "examples", "classify"), "-B", build, "-G",
             "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}", f"-DMODEL={model}", *defs])
        run(["cmake", "--build", build])
        return build, run([os.path.join(build, "classify"), image], env=env)

    failures = []
    for name, defs in (("host", []), ("host-embedded", ["-DEMBED_WEIGHTS=ON"])):
        build, out = example(name, *defs)
        got = top5(out)
        ok = [c for c, _ in got] == [c for c, _ in expected] and \
            all(abs(s - e) <= 1e-5 * max(1.0, abs(e)) for (_, s), (_, e) in zip(got, expected))
        print(f"{'ok  ' if ok else 'FAIL'} {name}: top-5 {got}")
        if not ok:
            failures.append(f"{name}: top-5 {got}, kiln run gives {expected}")
    # Raw float32 input: the same answer.
    raw = os.path.join(work, "input.raw")
    np.load(image).astype("<f4").tofile(raw)
    raw_out = top5(run([os.path.join(work, "host", "classify"), raw]))
    if [c for c, _ in raw_out] != [c for c, _ in expected]:
        failures.append(f"raw input: top-5 {raw_out}")
    # A wrong input is an error, not a crash.
    bad = os.path.join(work, "bad.raw")
    with open(bad, "wb") as f:
        f.write(b"\0" * 12)
    p = subprocess.run([os.path.join(work, "host", "classify"), bad], capture_output=True,
                       text=True)
    if p.returncode != 1 or "expected" not in p.stderr:
        failures.append(f"a 12-byte input: exit {p.returncode}, {p.stderr.strip()}")

    # Two models compiled separately (host and cuda-sim with embedded weights) link
    # into one program and run side by side: both give `kiln run`'s output.
    two = os.path.join(work, "two-models")
    run(["cmake", "-S", os.path.join(ROOT, "examples", "two-models"), "-B", two, "-G",
         "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}", f"-DMODEL={model}"])
    run(["cmake", "--build", two])
    lines = run([os.path.join(two, "two_models"), raw]).strip().splitlines()
    rows = [np.array([float(v) for v in line.split()]) for line in lines]
    if len(rows) != 2 or any(r.shape != probs.shape or
                             not np.allclose(r, probs, rtol=1e-5, atol=1e-6) for r in rows):
        failures.append(f"two models in one program: printed {lines}, kiln run gives {probs}")
    else:
        print(f"ok   two models in one program: both match kiln run "
              f"(max abs {max(float(np.abs(r - probs).max()) for r in rows):.2e})")

    # Touching the model compiles it again.
    os.utime(model)
    dry = run(["ninja", "-C", os.path.join(work, "host"), "-n"])
    if "Kiln: compiling" not in dry:
        failures.append("touching the model does not recompile it:\n" + dry)

    # kiln_add_model's misuse is a configure error that names the problem.
    for args_text, message in (("", "MODEL file.onnx is required"),
                               (f'MODEL "{model}" TARGET tpu', "TARGET tpu: expected host"),
                               (f'MODEL "{model}" PRECISION fp8', "PRECISION fp8: expected fp32, fp16 or auto")):
        project = os.path.join(work, "misuse")
        os.makedirs(project, exist_ok=True)
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\nproject(misuse CXX)\n"
                    f"find_package(Kiln CONFIG REQUIRED)\nkiln_add_model(m {args_text})\n")
        p = subprocess.run(["cmake", "-S", project, "-B", os.path.join(project, "build"),
                            f"-DCMAKE_PREFIX_PATH={prefix}"], capture_output=True, text=True)
        shutil.rmtree(os.path.join(project, "build"), ignore_errors=True)
        if p.returncode == 0 or message not in " ".join(p.stderr.split()):
            failures.append(f"kiln_add_model(m {args_text}): exit {p.returncode}, "
                            f"expected an error with '{message}'")

    # The cuda target builds against the same package and runs on the mock driver.
    env = dict(os.environ, KILN_CUDA_DRIVER=args.mock_driver)
    _, out = example("cuda", "-DTARGET=cuda", env=env)
    if len(out.strip().splitlines()) != 5:
        failures.append(f"cuda (mock driver): printed {out!r}")
    else:
        print("ok   cuda: built, ran on the mock driver")

    for f in failures:
        print("FAIL " + f)
    if not failures:
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
