"""Writes a model Y = Relu(X) whose input X has the unknown dimensions real exports
write: dim_value -1 (dimension 0), an empty dim_param (dimension 1), and a fixed 3.

usage: make_unknown_dims.py OUT.onnx
"""
import sys

from onnx import TensorProto, helper

x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [-1, "", 3])
y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [-1, "", 3])
graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")], "g", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
