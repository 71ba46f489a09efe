#!/usr/bin/env python3
"""Kiln's GPU check: one prepared command for a machine lent a GPU.

The device machine has CUDA, a C++ compiler, python with numpy and onnx, but no
LLVM/MLIR, so Kiln itself cannot run there. The work is split:

  prepare OUT   (here, with the compiler) compiles every node test that passes on
                host for --target cuda (model.cpp, model.ptx, model.weights), copies
                its test data sets and the runtime's sources into OUT (kept small:
                the device tool carries at most 64 MiB).
  run OUT       (on the device) builds kiln_runtime and each model's libmodel.so with
                the local C++ compiler, runs every data set through the C ABI
                (ctypes), compares with the ONNX backend's rules (rtol 1e-3, atol
                1e-7; exact for integers), prints a table and writes OUT/results.txt.

`run` works against the mock driver too (KILN_CUDA_DRIVER=.../libkiln_mock_cuda.so),
which checks every launch but computes nothing: a dry run of the whole procedure.
Full-size zoo models need a self-contained kiln on the device (not built yet); the
zoo's PTX is checked here by tests/ptx/ptx_check.py.
"""
import argparse
import concurrent.futures
import ctypes
import glob
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
          7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    shutil.copytree(os.path.join(ROOT, "runtime"), os.path.join(args.out, "runtime"),
                    dirs_exist_ok=True)
    names = []
    with open(args.expectations) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[1] == "pass":
                names.append(parts[0])

    def one(name):
        src = os.path.join(args.data, name)
        dst = os.path.join(args.out, "tests", name)
        r = subprocess.run([args.kiln, "compile", os.path.join(src, "model.onnx"),
                            "--target", "cuda", "--gpu-arch", args.gpu_arch, "-o", dst],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return name, r.stderr.strip()
        for d in glob.glob(os.path.join(src, "test_data_set_*")):
            shutil.copytree(d, os.path.join(dst, os.path.basename(d)), dirs_exist_ok=True)
        return name, None

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        failed = [(n, e) for n, e in pool.map(one, names) if e]
    for n, e in failed:
        print(f"not prepared {n}: {e}")
    print(f"prepared {len(names) - len(failed)} tests in {args.out}")
    return 1 if failed else 0


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class Info(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


def build_runtime(out, cxx):
    lib = os.path.join(out, "libkiln_runtime.a")
    objs = []
    for src in glob.glob(os.path.join(out, "runtime", "src", "*.cpp")):
        obj = src[:-4] + ".o"
        subprocess.run([cxx, "-std=c++17", "-O2", "-fPIC", "-I",
                        os.path.join(out, "runtime", "include"), "-c", src, "-o", obj],
                       check=True)
        objs.append(obj)
    subprocess.run(["ar", "rcs", lib] + objs, check=True)
    return lib


def run_test(test, runtime, cxx):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    name = os.path.basename(test)
    lib = os.path.join(test, "libmodel.so")
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
                        "-I", os.path.join(os.path.dirname(runtime), "runtime", "include"),
                        "-I", test, os.path.join(test, "model.cpp"), runtime, "-ldl",
                        "-o", lib], capture_output=True, text=True)
    if r.returncode != 0:
        return name, "fail", "build: " + r.stderr.strip()[:200], 0.0
    m = ctypes.CDLL(lib)
    m.kiln_model_create.restype = ctypes.c_void_p
    m.kiln_model_error.restype = ctypes.c_char_p
    m.kiln_model_error.argtypes = [ctypes.c_void_p]
    m.kiln_model_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_int32,
                                 ctypes.POINTER(Tensor), ctypes.c_int32]
    m.kiln_model_output_info.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Info)]
    m.kiln_model_num_outputs.argtypes = [ctypes.c_void_p]
    model = m.kiln_model_create(os.path.join(test, "model.weights").encode())
    err = m.kiln_model_error(model)
    if err:
        return name, "fail", "load: " + err.decode(), 0.0
    nout = m.kiln_model_num_outputs(model)
    seconds = 0.0
    for ds in sorted(glob.glob(os.path.join(test, "test_data_set_*"))):
        def load(path):
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            return np.ascontiguousarray(numpy_helper.to_array(t))
        ins = [load(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                                       key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        refs = [load(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                                        key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        keep = []

        def tensor(a):
            shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
            keep.append(shape)
            code = {v: k for k, v in DTYPES.items()}[str(a.dtype)]
            return Tensor(code, a.ndim, shape, a.ctypes.data)
        outs = []
        for i in range(nout):
            info = Info()
            m.kiln_model_output_info(model, i, ctypes.byref(info))
            outs.append(np.zeros([info.shape[d] for d in range(info.rank)],
                                 dtype=DTYPES[info.dtype]))
        tin = (Tensor * max(1, len(ins)))(*[tensor(a) for a in ins])
        tout = (Tensor * max(1, nout))(*[tensor(a) for a in outs])
        start = time.perf_counter()
        rc = m.kiln_model_run(model, tin, len(ins), tout, nout)
        seconds += time.perf_counter() - start
        if rc != 0:
            return name, "fail", "run: " + m.kiln_model_error(model).decode(), seconds
        for ref, got in zip(refs, outs):
            try:
                if ref.dtype.kind in "fc":
                    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-7, equal_nan=True)
                elif not np.array_equal(ref, got):
                    raise AssertionError("values differ (exact)")
            except AssertionError as e:
                return name, "fail", " ".join(str(e).split())[:200], seconds
    return name, "pass", "", seconds


def run(args):
    cxx = shutil.which(args.cxx) or args.cxx
    runtime = build_runtime(args.out, cxx)
    tests = sorted(glob.glob(os.path.join(args.out, "tests", "test_*")))
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for r in pool.map(lambda t: run_test(t, runtime, cxx), tests):
            results.append(r)
    passed = sum(1 for r in results if r[1] == "pass")
    with open(os.path.join(args.out, "results.txt"), "w") as f:
        for name, status, detail, secs in results:
            f.write(f"{name} {status} {secs * 1e3:.3f}ms {detail}\n")
    for name, status, detail, _ in results:
        if status != "pass":
            print(f"{status} {name}: {detail}")
    print(f"| check | result |\n|---|---|\n| cuda conformance | {passed}/{len(results)} pass |")
    return 0 if passed == len(results) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("out")
    p.add_argument("--kiln", required=True)
    p.add_argument("--gpu-arch", default="sm_90")
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    p.add_argument("--expectations",
                   default=os.path.join(ROOT, "tests/conformance/host-expectations.txt"))
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--cxx", default="g++")
    r.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
