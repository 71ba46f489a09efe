"""Writes a model with Ifs decided at run time (branches large enough to be
branched on the host, not both run and selected), and inputs that take each path
with their expected outputs (numpy): the condition is computed from the input
(mean(X) > 0); the then branch holds a MatMul with a weight, a nested If on its
own data (sum of the product > 0) and returns an outer value as its second result;
the else branch computes both results itself. One If result is a graph output,
the other feeds the graph's last op.

usage: make_branch.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
w = rng.normal(0, 0.2, (64, 64)).astype(np.float32)
F = TensorProto.FLOAT


def value(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


inner = helper.make_node(
    "If", ["inner_cond"], ["inner_out"],
    then_branch=helper.make_graph(
        [helper.make_node("Mul", ["T", "two"], ["m"])], "inner_then", [], [value("m", [64, 64])]),
    else_branch=helper.make_graph(
        [helper.make_node("Sub", ["T", "two"], ["s"])], "inner_else", [], [value("s", [64, 64])]))
then_graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["A"]),
     helper.make_node("Relu", ["A"], ["T"]),
     helper.make_node("ReduceSum", ["A"], ["sumA"], keepdims=0),
     helper.make_node("Greater", ["sumA", "zero"], ["inner_cond"]),
     inner],
    "then", [], [value("inner_out", [64, 64]), value("X", [64, 64])])
else_graph = helper.make_graph(
    [helper.make_node("Sigmoid", ["X"], ["E"]),
     helper.make_node("MatMul", ["E", "W"], ["EW"]),
     helper.make_node("Neg", ["E"], ["NE"])],
    "else", [], [value("EW", [64, 64]), value("NE", [64, 64])])
graph = helper.make_graph(
    [helper.make_node("ReduceMean", ["X"], ["mean"], keepdims=0),
     helper.make_node("Greater", ["mean", "zero"], ["cond"]),
     helper.make_node("If", ["cond"], ["R", "Z"], then_branch=then_graph,
                      else_branch=else_graph),
     helper.make_node("Add", ["R", "two"], ["Y"])],
    "branch", [value("X", [64, 64])], [value("Y", [64, 64]), value("Z", [64, 64])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.float32(0), "zero"),
     numpy_helper.from_array(np.float32(2), "two")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "branch.onnx"))


def reference(x):
    if x.mean() > 0:
        a = x @ w
        t = np.maximum(a, 0)
        r, z, path = (t * 2, x, "then/then") if a.sum() > 0 else (t - 2, x, "then/else")
    else:
        e = 1 / (1 + np.exp(-x))
        r, z, path = e @ w, -e, "else"
    return r + 2, z, path


# One input per path, drawn until each is found, with the conditions' values
# far from zero (so that rounding cannot flip them).
found = {}
for attempt in range(1000):
    x = rng.normal(rng.choice([-0.2, 0.2]), 1.0, (64, 64)).astype(np.float32)
    x64 = x.astype(np.float64)
    if abs(x64.mean()) < 0.1 or abs((x64 @ w).sum()) < 1:
        continue
    y, z, path = reference(x64)
    found.setdefault(path, (x, y, z))
    if len(found) == 3:
        break
for path, (x, y, z) in sorted(found.items()):
    case = os.path.join(out, path.replace("/", "-"))
    os.makedirs(case, exist_ok=True)
    np.save(os.path.join(case, "x.npy"), x)
    np.save(os.path.join(case, "y.npy"), y.astype(np.float32))
    np.save(os.path.join(case, "z.npy"), z.astype(np.float32))
    print("case", path)
