#!/usr/bin/env python3
"""Kiln's GPU check: one prepared command for a machine lent a GPU.

The device machine has CUDA, a C++ compiler, python with numpy, onnx and torch, but no
LLVM/MLIR. The work is split:

  prepare OUT   (here, with the compiler) compiles every node test that passes on
                host for --target cuda (model.cpp, model.ptx, model.weights) and copies
                its test data sets and the runtime's sources into OUT; with --bundle it
                also packs a self-contained kiln (kiln-static: MLIR/LLVM linked in, plus
                the shared libraries it still needs and their loader, ~17 MB as
                kiln-bundle.tar.xz) and the zoo exporter, so that the full-size zoo can
                be exported and compiled there (the device tool carries at most 64 MiB,
                too little for the models themselves).
  run OUT       (on the device) builds kiln_runtime and each model's libmodel.so with
                the local C++ compiler, runs every conformance data set through the C
                ABI (ctypes), compares with the ONNX backend's rules (rtol 1e-3, atol
                1e-7; exact for integers); then, when OUT has the bundle, exports the
                zoo with the device's PyTorch, compiles it with the bundled kiln, runs
                each model on PyTorch's CUDA tensors and stream (kiln_context_run_device),
                compares with PyTorch's reference (max error relative to its scale,
                1e-4) and times Kiln, PyTorch eager and torch.compile on the same GPU
                (CUDA events, p50 after warm-up): each Kiln variant (fp32, one stream,
                CUDA graph, fp16 with library calls, fp16 on Kiln's tensor-core kernels,
                fp16 graph) and PyTorch's timings in a process of their own, so that a
                fault in one loses only its own numbers. Prints a table, writes
                OUT/results.txt.

On the device tool: `prepare build/gpu-check --kiln build/bin/kiln --bundle` here, then
run `sh tools/gpu-check/device.sh` there carrying build/gpu-check (47 MB).

`run` works against the mock driver too (KILN_CUDA_DRIVER=.../libkiln_mock_cuda.so),
which checks every launch but computes nothing: a dry run of the whole procedure
(values differ, as expected, and nothing is timed).
"""
import argparse
import concurrent.futures
import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
          7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


def make_bundle(args):
    """Builds kiln-static and packs it with its shared libraries and their loader into
    OUT/kiln-bundle.tar.xz; `kiln/kiln` in it runs the compiler through that loader, so
    the device's own libraries do not matter. Checked here before packing: the bundle
    compiles the tiny model with an empty environment."""
    build = args.build or os.path.dirname(os.path.dirname(os.path.abspath(args.kiln)))
    subprocess.run(["cmake", "--build", build, "--target", "kiln-static"], check=True)
    stage = os.path.join(args.out, "kiln")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "lib"))
    os.makedirs(os.path.join(stage, "bin"))
    binary = os.path.join(stage, "bin", "kiln")
    subprocess.run(["strip", "-o", binary, os.path.join(build, "bin", "kiln-static")], check=True)
    loader = None
    for line in subprocess.run(["ldd", binary], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        parts = line.split()
        path = parts[2] if len(parts) >= 3 and parts[1] == "=>" else parts[0]
        if not os.path.isabs(path):
            continue  # linux-vdso
        shutil.copy(os.path.realpath(path), os.path.join(stage, "lib", os.path.basename(path)))
        if "ld-linux" in path:
            loader = os.path.basename(path)
    with open(os.path.join(stage, "kiln"), "w") as f:
        f.write('#!/bin/sh\n# The bundled kiln, through the bundled loader and libraries.\n'
                'd=$(dirname "$(readlink -f "$0")")\n'
                f'exec "$d/lib/{loader}" --library-path "$d/lib" "$d/bin/kiln" "$@"\n')
    os.chmod(os.path.join(stage, "kiln"), 0o755)
    tiny = os.path.join(ROOT, "models", "tiny", "tiny_cnn.onnx")
    check = os.path.join(args.out, "bundle-check")
    subprocess.run(["env", "-i", os.path.join(stage, "kiln"), "compile", tiny, "--input-shape",
                    "input=1x1x10x10", "--target", "cuda", "-o", check], check=True)
    shutil.rmtree(check)
    with tarfile.open(os.path.join(args.out, "kiln-bundle.tar.xz"), "w:xz") as tar:
        tar.add(stage, arcname="kiln")
    shutil.rmtree(stage)
    os.makedirs(os.path.join(args.out, "models"), exist_ok=True)
    shutil.copy(os.path.join(ROOT, "models", "export_zoo.py"), os.path.join(args.out, "models"))
    size = os.path.getsize(os.path.join(args.out, "kiln-bundle.tar.xz"))
    print(f"bundle: {args.out}/kiln-bundle.tar.xz ({size / 1e6:.1f} MB)")


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    shutil.copytree(os.path.join(ROOT, "runtime"), os.path.join(args.out, "runtime"),
                    dirs_exist_ok=True)
    if args.bundle:
        make_bundle(args)
    if args.no_conformance:
        return 0
    names = []
    with open(args.expectations) as f:
        for line in f:
            parts = line.split()
            # The expectations also list the pytorch-* models, not under --data.
            if len(parts) == 2 and parts[1] == "pass" and re.search(args.filter, parts[0]) \
                    and os.path.exists(os.path.join(args.data, parts[0], "model.onnx")):
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


def tensors(specs):
    """[(shape, numpy dtype name or ONNX dtype code, data pointer)] -> a kiln_tensor array
    for the C ABI (the shape arrays it points to are kept alive with it)."""
    codes = {v: k for k, v in DTYPES.items()}
    shapes = [(ctypes.c_int64 * max(1, len(shape)))(*shape) for shape, _, _ in specs]
    array = (Tensor * max(1, len(specs)))(
        *[Tensor(dtype if isinstance(dtype, int) else codes[dtype], len(shape), dims, ptr)
          for (shape, dtype, ptr), dims in zip(specs, shapes)])
    array.shapes = shapes
    return array


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


def build_model(model_dir, runtime, cxx):
    """Builds MODEL_DIR/libmodel.so from the generated model.cpp; None or the error."""
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
                        "-I", os.path.join(os.path.dirname(runtime), "runtime", "include"),
                        "-I", model_dir, os.path.join(model_dir, "model.cpp"), runtime, "-ldl", "-pthread",
                        "-o", os.path.join(model_dir, "libmodel.so")], capture_output=True, text=True)
    return None if r.returncode == 0 else "build: " + r.stderr.strip()[:200]


