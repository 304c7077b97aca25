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

from conv_graph import ConvGraph


def main():
    g = ConvGraph()

    def conv(name, x, cin, cout, k, relu=False, **attrs):
        if relu:
            g.node("Relu", [g.conv(name, x, cin, cout, k, **attrs)], name)
        else:
            g.conv(name, x, cin, cout, k, out=name, **attrs)

    conv("s1", "x", 16, 32, 3, relu=True, pads=[1] * 4)
    conv("s2", "x", 16, 16, 3, bias=False, strides=[2, 2], pads=[1] * 4)
    conv("dil", "x", 16, 16, 3, dilations=[2, 2], pads=[2] * 4)
    conv("stem", "img", 3, 16, 7, relu=True, strides=[2, 2], pads=[3] * 4)
    conv("pw", "x", 16, 32, 1)
    g.save(sys.argv[1], "packed_convs",
           [("x", ["N", 16, 32, 32]), ("img", ["N", 3, 64, 64])],
           [("s1", ["N", 32, 32, 32]), ("s2", ["N", 16, 16, 16]),
            ("dil", ["N", 16, 32, 32]), ("stem", ["N", 16, 32, 32]),
            ("pw", ["N", 32, 32, 32])])


if __name__ == "__main__":
    main()
