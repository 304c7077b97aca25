"""Writes a model whose input and output declare dim 0 as -1 (an unknown
dim, as some exporters write a dynamic batch) and a Loop body whose value
infos do the same."""
import sys

import onnx
from onnx import TensorProto, helper

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 4])
relu = helper.make_node("Relu", ["x"], ["r"])
scale = helper.make_node("Mul", ["r", "two"], ["y"])
two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
graph = helper.make_graph([relu, scale], "negative_dims", [x], [y], [two],
                          value_info=[helper.make_tensor_value_info(
                              "r", TensorProto.FLOAT, [-1, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
