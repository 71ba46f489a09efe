"""Writes a model Y = X + W whose initializer W (4 floats) lives in external data.

usage: make_external.py OUTDIR MODE
  inside     weights.bin beside the model (valid)
  traversal  location '../weights.bin' (outside the model's folder)
  absolute   an absolute location
  short      weights.bin holds 3 of the 4 floats
Uses only protobuf messages of Debian's python3-onnx (no onnx.external_data_helper,
so the file is written exactly as stated).
"""
import os
import struct
import sys

from onnx import TensorProto, helper

out, mode = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
data = struct.pack("<4f", 1, 2, 3, 4)
location = "weights.bin"
data_dir = out
if mode == "short":
    data = data[:12]
elif mode == "traversal":
    location = "../weights.bin"
    data_dir = os.path.dirname(os.path.abspath(out))
elif mode == "absolute":
    location = os.path.join(os.path.abspath(out), "weights.bin")
with open(os.path.join(data_dir, "weights.bin"), "wb") as f:
    f.write(data)

w = TensorProto()
w.name = "W"
w.data_type = TensorProto.FLOAT
w.dims.append(4)
w.data_location = TensorProto.EXTERNAL
entry = w.external_data.add()
entry.key, entry.value = "location", location
node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
graph = helper.make_graph(
    [node], "g",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])],
    initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open(os.path.join(out, "model.onnx"), "wb") as f:
    f.write(model.SerializeToString())
