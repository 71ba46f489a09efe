"""The tests' one ctypes binding of a compiled model's C ABI (model_abi.h), for the
tests that call it as a foreign-language caller would (everything else loads models
with the runtime's loader: `kiln run`, the kiln Python package).

    lib = kiln_abi.load(artifact_dir)      # libmodel.so, every function typed
    t, data, dims = kiln_abi.tensor([2, 3], [0.5] * 6)  # keep data and dims alive
"""
import ctypes

vp, cp, i32 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


TP = ctypes.POINTER(Tensor)
SIGNATURES = [
    ("kiln_abi_version", i32, []),
    ("kiln_model_create", vp, [cp]), ("kiln_model_destroy", None, [vp]),
    ("kiln_model_status", i32, [vp]), ("kiln_model_error", cp, [vp]),
    ("kiln_model_num_inputs", i32, [vp]), ("kiln_model_num_outputs", i32, [vp]),
    ("kiln_model_input_info", i32, [vp, i32, ctypes.POINTER(TensorInfo)]),
    ("kiln_model_output_info", i32, [vp, i32, ctypes.POINTER(TensorInfo)]),
    ("kiln_model_input_index", i32, [vp, cp]), ("kiln_model_output_index", i32, [vp, cp]),
    ("kiln_context_create", vp, [vp]), ("kiln_context_destroy", None, [vp]),
    ("kiln_context_status", i32, [vp]), ("kiln_context_error", cp, [vp]),
    ("kiln_context_set_input", i32, [vp, cp, TP]), ("kiln_context_set_output", i32, [vp, cp, TP]),
    ("kiln_context_execute", i32, [vp]),
    ("kiln_context_run", i32, [vp, TP, i32, TP, i32]),
    ("kiln_context_run_device", i32, [vp, TP, i32, TP, i32, vp]),
]


def load(artifact_dir):
    """ARTIFACT_DIR/libmodel.so with every C ABI function's types declared."""
    lib = ctypes.CDLL(artifact_dir + "/libmodel.so")
    for name, res, args in SIGNATURES:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def tensor(shape, values):
    """An f32 kiln_tensor over VALUES, and the buffers it points into (keep them)."""
    data = (ctypes.c_float * len(values))(*values)
    dims = (ctypes.c_int64 * len(shape))(*shape)
    return Tensor(1, len(shape), dims, ctypes.cast(data, ctypes.c_void_p)), data, dims
