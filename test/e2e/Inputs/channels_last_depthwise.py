#!/usr/bin/env python3
"""Writes MobileNetV2-like inverted residual blocks on small planes, whose
pointwise convolutions kiln-conv-to-gemm computes channels-last, so that
kiln-cpu-depthwise-conv computes the depthwise convolutions between them
channels-last too. Input `a` [N, 32, 14, 14]:

  b1  expand 1x1 32->96, Clip(0, 6); depthwise 3x3 pads 1, bias, Clip;
      project 1x1 96->32; + a (the residual)
  b2  expand 1x1 32->144, Relu; depthwise 3x3 stride 2 SAME_UPPER (pads 0
      before, 1 after: 14 -> 7), bias, no activation; project 144->48
  b3  expand 1x1 48->96, Clip; depthwise 3x3 dilation 2 pads 2, no bias,
      Clip; project 96->48
  b4  1x1 48->40 (40 channels: not channels-last itself), depthwise 5x5
      pads 2 of 40 channels (whole 8-lane vectors, not 16-lane ones),
      bias, Relu; project 40->32 (channels-last): the depthwise
      convolution is channels-last only by its consumer, with one channel
      vector a block

  channels_last_depthwise.py OUT.onnx
"""
import sys

from conv_graph import ConvGraph


def main():
    g = ConvGraph(seed=3)

    def dw(name, x, c, k, **attrs):
        return g.conv(name, x, c, c, k, group=c, **attrs)

    def clip(x, out):
        return g.node("Clip", [x, g.scalar(out + "_lo", 0.0),
                               g.scalar(out + "_hi", 6.0)], out)

    x = clip(g.conv("e1", "a", 32, 96, 1), "e1_act")
    x = clip(dw("d1", x, 96, 3, pads=[1] * 4), "d1_act")
    x = g.conv("p1", x, 96, 32, 1)
    b1 = g.node("Add", [x, "a"], "b1")

    x = g.node("Relu", [g.conv("e2", b1, 32, 144, 1)], "e2_act")
    x = dw("d2", x, 144, 3, strides=[2, 2], auto_pad="SAME_UPPER")
    b2 = g.conv("p2", x, 144, 48, 1, out="b2")

    x = clip(g.conv("e3", b2, 48, 96, 1), "e3_act")
    x = clip(dw("d3", x, 96, 3, bias=False, dilations=[2, 2], pads=[2] * 4),
             "d3_act")
    b3 = g.conv("p3", x, 96, 48, 1, out="b3")

    x = g.conv("e4", b3, 48, 40, 1)
    x = g.node("Relu", [dw("d4", x, 40, 5, pads=[2] * 4)], "d4_act")
    g.conv("p4", x, 40, 32, 1, out="b4")

    g.save(sys.argv[1], "channels_last_depthwise",
           [("a", ["N", 32, 14, 14])],
           [("b1", ["N", 32, 14, 14]), ("b2", ["N", 48, 7, 7]),
            ("b3", ["N", 48, 7, 7]), ("b4", ["N", 32, 7, 7])])


if __name__ == "__main__":
    main()
