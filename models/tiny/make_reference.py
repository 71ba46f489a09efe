#!/usr/bin/python3
"""Writes models/tiny/tiny_cnn.{input,output}.npy: an input and PyTorch's output for
it, computed with torch.nn.functional from the model's own initializers (needs
python3-torch; the files are committed so that tests need only numpy)."""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
model = onnx.load(os.path.join(here, "tiny_cnn.onnx"))
w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
x = np.random.default_rng(11).standard_normal((1, 1, 10, 10)).astype(np.float32)
with torch.no_grad():
    y = F.conv2d(torch.from_numpy(x), w["conv.weight"], w["conv.bias"])
    y = F.max_pool2d(F.relu(y), 2, 2).flatten(1)
    y = F.softmax(F.linear(y, w["fc.weight"], w["fc.bias"]), dim=-1)
np.save(os.path.join(here, "tiny_cnn.input.npy"), x)
np.save(os.path.join(here, "tiny_cnn.output.npy"), y.numpy())
print("reference written")
