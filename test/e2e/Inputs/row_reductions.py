"""Reductions over contiguous rows (kiln-cpu-row-reductions): rows with a
masked tail (197 = 12 x 16 + 5, 100, 33) and whole vectors (64), float
and integer, with numpy's float64 results as the reference.

Usage: row_reductions.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((2, 3, 197)).astype(np.float32) * 4
y = rng.standard_normal((4, 100)).astype(np.float32) + 3
z = rng.standard_normal((6, 33)).astype(np.float32)
w = rng.integers(-1000, 1000, (5, 64)).astype(np.int32)
scale = rng.standard_normal(100).astype(np.float32)
bias = rng.standard_normal(100).astype(np.float32)

nodes = [
    helper.make_node("Softmax", ["x"], ["softmax"], axis=-1),
    helper.make_node("LayerNormalization", ["y", "scale", "bias"], ["layer_norm"],
                     axis=-1, epsilon=1e-5),
    helper.make_node("ReduceMax", ["z", "axes"], ["max"], keepdims=0),
    helper.make_node("ReduceMean", ["x", "axes"], ["mean"], keepdims=0),
    helper.make_node("ReduceSum", ["w", "axes"], ["int_sum"], keepdims=0),
]
graph = helper.make_graph(
    nodes, "row_reductions",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, z.shape),
     helper.make_tensor_value_info("w", TensorProto.INT32, w.shape)],
    [helper.make_tensor_value_info("softmax", TensorProto.FLOAT, x.shape),
     helper.make_tensor_value_info("layer_norm", TensorProto.FLOAT, y.shape),
     helper.make_tensor_value_info("max", TensorProto.FLOAT, [6]),
     helper.make_tensor_value_info("mean", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("int_sum", TensorProto.INT32, [5])],
    [helper.make_tensor("scale", TensorProto.FLOAT, [100], scale),
     helper.make_tensor("bias", TensorProto.FLOAT, [100], bias),
     helper.make_tensor("axes", TensorProto.INT64, [1], [-1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "m.onnx"))

x64 = x.astype(np.float64)
e = np.exp(x64 - x64.max(-1, keepdims=True))
y64 = y.astype(np.float64)
mu = y64.mean(-1, keepdims=True)
var = ((y64 - mu) ** 2).mean(-1, keepdims=True)
expected = {
    "softmax": e / e.sum(-1, keepdims=True),
    "layer_norm": (y64 - mu) / np.sqrt(var + 1e-5) * scale + bias,
    "max": z.max(-1),
    "mean": x64.mean(-1),
    "int_sum": w.sum(-1, dtype=np.int64),
}
for name, v in {"x": x, "y": y, "z": z, "w": w}.items():
    np.save(os.path.join(out, name + ".npy"), v)
for name, v in expected.items():
    dtype = np.int32 if name == "int_sum" else np.float32
    np.save(os.path.join(out, name + ".npy"), v.astype(dtype))
