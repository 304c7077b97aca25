#!/usr/bin/env python3
"""Writes depthwise convolutions for kiln-cpu-depthwise-conv, each an
output of its own, over two inputs: `a` [N, 16, 17, 40] (a row of three
16-lane vectors, the last partial; 17 rows) and `b` [N, 32, 7, 7] (one
partial vector):

  s1       3x3, stride 1, pads 1, bias, Clip(0, 6) (MobileNet's block)
  s2       3x3, stride 2, pads 1, bias, Relu (output 9x20: lanes from
           three input vectors)
  same     5x5, stride 2, auto_pad SAME_UPPER (pads 1 before, 2 after),
           no bias
  dil      3x3, dilation 2, pads 2, bias; its result also feeds `twice`,
           so no epilogue is applied in registers
  nopad    3x3 without padding, on `b` (output 5x5), bias, Clip(-1, 1)
  wide     7x7 (ConvNeXt), pads 3, on `b`, bias
  twice    Add(dil, dil)

  depthwise_convs.py OUT.onnx
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

    def dw(name, x, c, k, bias=True, **attrs):
        ins = [x, w(name + "_w", [c, 1, k, k])]
        if bias:
            ins.append(w(name + "_b", [c]))
        nodes.append(helper.make_node("Conv", ins, [name + "_conv"], name=name,
                                      group=c, kernel_shape=[k, k], **attrs))
        return name + "_conv"

    def scalar(name, v):
        inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
        return name

    x = dw("s1", "a", 16, 3, pads=[1] * 4)
    nodes.append(helper.make_node("Clip", [x, scalar("lo", 0.0), scalar("hi", 6.0)],
                                  ["s1"], name="s1_clip"))
    x = dw("s2", "a", 16, 3, strides=[2, 2], pads=[1] * 4)
    nodes.append(helper.make_node("Relu", [x], ["s2"], name="s2_relu"))
    x = dw("same", "a", 16, 5, bias=False, strides=[2, 2], auto_pad="SAME_UPPER")
    nodes.append(helper.make_node("Identity", [x], ["same"], name="same_id"))
    x = dw("dil", "a", 16, 3, dilations=[2, 2], pads=[2] * 4)
    nodes.append(helper.make_node("Identity", [x], ["dil"], name="dil_id"))
    nodes.append(helper.make_node("Add", [x, x], ["twice"], name="twice"))
    x = dw("nopad", "b", 32, 3)
    nodes.append(helper.make_node("Clip", [x, scalar("lo1", -1.0), scalar("hi1", 1.0)],
                                  ["nopad"], name="nopad_clip"))
    x = dw("wide", "b", 32, 7, pads=[3] * 4)
    nodes.append(helper.make_node("Identity", [x], ["wide"], name="wide_id"))

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "depthwise_convs",
        [helper.make_tensor_value_info("a", f, ["N", 16, 17, 40]),
         helper.make_tensor_value_info("b", f, ["N", 32, 7, 7])],
        [helper.make_tensor_value_info("s1", f, ["N", 16, 17, 40]),
         helper.make_tensor_value_info("s2", f, ["N", 16, 9, 20]),
         helper.make_tensor_value_info("same", f, ["N", 16, 9, 20]),
         helper.make_tensor_value_info("dil", f, ["N", 16, 17, 40]),
         helper.make_tensor_value_info("twice", f, ["N", 16, 17, 40]),
         helper.make_tensor_value_info("nopad", f, ["N", 32, 5, 5]),
         helper.make_tensor_value_info("wide", f, ["N", 32, 7, 7])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
