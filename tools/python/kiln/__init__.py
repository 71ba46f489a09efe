"""Kiln from Python: compile an ONNX model ahead of time and run it from numpy.

    import kiln, numpy as np
    model = kiln.compile("model.onnx", input_shapes={"input": (1, 3, 224, 224)})
    print(model.inputs, model.outputs)          # names, dtypes, shapes
    y = model.run({"input": x})["output"]       # {name: ndarray} -> {name: ndarray}

model.run is thread-safe: concurrent calls run on contexts of their own with the GIL
released. A wrong name, dtype or shape raises kiln.Error with Kiln's message.
kiln.load(dir) loads a model compiled with `kiln compile --emit lib -o dir`.
"""
import os
import shutil
import subprocess
import tempfile

from ._kiln import Context, Error, Model, TensorInfo, abi_version, load  # noqa: F401

__all__ = ["compile", "load", "Model", "Context", "TensorInfo", "Error", "abi_version"]


def _kiln_executable():
    """$KILN, else the kiln this package was built with, else kiln on PATH."""
    if os.environ.get("KILN"):
        return os.environ["KILN"]
    try:
        from ._build import KILN
        if os.path.exists(KILN):
            return KILN
    except ImportError:
        pass
    found = shutil.which("kiln")
    if not found:
        raise Error("no kiln executable: set $KILN or put kiln on PATH")
    return found


def compile(path, target="host", input_shapes=None, precision="fp32", output_dir=None,
            max_streams=None, embed_weights=False, options=()):
    """Compiles the ONNX model at PATH for TARGET ("host", "cuda", "cuda-sim") into
    OUTPUT_DIR (default: a new temporary directory) with its library, and loads it.
    INPUT_SHAPES pins symbolic dimensions: {name: (d0, d1, ...)}. PRECISION: "fp32",
    "fp16" or "auto" (kiln compile --precision). OPTIONS: further
    `kiln compile` flags. Raises kiln.Error with the compiler's message."""
    if precision not in ("fp32", "fp16", "auto"):
        raise Error(f"precision {precision}: expected fp32, fp16 or auto")
    if output_dir is None:
        output_dir = tempfile.mkdtemp(prefix="kiln-model-")
    cmd = [_kiln_executable(), "compile", os.fspath(path), "-o", os.fspath(output_dir),
           "--target", target, "--precision", precision, "--emit", "lib", "--quiet"]
    for name, shape in (input_shapes or {}).items():
        cmd += ["--input-shape", f"{name}=" + "x".join(str(int(d)) for d in shape)]
    if max_streams is not None:
        cmd += ["--max-streams", str(int(max_streams))]
    if embed_weights:
        cmd.append("--embed-weights")
    cmd += list(options)
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise Error(result.stderr.strip() or f"kiln exited with status {result.returncode}")
    return load(os.fspath(output_dir))
