"""CenterCropPad, AffineGrid and BitCast with outputs of unknown dims.

  python3 crop_grid_models.py OUT.onnx

The graph's outputs declare only their rank (symbolic dims), as exporters
often leave them: Kiln's own shape rules must find the sizes from the
constant `shape` and `size` operands.

  x [1, 3, 10, 7] -> CenterCropPad(shape [6, 9], axes [2, 3]) -> crop
  theta [2, 2, 3] -> AffineGrid(size [2, 1, 5, 6])             -> grid
  x               -> BitCast(to int32) -> Cast(float)           -> bits
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def out(name, rank, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(
        name, elem, ["%s_%d" % (name, i) for i in range(rank)])


nodes = [
    helper.make_node("CenterCropPad", ["x", "crop_shape"], ["crop"],
                     axes=[2, 3]),
    helper.make_node("AffineGrid", ["theta", "grid_size"], ["grid"],
                     align_corners=0),
    helper.make_node("BitCast", ["x"], ["x_bits"], to=TensorProto.INT32),
    # Bit patterns of floats are large integers: scaled to stay exact in
    # float32 through the comparison.
    helper.make_node("Cast", ["x_bits"], ["x_bits_f"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["x_bits_f", "tiny"], ["bits"]),
]
inits = [
    numpy_helper.from_array(np.array([6, 9], np.int64), "crop_shape"),
    numpy_helper.from_array(np.array([2, 1, 5, 6], np.int64), "grid_size"),
    numpy_helper.from_array(np.array(2.0 ** -24, np.float32), "tiny"),
]
graph = helper.make_graph(
    nodes, "crop_grid",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 7]),
     helper.make_tensor_value_info("theta", TensorProto.FLOAT, [2, 2, 3])],
    [out("crop", 4), out("grid", 4), out("bits", 4)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
model.ir_version = 11
onnx.save(model, sys.argv[1])
