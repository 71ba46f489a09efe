"""Writes contractions.onnx: every contraction shape the host's library calls take
(kiln-select-library-calls) and one they do not, with random weights.

  conv 3x3 pad 1 + bias + Relu; depthwise conv stride 2 + bias + Clip(0, 6);
  1x1 conv + bias + residual Add + Relu; 1x1 conv without bias + Sigmoid (not a
  library epilogue); Gemm transB + bias; MatMul + bias + GELU (erf form); batched
  MatMul of a reshape and its transpose, scaled by 0.125; MatMul + bias + GELU
  (tanh form).

usage: make_contractions.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


inits = [weight("W1", 16, 8, 3, 3), weight("B1", 16), weight("W2", 16, 1, 3, 3),
         weight("B2", 16), weight("W3", 16, 16, 1, 1), weight("B3", 16),
         weight("W4", 16, 16, 1, 1), weight("Wg", 10, 400), weight("Bg", 10),
         weight("Wm", 10, 32), weight("Bm", 32), const("lo", 0.0), const("hi", 6.0),
         const("half", 0.5), const("one", 1.0), const("rsqrt2", 0.7071067811865476),
         const("scale", 0.125), const("shape", [2, 4, 4], np.int64),
         weight("Wt", 32, 8), weight("Bt", 8), const("c0", 0.044715),
         const("c1", 0.7978845608028654)]
nodes = [
    helper.make_node("Conv", ["X", "W1", "B1"], ["C1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["C1"], ["R1"]),
    helper.make_node("Conv", ["R1", "W2", "B2"], ["C2"], pads=[1, 1, 1, 1], strides=[2, 2],
                     group=16),
    helper.make_node("Clip", ["C2", "lo", "hi"], ["R2"]),
    helper.make_node("Conv", ["R2", "W3", "B3"], ["C3"]),
    helper.make_node("Add", ["C3", "R2"], ["A3"]),
    helper.make_node("Relu", ["A3"], ["R3"]),
    helper.make_node("Conv", ["R3", "W4"], ["C4"]),
    helper.make_node("Sigmoid", ["C4"], ["S"]),
    helper.make_node("Flatten", ["S"], ["F"]),
    helper.make_node("Gemm", ["F", "Wg", "Bg"], ["G"], transB=1),
    helper.make_node("MatMul", ["G", "Wm"], ["M"]),
    helper.make_node("Add", ["M", "Bm"], ["H"]),
    helper.make_node("Mul", ["H", "rsqrt2"], ["E0"]),
    helper.make_node("Erf", ["E0"], ["E1"]),
    helper.make_node("Add", ["E1", "one"], ["E2"]),
    helper.make_node("Mul", ["H", "half"], ["E3"]),
    helper.make_node("Mul", ["E3", "E2"], ["Y"]),
    helper.make_node("Reshape", ["Y", "shape"], ["Yr"]),
    helper.make_node("Transpose", ["Yr"], ["Yt"], perm=[0, 2, 1]),
    helper.make_node("MatMul", ["Yr", "Yt"], ["P"]),
    helper.make_node("Mul", ["P", "scale"], ["Z"]),
    # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    helper.make_node("MatMul", ["Y", "Wt"], ["TM"]),
    helper.make_node("Add", ["TM", "Bt"], ["T0"]),
    helper.make_node("Mul", ["T0", "T0"], ["T1"]),
    helper.make_node("Mul", ["T1", "T0"], ["T2"]),
    helper.make_node("Mul", ["T2", "c0"], ["T3"]),
    helper.make_node("Add", ["T0", "T3"], ["T4"]),
    helper.make_node("Mul", ["T4", "c1"], ["T5"]),
    helper.make_node("Tanh", ["T5"], ["T6"]),
    helper.make_node("Add", ["T6", "one"], ["T7"]),
    helper.make_node("Mul", ["T0", "half"], ["T8"]),
    helper.make_node("Mul", ["T8", "T7"], ["T"]),
]
graph = helper.make_graph(
    nodes, "contractions", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 8, 10, 10])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 32]),
     helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2, 4, 4]),
     helper.make_tensor_value_info("T", TensorProto.FLOAT, [1, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
