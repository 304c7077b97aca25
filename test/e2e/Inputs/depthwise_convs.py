#!/usr/bin/env python3
"""Writes depthwise convolutions for kiln-cpu-depthwise-conv, each an
output of its own, over three inputs: `a` [N, 16, 17, 40] (a row of three
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
  wide1    3x3, pads 1, bias, Clip(0, 6), on `c` [N, 8, 5, 150] (10 vectors
           of 16 lanes or 19 of 8: more than the 8 a chunk of the row
           takes, so the row is computed in chunks)
  wide2    5x5, stride 2, pads 2, bias, on `c` (output 3x75)

  depthwise_convs.py OUT.onnx
"""
import sys

from conv_graph import ConvGraph


def main():
    g = ConvGraph()

    def dw(name, x, c, k, **attrs):
        return g.conv(name, x, c, c, k, group=c, **attrs)

    x = dw("s1", "a", 16, 3, pads=[1] * 4)
    g.node("Clip", [x, g.scalar("lo", 0.0), g.scalar("hi", 6.0)], "s1")
    x = dw("s2", "a", 16, 3, strides=[2, 2], pads=[1] * 4)
    g.node("Relu", [x], "s2")
    x = dw("same", "a", 16, 5, bias=False, strides=[2, 2], auto_pad="SAME_UPPER")
    g.node("Identity", [x], "same")
    x = dw("dil", "a", 16, 3, dilations=[2, 2], pads=[2] * 4)
    g.node("Identity", [x], "dil")
    g.node("Add", [x, x], "twice")
    x = dw("nopad", "b", 32, 3)
    g.node("Clip", [x, g.scalar("lo1", -1.0), g.scalar("hi1", 1.0)], "nopad")
    x = dw("wide", "b", 32, 7, pads=[3] * 4)
    g.node("Identity", [x], "wide")
    x = dw("wide1", "c", 8, 3, pads=[1] * 4)
    g.node("Clip", [x, g.scalar("lo2", 0.0), g.scalar("hi2", 6.0)], "wide1")
    x = dw("wide2", "c", 8, 5, strides=[2, 2], pads=[2] * 4)
    g.node("Identity", [x], "wide2")
    g.save(sys.argv[1], "depthwise_convs",
           [("a", ["N", 16, 17, 40]), ("b", ["N", 32, 7, 7]),
            ("c", ["N", 8, 5, 150])],
           [("s1", ["N", 16, 17, 40]), ("s2", ["N", 16, 9, 20]),
            ("same", ["N", 16, 9, 20]), ("dil", ["N", 16, 17, 40]),
            ("twice", ["N", 16, 17, 40]), ("nopad", ["N", 32, 5, 5]),
            ("wide", ["N", 32, 7, 7]), ("wide1", ["N", 8, 5, 150]),
            ("wide2", ["N", 8, 3, 75])])


if __name__ == "__main__":
    main()
