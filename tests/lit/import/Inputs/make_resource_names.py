"""Writes a model whose large initializer has PyTorch's kind of name, onnx::Add_7."""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

weight = numpy_helper.from_array(np.arange(80, dtype=np.float32), "onnx::Add_7")
graph = helper.make_graph([helper.make_node("Add", ["X", "onnx::Add_7"], ["Y"])], "g",
                          [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [80])],
                          [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [80])],
                          [weight])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