def load_model(model_dir):
    """(library, model handle, context handle, error) for MODEL_DIR's libmodel.so and
    weights (C ABI 3: one context of the model runs it)."""
    m = ctypes.CDLL(os.path.join(model_dir, "libmodel.so"))
    m.kiln_model_create.restype = ctypes.c_void_p
    m.kiln_model_create.argtypes = [ctypes.c_char_p]
    m.kiln_model_error.restype = ctypes.c_char_p
    m.kiln_model_error.argtypes = [ctypes.c_void_p]
    m.kiln_context_create.restype = ctypes.c_void_p
    m.kiln_context_create.argtypes = [ctypes.c_void_p]
    m.kiln_context_error.restype = ctypes.c_char_p
    m.kiln_context_error.argtypes = [ctypes.c_void_p]
    m.kiln_context_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_int32,
                                   ctypes.POINTER(Tensor), ctypes.c_int32]
    m.kiln_context_run_device.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor),
                                          ctypes.c_int32, ctypes.POINTER(Tensor),
                                          ctypes.c_int32, ctypes.c_void_p]
    m.kiln_model_output_info.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Info)]
    m.kiln_model_num_outputs.argtypes = [ctypes.c_void_p]
    model = m.kiln_model_create(os.path.join(model_dir, "model.weights").encode())
    err = m.kiln_model_error(model)
    if err:
        return m, model, None, "load: " + err.decode()
    context = m.kiln_context_create(model)
    err = m.kiln_context_error(context)
    return m, model, context, ("context: " + err.decode()) if err else None


def input_codes(m, model):
    """The ONNX dtype codes of the model's inputs."""
    m.kiln_model_input_info.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Info)]
    m.kiln_model_num_inputs.argtypes = [ctypes.c_void_p]
    codes = []
    for i in range(m.kiln_model_num_inputs(model)):
        info = Info()
        m.kiln_model_input_info(model, i, ctypes.byref(info))
        codes.append(info.dtype)
    return codes


