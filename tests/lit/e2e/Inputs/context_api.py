"""The C ABI's model and contexts through ctypes, as a foreign-language caller uses
them: binding by name, status codes with a message per context, unbound tensors, a
model that failed to load, and several contexts of one model on threads at once.

usage: context_api.py ARTIFACT_DIR  (the mlp model of mlp.onnxtxt)
"""
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from kiln_abi import Tensor, load, tensor  # noqa: E402

lib = load(sys.argv[1])


def err(ctx):
    return (lib.kiln_context_error(ctx) or b"").decode()


print("abi", lib.kiln_abi_version())
model = lib.kiln_model_create((sys.argv[1] + "/model.weights").encode())
print("model", lib.kiln_model_status(model), lib.kiln_model_error(model))
print("index", lib.kiln_model_input_index(model, b"X"), lib.kiln_model_output_index(model, b"Y"),
      lib.kiln_model_input_index(model, b"nope"))
ctx = lib.kiln_context_create(model)
print("context", lib.kiln_context_status(ctx))
print("unbound", lib.kiln_context_execute(ctx), err(ctx))
x, xd, xs = tensor([2, 3], [0.5] * 6)
print("unknown", lib.kiln_context_set_input(ctx, b"nope", ctypes.byref(x)), err(ctx))
bad, bd, bs = tensor([3, 2], [0.5] * 6)
print("shape", lib.kiln_context_set_input(ctx, b"X", ctypes.byref(bad)), err(ctx))
y, yd, ys = tensor([2, 2], [9.0] * 4)
print("bind", lib.kiln_context_set_input(ctx, b"X", ctypes.byref(x)),
      lib.kiln_context_set_output(ctx, b"Y", ctypes.byref(y)))
print("execute", lib.kiln_context_execute(ctx), err(ctx) or "ok", list(yd))
# The runtime's promises: inputs are never written; a failed run leaves the outputs
# untouched; bad arguments are statuses, never a crash.
print("input kept", list(xd) == [0.5] * 6)
failing = lib.kiln_context_create(model)
yf, yfd, yfs = tensor([2, 2], [7.0] * 4)
lib.kiln_context_set_output(failing, b"Y", ctypes.byref(yf))
print("failed run", lib.kiln_context_execute(failing), list(yfd) == [7.0] * 4)
noshape = Tensor(1, 2, None, ctypes.cast(xd, ctypes.c_void_p))
nodata = Tensor(1, 2, xs, None)
print("null", lib.kiln_context_set_input(failing, None, ctypes.byref(x)),
      lib.kiln_context_set_input(failing, b"X", None),
      lib.kiln_context_set_input(failing, b"X", ctypes.byref(noshape)),
      lib.kiln_context_set_input(failing, b"X", ctypes.byref(nodata)),
      lib.kiln_context_execute(None), lib.kiln_context_status(None))
orphan = lib.kiln_context_create(None)
print("null model", lib.kiln_context_status(orphan))
lib.kiln_context_destroy(orphan)
lib.kiln_context_destroy(failing)

# Eight contexts of the one model on eight threads at once, 25 runs each.
results = []


def work(k):
    c = lib.kiln_context_create(model)
    xi, xid, xis = tensor([2, 3], [0.5] * 6)
    yi, yid, yis = tensor([2, 2], [0.0] * 4)
    lib.kiln_context_set_input(c, b"X", ctypes.byref(xi))
    lib.kiln_context_set_output(c, b"Y", ctypes.byref(yi))
    ok = all(lib.kiln_context_execute(c) == 0 and list(yid) == [0.25, 0.0, 0.25, 0.0]
             for _ in range(25))
    lib.kiln_context_destroy(c)
    results.append(ok)


threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", len(results), all(results))
lib.kiln_context_destroy(ctx)
lib.kiln_model_destroy(model)

broken = lib.kiln_model_create(b"/nonexistent/model.weights")
print("load", lib.kiln_model_status(broken), lib.kiln_model_error(broken).decode())
dead = lib.kiln_context_create(broken)
print("dead", lib.kiln_context_status(dead), lib.kiln_context_execute(dead), err(dead))
lib.kiln_context_destroy(dead)
lib.kiln_model_destroy(broken)
