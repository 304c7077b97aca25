#!/usr/bin/env python3
"""Writes convolutions whose output planes a register tile width divides,
so that kiln-conv-to-gemm packs their im2col panels, each an output of its
own, over input `x` [N, 16, 32, 32] and `img` [N, 3, 64, 64]:

  s1    3x3, stride 1, pads 1, bias, Relu (32x32 out)
  s2    3x3, stride 2, pads 1, no bias (16x16 out)
  dil   3x3, dilation 2, pads 2, bias (32x32 out)
  stem  7x7, stride 2, pads 3, bias, Relu, on `img` (ResNet's first layer)
  pw    1x1, stride 1 (plain vector reads of the plane), bias

  packed_convs.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, bias=True, relu=False, **attrs):
        shape = [cout, cin, k, k]
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(cin * k * k)).astype(np.float32), name + "_w"))
        ins = [x, name + "_w"]
        if bias:
            inits.append(numpy_helper.from_array(
                rng.standard_normal([cout]).astype(np.float32), name + "_b"))
            ins.append(name + "_b")
        out = name + "_conv" if relu else name
        nodes.append(helper.make_node("Conv", ins, [out], name=name, kernel_shape=[k, k],
                                      **attrs))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [name], name=name + "_relu"))

    conv("s1", "x", 16, 32, 3, relu=True, pads=[1] * 4)
    conv("s2", "x", 16, 16, 3, bias=False, strides=[2, 2], pads=[1] * 4)
    conv("dil", "x", 16, 16, 3, dilations=[2, 2], pads=[2] * 4)
    conv("stem", "img", 3, 16, 7, relu=True, strides=[2, 2], pads=[3] * 4)
    conv("pw", "x", 16, 32, 1)
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "packed_convs",
        [helper.make_tensor_value_info("x", f, ["N", 16, 32, 32]),
         helper.make_tensor_value_info("img", f, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("s1", f, ["N", 32, 32, 32]),
         helper.make_tensor_value_info("s2", f, ["N", 16, 16, 16]),
         helper.make_tensor_value_info("dil", f, ["N", 16, 32, 32]),
         helper.make_tensor_value_info("stem", f, ["N", 16, 32, 32]),
         helper.make_tensor_value_info("pw", f, ["N", 32, 32, 32])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
