#!/usr/bin/env python3
"""Writes a CNN of small output planes (7x7 and 4x4) for the channels-last
GEMMs of kiln-conv-to-gemm: a 1x1 stride-1 convolution with a bias and a
Relu (the input transposed, the bias broadcast rebuilt, the Relu applied
in registers through the transpose back), a 3x3 convolution without a bias
feeding a residual Add, a strided 3x3 convolution with a Clip, and a 3x3
convolution with 24 output channels (not whole register tiles: it stays an
NCHW GEMM).

  small_plane_convs.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def w(name, shape):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32),
            name))
        return name

    def conv(name, x, wname, cout, cin, k, stride=1, bias=False):
        ins = [x, w(wname, [cout, cin, k, k])]
        if bias:
            ins.append(w(wname + "_b", [cout]))
        nodes.append(helper.make_node("Conv", ins, [name], name=name,
                                      kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4))
        return name

    a = conv("pw", "input", "w_pw", 32, 16, 1, bias=True)
    nodes.append(helper.make_node("Relu", [a], ["pw_relu"], name="pw_relu"))
    b = conv("c3", "pw_relu", "w_c3", 32, 32, 3)
    nodes.append(helper.make_node("Add", [b, "pw_relu"], ["res"], name="res"))
    c = conv("c3s2", "res", "w_c3s2", 48, 32, 3, stride=2, bias=True)
    lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
    hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
    inits += [lo, hi]
    nodes.append(helper.make_node("Clip", [c, "lo", "hi"], ["clip"], name="clip"))
    conv("odd", "clip", "w_odd", 24, 48, 3, bias=True)
    graph = helper.make_graph(
        nodes, "small_plane_convs",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 16, 7, 7])],
        [helper.make_tensor_value_info("odd", TensorProto.FLOAT, ["N", 24, 4, 4]),
         helper.make_tensor_value_info("res", TensorProto.FLOAT, ["N", 32, 7, 7])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
