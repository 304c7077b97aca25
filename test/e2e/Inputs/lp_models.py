#!/usr/bin/env python3
"""Writes a model of the Lp ops on one input x [2, 3, 7, 6]:

  g2   GlobalLpPool, p = 2
  g3   GlobalLpPool, p = 3
  l1   LpPool, p = 1, kernel 3x2, strides 2, pads 1 (windows over the
       padding)
  n1   LpNormalization, p = 1, axis 1
  n2   LpNormalization, p = 2, axis -1 (the default)

  lp_models.py OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    nodes = [
        helper.make_node("GlobalLpPool", ["x"], ["g2"], p=2),
        helper.make_node("GlobalLpPool", ["x"], ["g3"], p=3),
        helper.make_node("LpPool", ["x"], ["l1"], p=1, kernel_shape=[3, 2],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("LpNormalization", ["x"], ["n1"], p=1, axis=1),
        helper.make_node("LpNormalization", ["x"], ["n2"]),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "lp", [helper.make_tensor_value_info("x", f, [2, 3, 7, 6])],
        [helper.make_tensor_value_info("g2", f, [2, 3, 1, 1]),
         helper.make_tensor_value_info("g3", f, [2, 3, 1, 1]),
         helper.make_tensor_value_info("l1", f, [2, 3, 4, 4]),
         helper.make_tensor_value_info("n1", f, [2, 3, 7, 6]),
         helper.make_tensor_value_info("n2", f, [2, 3, 7, 6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
