#!/usr/bin/env python3
"""Writes models whose samples are not independent along dim 0 (the batch),
which a batch range must refuse: OUTDIR/softmax0.onnx (Softmax over axis
0), OUTDIR/reduce0.onnx (ReduceMean over axis 0), OUTDIR/transpose.onnx
(a Transpose that moves the batch)."""
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
cases = [
    ("softmax0", helper.make_node("Softmax", ["x"], ["y"], axis=0), ["N", 4]),
    ("reduce0", helper.make_node("ReduceMean", ["x"], ["y"], axes=[0], keepdims=1), [1, 4]),
    ("transpose", helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0]), [4, "N"]),
]
for name, node, shape in cases:
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, "%s/%s.onnx" % (out, name))
