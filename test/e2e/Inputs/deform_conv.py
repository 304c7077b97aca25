"""DeformConv models.

  python3 deform_conv.py OUT.onnx

  x [2, 4, 7, 6], offset [2, 36, 4, 4], mask [2, 18, 4, 4]
    -> DeformConv(W [6, 2, 3, 3], bias, group 2, offset_group 2,
       strides [2, 1], dilations [1, 2], pads [1, 0, 1, 2])      -> y
  x, offset2 [2, 8, 6, 5]
    -> DeformConv(W2 [3, 4, 2, 2]), no mask, no bias            -> y2

The offsets are the seeded normal inputs of ort_reference.py: samples
land between pixels and past the input's edges.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
inits = [
    numpy_helper.from_array(rng.standard_normal((6, 2, 3, 3)).astype(np.float32), "w"),
    numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "b"),
    numpy_helper.from_array(rng.standard_normal((3, 4, 2, 2)).astype(np.float32), "w2"),
]
nodes = [
    helper.make_node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"],
                     group=2, offset_group=2, strides=[2, 1],
                     dilations=[1, 2], pads=[1, 0, 1, 2]),
    helper.make_node("DeformConv", ["x", "w2", "offset2"], ["y2"]),
]
F = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "deform_conv",
    [helper.make_tensor_value_info("x", F, [2, 4, 7, 6]),
     helper.make_tensor_value_info("offset", F, [2, 36, 4, 4]),
     helper.make_tensor_value_info("mask", F, [2, 18, 4, 4]),
     helper.make_tensor_value_info("offset2", F, [2, 8, 6, 5])],
    [helper.make_tensor_value_info("y", F, [2, 6, 4, 4]),
     helper.make_tensor_value_info("y2", F, [2, 3, 6, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
model.ir_version = 9
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1])
