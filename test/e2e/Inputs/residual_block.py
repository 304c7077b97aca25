"""A ResNet bottleneck's end: 1x1 Conv (bias) + residual Add + Relu.

  python3 residual_block.py OUT_DIR

Writes OUT_DIR/m.onnx (x: 1x64x56x56, r: 1x256x56x56 -> y) with seeded
weights and inputs, and the inputs as input_0.npy and input_1.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
c, h, co = 64, 56, 256
w = (rng.standard_normal((co, c, 1, 1)) * 0.1).astype(np.float32)
b = rng.standard_normal(co).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["c"], kernel_shape=[1, 1]),
    helper.make_node("Add", ["c", "r"], ["s"]),
    helper.make_node("Relu", ["s"], ["y"]),
]
graph = helper.make_graph(
    nodes, "residual_block",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h]),
     helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, co, h, h])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, co, h, h])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "m.onnx"))
np.save(os.path.join(out, "input_0.npy"),
        rng.standard_normal((1, c, h, h)).astype(np.float32))
np.save(os.path.join(out, "input_1.npy"),
        rng.standard_normal((1, co, h, h)).astype(np.float32))
