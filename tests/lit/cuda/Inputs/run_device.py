"""kiln_context_run_device on the mock driver: device buffers from the driver run; a
caller pointer that is not 16-byte aligned is refused with a message naming it.

usage: run_device.py MOCK_DRIVER ARTIFACT_DIR  (KILN_CUDA_DRIVER must name the mock too)
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from kiln_abi import Tensor, load  # noqa: E402

mock = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
lib = load(sys.argv[2])
model = lib.kiln_model_create((sys.argv[2] + "/model.weights").encode())
assert not lib.kiln_model_error(model), lib.kiln_model_error(model)
context = lib.kiln_context_create(model)
assert not lib.kiln_context_error(context), lib.kiln_context_error(context)
x, y = ctypes.c_uint64(), ctypes.c_uint64()
assert mock.cuMemAlloc_v2(ctypes.byref(x), ctypes.c_size_t(64)) == 0
assert mock.cuMemAlloc_v2(ctypes.byref(y), ctypes.c_size_t(64)) == 0
xs, ys = (ctypes.c_int64 * 2)(2, 3), (ctypes.c_int64 * 2)(2, 2)
for name, offset in (("aligned", 0), ("misaligned", 4)):
    ins = (Tensor * 1)(Tensor(1, 2, xs, x.value + offset))
    outs = (Tensor * 1)(Tensor(1, 2, ys, y.value))
    rc = lib.kiln_context_run_device(context, ins, 1, outs, 1, None)
    print(f"{name}: rc {rc}: {(lib.kiln_context_error(context) or b'').decode()}")
