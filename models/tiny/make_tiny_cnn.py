#!/usr/bin/python3
"""Writes models/tiny/tiny_cnn.onnx, the small model bundled for the demo and tests.

Conv(1->4, 3x3) -> Relu -> MaxPool(2) -> Flatten -> Gemm(64->10) -> Softmax on a
1x1x10x10 input, opset 17, weights from numpy's seeded generator. Needs only
Debian's python3-onnx and python3-numpy.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "conv.weight")
b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv.bias")
fw = numpy_helper.from_array((rng.standard_normal((10, 64)) * 0.1).astype(np.float32), "fc.weight")
fb = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "fc.bias")
nodes = [
    helper.make_node("Conv", ["input", "conv.weight", "conv.bias"], ["c"], name="conv",
                     kernel_shape=[3, 3], pads=[0, 0, 0, 0]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
]
graph = helper.make_graph(
    nodes, "tiny_cnn",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 10, 10])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
    initializer=[w, b, fw, fb])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="kiln-models")
model.ir_version = 8
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_cnn.onnx")
with open(out, "wb") as f:
    f.write(model.SerializeToString())
print(out)
