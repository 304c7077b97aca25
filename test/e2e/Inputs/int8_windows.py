#!/usr/bin/env python3
"""Writes a model of int8 convolutions (ConvInteger, int8 x constant int8
summed in int32) whose windows the CPU's int8 kernel packs in panels of 16
output positions (kiln-cpu-int8-gemm), its inputs and its exact outputs.
Each geometry puts the panels' runs along output rows somewhere else:

  stem    [2x3x40x40] x [8x3x7x7], stride 2, pads 3: a stem like
          ResNet's (K = 147, three rows of strided loads), two images (the
          last one's last panels load only their runs' bytes)
  wide    [1x8x20x20] x [24x8x3x3], pads 1: 20 positions a row (runs of
          16, 4 and 12)
  narrow  [1x16x7x7] x [32x16x3x3], pads 1: 7 a row (up to four runs a
          panel)
  dilated [1x8x12x12] x [16x8x3x3], dilations 2, pads 2
  s2_odd  [1x4x11x11] x [8x4x3x3], stride 2, no pads: a 5-wide output
          plane, K = 36
  rect    [1x6x9x30] x [8x6x2x5], strides (1, 3), pads (0, 2): a
          non-square window and unequal strides
  odd     [1x4x39x39] x [8x4x3x3]: 37 positions a row, 37 panel layouts
          (more than the kernel writes code for: the scalar copy)

  int8_windows.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy,
                            output_K.npy)
"""
import sys

import numpy as np
from onnx import helper

import convolutions
from int8_contractions import write_model

CASES = [
    # name, x shape, w shape, strides, pads, dilations
    ("stem", [2, 3, 40, 40], [8, 3, 7, 7], [2, 2], [3, 3, 3, 3], [1, 1]),
    ("wide", [1, 8, 20, 20], [24, 8, 3, 3], [1, 1], [1, 1, 1, 1], [1, 1]),
    ("narrow", [1, 16, 7, 7], [32, 16, 3, 3], [1, 1], [1, 1, 1, 1], [1, 1]),
    ("dilated", [1, 8, 12, 12], [16, 8, 3, 3], [1, 1], [2, 2, 2, 2], [2, 2]),
    ("s2_odd", [1, 4, 11, 11], [8, 4, 3, 3], [2, 2], [0, 0, 0, 0], [1, 1]),
    ("rect", [1, 6, 9, 30], [8, 6, 2, 5], [1, 3], [0, 2, 0, 2], [1, 1]),
    ("odd", [1, 4, 39, 39], [8, 4, 3, 3], [1, 1], [0, 0, 0, 0], [1, 1]),
]


def main():
    rng = np.random.default_rng(0)
    inputs, weights, nodes, results = {}, {}, [], {}
    for name, xs, ws, strides, pads, dilations in CASES:
        x, w = (rng.integers(-128, 128, size=s).astype(np.int8)
                for s in (xs, ws))
        inputs["x_" + name] = x
        weights["w_" + name] = w
        nodes.append(helper.make_node(
            "ConvInteger", ["x_" + name, "w_" + name], [name], name=name,
            strides=strides, pads=pads, dilations=dilations))
        y = convolutions.conv(x.astype(np.float64), w.astype(np.float64),
                              strides=strides, pads=pads, dilations=dilations)
        results[name] = y.astype(np.int64)
    write_model(sys.argv[1], "int8_windows", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
