"""Resize with antialias=1: the filter stretched by 1 / scale when
downscaling.

  python3 resize_antialias.py OUT.onnx

  x [1, 2, 37, 29] -> linear, scales [1, 1, 0.3, 0.45]         -> linear
                   -> cubic, sizes [9, 11] on axes [2, 3],
                      exclude_outside                         -> cubic
                   -> cubic A = -0.5, scales 0.25 and 0.2,
                      pytorch_half_pixel (16 and 20 taps)      -> wide
                   -> linear, scales [1, 1, 1.7, 0.5]
                      (one axis up, one down)                  -> mixed
                   -> cubic, scales [1, 1, 0.5, 0.75],
                      half_pixel_symmetric                     -> symmetric
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype), name)


nodes = [
    helper.make_node("Resize", ["x", "", "s_linear"], ["linear"],
                     mode="linear", antialias=1),
    helper.make_node("Resize", ["x", "", "", "sz_cubic"], ["cubic"],
                     mode="cubic", antialias=1, axes=[2, 3],
                     exclude_outside=1),
    helper.make_node("Resize", ["x", "", "s_wide"], ["wide"], mode="cubic",
                     antialias=1, cubic_coeff_a=-0.5,
                     coordinate_transformation_mode="pytorch_half_pixel"),
    helper.make_node("Resize", ["x", "", "s_mixed"], ["mixed"],
                     mode="linear", antialias=1),
    helper.make_node("Resize", ["x", "", "s_sym"], ["symmetric"],
                     mode="cubic", antialias=1,
                     coordinate_transformation_mode="half_pixel_symmetric"),
]
inits = [
    const("s_linear", [1, 1, 0.3, 0.45], np.float32),
    const("sz_cubic", [9, 11], np.int64),
    const("s_wide", [1, 1, 0.25, 0.2], np.float32),
    const("s_mixed", [1, 1, 1.7, 0.5], np.float32),
    const("s_sym", [1, 1, 0.5, 0.75], np.float32),
]
F = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "resize_antialias",
    [helper.make_tensor_value_info("x", F, [1, 2, 37, 29])],
    [helper.make_tensor_value_info("linear", F, [1, 2, 11, 13]),
     helper.make_tensor_value_info("cubic", F, [1, 2, 9, 11]),
     helper.make_tensor_value_info("wide", F, [1, 2, 9, 5]),
     helper.make_tensor_value_info("mixed", F, [1, 2, 62, 14]),
     helper.make_tensor_value_info("symmetric", F, [1, 2, 18, 21])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
model.ir_version = 9
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1])
