"""Writes a model whose boolean initializer is stored as raw bytes (one per
element, as ONNX stores booleans), an input and the expected output."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
mask = np.array([[True, False, True, True], [False, False, True, False]])
init = numpy_helper.from_array(mask, "mask")
assert init.HasField("raw_data") and len(init.raw_data) == mask.size
node = helper.make_node("And", ["x", "mask"], ["y"])
graph = helper.make_graph(
    [node], "bool_weight",
    [helper.make_tensor_value_info("x", TensorProto.BOOL, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 4])], [init])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          out + "/m.onnx")
x = np.array([[True, True, False, True], [True, False, True, True]])
np.save(out + "/x.npy", x)
np.save(out + "/y.npy", x & mask)