def output_shapes(m, model):
    """[(shape, numpy dtype name, ONNX dtype code)] of the model's outputs (bfloat16 as
    uint16 bits)."""
    shapes = []
    for i in range(m.kiln_model_num_outputs(model)):
        info = Info()
        m.kiln_model_output_info(model, i, ctypes.byref(info))
        shapes.append(([info.shape[d] for d in range(info.rank)],
                       "uint16" if info.dtype == 16 else DTYPES[info.dtype], info.dtype))
    return shapes


def run_test(test, runtime, cxx, dry_run=False):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    name = os.path.basename(test)
    error = build_model(test, runtime, cxx)
    if error:
        return name, "fail", error, 0.0
    m, model, context, error = load_model(test)
    if error:
        return name, "fail", error, 0.0
    nout = m.kiln_model_num_outputs(model)
    seconds = 0.0
    for ds in sorted(glob.glob(os.path.join(test, "test_data_set_*"))):
        def load(path):
            """(C-contiguous array, ONNX dtype code); rank 0 stays rank 0 (which
            np.ascontiguousarray would make [1]); bfloat16 as its uint16 bits."""
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            if t.data_type == 16 and a.dtype.itemsize != 2:
                a = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            elif t.data_type == 16:
                a = a.view(np.uint16)
            return np.require(a, requirements="C"), t.data_type
        ins = [load(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                                       key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        refs = [load(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                                        key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        specs = output_shapes(m, model)
        outs = [np.zeros(shape, dtype=dtype) for shape, dtype, _ in specs]
        # bfloat16 inputs are stored as uint16 in ONNX 1.12's test data: the model's type
        tin = tensors([(a.shape, 16 if code == 4 and want == 16 else code, a.ctypes.data)
                       for (a, code), want in zip(ins, input_codes(m, model))])
        tout = tensors([(a.shape, code, a.ctypes.data) for a, (_, _, code) in zip(outs, specs)])
        start = time.perf_counter()
        rc = m.kiln_context_run(context, tin, len(ins), tout, nout)
        seconds += time.perf_counter() - start
        if rc != 0:
            return name, "fail", "run: " + m.kiln_context_error(context).decode(), seconds
        if dry_run:
            continue
        for (ref, _), got in zip(refs, outs):
            try:
                if ref.dtype.kind in "fc":
                    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-7, equal_nan=True)
                elif not np.array_equal(ref, got):
                    raise AssertionError("values differ (exact)")
            except AssertionError as e:
                return name, "fail", " ".join(str(e).split())[:200], seconds
    return name, "pass", "", seconds


def cuda_p50(fn, iterations):
    """p50 milliseconds of fn() on PyTorch's current stream, CUDA events around each call,
    after three warm-up calls."""
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def profile_kernels(fn, iterations):
    """Per GPU kernel name, its microseconds per call of fn(): torch.profiler's CUDA
    activity (CUPTI sees every kernel of the process, Kiln's driver launches included),
    totals over ITERATIONS calls after one warm-up call."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iterations):
            fn()
        torch.cuda.synchronize()
    times = {}
    for e in prof.key_averages():
        total = getattr(e, "self_device_time_total", None)
        if total is None:
            total = getattr(e, "self_cuda_time_total", 0)
        if total:
            times[e.key] = times.get(e.key, 0.0) + total / iterations
    return times


def kernel_table(report_path, gpu_us):
    """The report's kernels (engine, estimate) beside their GPU times: a kernel's
    stages are the GPU functions its report entry lists (gpu_functions; else those
    named KERNEL_s<i>). Kernels with the same body share their functions, whose
    GPU time the profiler sums over every launch: they make one row (their names
    joined, their estimates summed). What no stage claims (library kernels, Kiln's
    copies) is "other". A dict: kernels (list), sums."""
    with open(report_path) as f:
        report = json.load(f)
    groups, claimed = {}, set()
    for k in report.get("kernels", []):
        stages = tuple(k.get("gpu_functions") or
                       sorted(n for n in gpu_us if n.startswith(k["name"] + "_s")))
        claimed.update(stages)
        if "estimated_ns" not in k:
            continue
        group = groups.setdefault(stages or (k["name"],), {
            "names": [], "engine": k.get("engine", "-"), "estimated_us": 0.0,
            "stages": [n for n in stages if n in gpu_us]})
        group["names"].append(k["name"])
        group["estimated_us"] += k["estimated_ns"] / 1e3
    rows = [{"kernel": ",".join(g["names"]), "engine": g["engine"],
             "estimated_us": g["estimated_us"],
             "gpu_us": sum(gpu_us[n] for n in g["stages"]) if g["stages"] else None}
            for g in groups.values()]
    timed = [r for r in rows if r["gpu_us"] is not None]
    return {"kernels": rows,
            "estimated_us": sum(r["estimated_us"] for r in timed),
            "gpu_us": sum(r["gpu_us"] for r in timed),
            "other_gpu_us": sum(t for n, t in gpu_us.items() if n not in claimed)}


def run_kiln_variant(model_dir, xin, ref, iterations, tolerance=1e-4, profile=False):
    """Runs MODEL_DIR's libmodel.so once on the tensor XIN and compares its first output
    with REF (max error relative to the reference's scale, 1e-4); with a GPU, on
    PyTorch's CUDA tensors and stream (kiln_context_run_device), timed (p50 ms) when the
    result is right. A dict: status, detail, rel, ms."""
    import numpy as np
    import torch
    m, model, context, error = load_model(model_dir)
    if error:
        return {"status": "fail", "detail": error}
    gpu = xin.is_cuda
    outs = [torch.full(shape, float("nan"), device=xin.device).to(getattr(torch, dtype))
            for shape, dtype, _ in output_shapes(m, model)]  # poisoned: every element written?
    tin, tout = [tensors([(t.shape, str(t.dtype).replace("torch.", ""), t.data_ptr())
                          for t in ts]) for ts in ([xin], outs)]
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream) if gpu else None

    def run_kiln():
        rc = m.kiln_context_run_device(context, tin, 1, tout, len(outs), stream) if gpu \
            else m.kiln_context_run(context, tin, 1, tout, len(outs))
        if rc != 0:
            raise RuntimeError(m.kiln_context_error(context).decode())
    try:
        run_kiln()
        if gpu:
            torch.cuda.synchronize()
    except RuntimeError as e:
        return {"status": "fail", "detail": "run: " + str(e)[:200]}
    got = outs[0].cpu().numpy()
    row = {"rel": float(np.abs(got.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))}
    row["status"] = "pass" if row["rel"] <= tolerance and np.isfinite(got).all() else "fail"
    row["detail"] = "" if row["status"] == "pass" else f"max error {row['rel']:.2e} of scale"
    if gpu and row["status"] == "pass":
        row["ms"] = cuda_p50(run_kiln, iterations)
        if profile:
            row["kernel_us"] = profile_kernels(run_kiln, iterations)
        # Again after the timing runs: a race between streams shows as a moving result.
        run_kiln()
        torch.cuda.synchronize()
        again = outs[0].cpu().numpy()
        if not np.array_equal(got, again):
            row["status"], row["detail"] = "fail", "result changed between runs"
    return row


def measure_torch(base_net, xin, iterations, torch_compile):
    """PyTorch's times of the model from base_net() on XIN: eager and torch.compile
    (PyTorch >= 2), in f32 and f16 (weights and activations): CUDA events, p50 after
    warm-up. A dict: eager_ms, compiled_ms, eager16_ms, compiled16_ms."""
    import torch
    row = {}
    torch.manual_seed(0)
    net = base_net().eval().to(xin.device)
    with torch.no_grad():
        row["eager_ms"] = cuda_p50(lambda: net(xin), iterations)
        if torch_compile and hasattr(torch, "compile"):
            compiled = torch.compile(net)
            row["compiled_ms"] = cuda_p50(lambda: compiled(xin), iterations)
        half = net.half()
        xhalf = xin.half() if xin.is_floating_point() else xin
        row["eager16_ms"] = cuda_p50(lambda: half(xhalf), iterations)
        if torch_compile and hasattr(torch, "compile"):
            compiled16 = torch.compile(half)
            row["compiled16_ms"] = cuda_p50(lambda: compiled16(xhalf), iterations)
    return row


def measure_one(spec):
    """One measurement in this process (`measure` subcommand), from SPEC: kind "kiln"
    (run_kiln_variant of spec["dir"] under its label's tolerance) or "torch"
    (measure_torch of the zoo model), on spec["zoo"]/NAME.input.npy."""
    import numpy as np
    import torch
    base = os.path.join(spec["zoo"], spec["name"])
    x = np.load(base + ".input.npy")
    xin = torch.from_numpy(x).to("cuda" if torch.cuda.is_available() else "cpu")
    if spec["kind"] == "kiln":
        return run_kiln_variant(spec["dir"], xin, np.load(base + ".output.npy"),
                                spec["iterations"], TOLERANCE.get(spec["label"], 1e-4),
                                spec.get("profile", False))
    if not xin.is_cuda:
        return {}
    sys.path.insert(0, os.path.join(spec["out"], "models"))
    import export_zoo
    return measure_torch(lambda: export_zoo.build(spec["name"], 1)[0], xin,
                         spec["iterations"], spec["torch_compile"])


def measure_in_process(spec, timeout):
    """measure_one(SPEC) in a process of its own: a fault, a hang or a CUDA error that
    poisons the context loses this measurement only. Its dict, or a failure saying how
    the process ended."""
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "measure",
                            json.dumps(spec)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "fail", "detail": f"timed out after {timeout} s"}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        how = f"signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
        return {"status": "fail", "detail": f"process {how}: {r.stderr.strip()[-200:]}"}
    return json.loads(lines[-1])


def measure_isolated(args, zoo, name, variants):
    """Each Kiln variant (VARIANTS' (label, dir), the default plan first, label "") and
    PyTorch's timings, each in its own process (measure_in_process). A dict as
    measure's."""
    row = {}
    common = {"zoo": zoo, "name": name, "iterations": args.iterations, "out": args.out}
    for label, directory in variants:
        profile = label == PROFILED and name in args.profile
        v = measure_in_process(dict(common, kind="kiln", dir=directory, label=label,
                                    profile=profile), args.process_timeout)
        if profile and "kernel_us" in v:
            try:
                row["kernel_times"] = kernel_table(directory + ".json", v["kernel_us"])
            except (OSError, ValueError, KeyError) as e:
                row["kernel_times_detail"] = f"{type(e).__name__}: {e}"[:200]
        if not label:
            row.update({k: v[k] for k in ("status", "detail", "rel") if k in v})
            if "ms" in v:
                row["kiln_ms"] = v["ms"]
            continue
        row[label + "_status"] = v.get("status", "fail")
        for key in ("rel", "ms"):
            if key in v:
                row[f"{label}_{key}"] = v[key]
        if v.get("status") != "pass":
            row["status"] = "fail"
            row["detail"] = (row.get("detail", "") + f" {label}: {v.get('detail', '')}").strip()
    torch_row = measure_in_process(
        dict(common, kind="torch", torch_compile=name in args.torch_compile),
        args.process_timeout)
    if torch_row.get("status") == "fail":
        row["torch_detail"] = torch_row["detail"]
    else:
        row.update(torch_row)
    return row


# Each zoo model is compiled several ways: the default plan (several streams on cuda),
# one stream (the sequential plan, for the streams figures), the default plan captured
# once into a CUDA graph and replayed, and in fp16: contractions by the libraries
# wherever they can (fp16), by Kiln's own tensor-core kernels (fp16tc), and the
# default (--contractions auto: the cost model's choice per contraction) captured into
# a graph (fp16graph).
VARIANTS = [("1stream", ["--max-streams", "1"]), ("graph", ["--cuda-graph"]),
            ("fp16", ["--precision", "fp16", "--no-precision-check", "--contractions",
                      "library"]),
            ("fp16tc", ["--precision", "fp16", "--no-precision-check", "--contractions", "kiln"]),
            ("fp16graph", ["--precision", "fp16", "--no-precision-check", "--cuda-graph"])]
# The variant whose kernels are timed one by one (every contraction on Kiln's own
# kernels, so that each GPU kernel is a report kernel's stage), for --profile models.
PROFILED = "fp16tc"
# The error each variant may have relative to the f32 reference's scale.
TOLERANCE = {"fp16": 1e-2, "fp16tc": 1e-2, "fp16graph": 1e-2}


def compile_zoo_model(args, kiln, zoo, name, runtime, cxx):
    """One exported zoo model compiled (bundled kiln) and built, the default plan and each
    of VARIANTS: (row, [(label, dir)]), the row's status "fail" when one did not build."""
    onnx_path = os.path.join(zoo, name + ".onnx")
    out = os.path.join(zoo, name + ".cuda")
    row = {"model": name}

    def compile_variant(directory, extra, report=None):
        cmd = [kiln, "compile", onnx_path, "--target", "cuda", "--gpu-arch", args.gpu_arch,
               "-o", directory] + extra + (["--report", report] if report else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return "compile: " + r.stderr.strip()[:200]
        return build_model(directory, runtime, cxx)
    t0 = time.time()
    error = compile_variant(out, [], out + ".json")
    row["compile_s"] = time.time() - t0
    if error:
        return dict(row, status="fail", detail=error), []
    with open(out + ".json") as f:
        report = json.load(f)
    row["launches"], row["streams"], row["events"] = \
        report.get("launches"), report.get("streams"), report.get("events")
    variants = [("", out)]
    for label, extra in VARIANTS:
        directory = f"{out}.{label}"
        error = compile_variant(directory, extra,
                                directory + ".json" if label == PROFILED else None)
        if error:
            return dict(row, status="fail", detail=f"{label}: {error}"), []
        variants.append((label, directory))
    return row, variants


def run_zoo(args, runtime, cxx):
    """Exports every zoo model (device PyTorch, one at a time), compiles them all in
    parallel, then measures them one at a time (nothing else running)."""
    with tarfile.open(os.path.join(args.out, "kiln-bundle.tar.xz")) as tar:
        tar.extractall(args.out)
    kiln = os.path.join(args.out, "kiln", "kiln")
    zoo = os.path.join(args.out, "zoo")
    os.makedirs(zoo, exist_ok=True)
    sys.path.insert(0, os.path.join(args.out, "models"))
    import export_zoo
    exported, rows = [], {}
    for name in args.zoo:
        try:
            export_zoo.export(name, 1, False, zoo, 17, False)
            exported.append(name)
        except Exception as e:  # one model's trouble must not hide the others' numbers
            rows[name] = {"model": name, "status": "fail",
                          "detail": f"export: {type(e).__name__}: {e}"[:200]}
    with concurrent.futures.ThreadPoolExecutor(len(exported) or 1) as pool:
        built = dict(zip(exported, pool.map(
            lambda n: compile_zoo_model(args, kiln, zoo, n, runtime, cxx), exported)))
    for name in args.zoo:
        if name in built:
            row, variants = built[name]
            if row.get("status") != "fail":
                row.update(measure_isolated(args, zoo, name, variants))
            rows[name] = row
        print(json.dumps(rows[name]), flush=True)
    return [rows[n] for n in args.zoo]


def kernel_tables(rows):
    """Per profiled model: the sums, then the ten kernels that take the most GPU time,
    each beside the report's estimate."""
    table = []
    for r in rows:
        k = r.get("kernel_times")
        if not k:
            continue
        table += ["", f"{r['model']} ({PROFILED}): report kernels {k['gpu_us']:.1f} us on the "
                  f"GPU vs {k['estimated_us']:.1f} us estimated; other GPU kernels "
                  f"{k['other_gpu_us']:.1f} us",
                  "| kernel | engine | estimated us | GPU us | GPU / estimate |",
                  "|---|---|---|---|---|"]
        timed = sorted((x for x in k["kernels"] if x["gpu_us"]), key=lambda x: -x["gpu_us"])
        for x in timed[:10]:
            table.append(f"| {x['kernel']} | {x['engine']} | {x['estimated_us']:.1f} | "
                         f"{x['gpu_us']:.1f} | {x['gpu_us'] / max(x['estimated_us'], 1e-9):.2f} |")
    return table


def run(args):
    cxx = shutil.which(args.cxx) or args.cxx
    runtime = build_runtime(args.out, cxx)
    table = ["| check | result |", "|---|---|"]
    ok = True
    with open(os.path.join(args.out, "results.txt"), "w") as f:
        tests = [] if args.no_conformance else \
            sorted(glob.glob(os.path.join(args.out, "tests", "test_*")))
        if tests:
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(lambda t: run_test(t, runtime, cxx, args.dry_run),
                                        tests))
            passed = sum(1 for r in results if r[1] == "pass")
            for name, status, detail, secs in results:
                f.write(f"{name} {status} {secs * 1e3:.3f}ms {detail}\n")
                if status != "pass":
                    print(f"{status} {name}: {detail}")
            what = "ran (dry run: not compared)" if args.dry_run else "pass"
            table.append(f"| cuda conformance | {passed}/{len(results)} {what} |")
            ok &= passed == len(results)
        elif not args.no_conformance:
            table.append("| cuda conformance | no tests prepared |")
            ok = False
        if args.zoo and not args.dry_run and \
                os.path.exists(os.path.join(args.out, "kiln-bundle.tar.xz")):
            rows = run_zoo(args, runtime, cxx)
            for r in rows:
                f.write(json.dumps(r) + "\n")
                ok &= r["status"] == "pass"

            def ms(r, key):
                return f"{r[key]:.3f}" if key in r else "-"
            table += ["", "| model | status | launches | streams | max rel err | kiln ms | "
                      "1 stream ms | graph ms | eager ms | torch.compile ms | kiln / eager |"
                      " graph / compile |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            table16 = ["", "| model | kiln fp16 ms (libraries) | fp16 tensor cores ms | "
                       "fp16 graph ms | fp16 rel err | fp16 tc rel err | eager f16 ms | "
                       "torch.compile f16 ms | fp16 / fp32 (graph) |",
                       "|---|---|---|---|---|---|---|---|---|"]
            for r in rows:
                best = r.get("graph_ms", r.get("kiln_ms"))
                ratio_e = f"{r['kiln_ms'] / r['eager_ms']:.2f}" \
                    if "eager_ms" in r and "kiln_ms" in r else "-"
                ratio_c = f"{best / r['compiled_ms']:.2f}" \
                    if "compiled_ms" in r and best else "-"
                rel = f"{r['rel']:.1e}" if "rel" in r else r.get("detail", "")[:60]
                table.append(f"| {r['model']} | {r['status']} | {r.get('launches', '-')} | "
                             f"{r.get('streams', '-')} | {rel} | {ms(r, 'kiln_ms')} | "
                             f"{ms(r, '1stream_ms')} | {ms(r, 'graph_ms')} | "
                             f"{ms(r, 'eager_ms')} | {ms(r, 'compiled_ms')} | {ratio_e} | "
                             f"{ratio_c} |")
                r16 = f"{r['fp16graph_ms'] / r['graph_ms']:.2f}" \
                    if "fp16graph_ms" in r and "graph_ms" in r else "-"
                table16.append(f"| {r['model']} | {ms(r, 'fp16_ms')} | {ms(r, 'fp16tc_ms')} | "
                               f"{ms(r, 'fp16graph_ms')} | "
                               f"{r.get('fp16_rel', float('nan')):.1e} | "
                               f"{r.get('fp16tc_rel', float('nan')):.1e} | {ms(r, 'eager16_ms')} | "
                               f"{ms(r, 'compiled16_ms')} | {r16} |")
            table += table16
            table += kernel_tables(rows)
    print("\n".join(table))
    return 0 if ok else 1


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
    p.add_argument("--bundle", action="store_true",
                   help="also pack the self-contained kiln and the zoo exporter")
    p.add_argument("--build", help="kiln's build directory (default: two above --kiln)")
    p.add_argument("--no-conformance", action="store_true")
    p.add_argument("--filter", default="", help="regex: only the node tests it matches")
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--cxx", default="g++")
    r.add_argument("--jobs", type=int, default=8)
    r.add_argument("--gpu-arch", default="sm_90")
    r.add_argument("--no-conformance", action="store_true")
    r.add_argument("--zoo", nargs="*", default=["resnet50", "mobilenet_v2", "inception_v3",
                                                 "googlenet", "squeezenet1_1",
                                                 "transformer_encoder", "gpt2"],
                   help="zoo models to export, compile and time (needs the bundle; none: skip)")
    r.add_argument("--iterations", type=int, default=20)
    r.add_argument("--process-timeout", type=int, default=120,
                   help="seconds each measurement's own process may take")
    # torch.compile takes tens of seconds a model: by default only for the two models
    # the cuda issue names, so that the whole check fits one device call.
    r.add_argument("--profile", nargs="*", default=["resnet50", "transformer_encoder"],
                   help="zoo models whose fp16tc kernels are timed one by one against "
                        "the report's estimates")
    r.add_argument("--dry-run", action="store_true",
                   help="against the mock driver: every conformance test built, loaded and "
                        "run (the mock checks each launch), outputs not compared; no zoo")
    r.add_argument("--torch-compile", nargs="*", default=["resnet50", "transformer_encoder"],
                   help="zoo models to also time under torch.compile")
    m = sub.add_parser("measure", help="(internal) one measurement, in its own process")
    m.add_argument("spec", help="JSON: kind, zoo, name, dir, label, iterations, ...")
    args = ap.parse_args()
    if args.cmd == "measure":
        print(json.dumps(measure_one(json.loads(args.spec))))
        return 0
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
