#!/usr/bin/env python3
"""Writes a model of 8-bit integer products shaped around the edges of
AMX's tiles (kiln-cpu-int8-gemm{amx} pads every operand with zeros to
whole 16-row, 64-byte tiles and slices the result back;
kiln-cpu-amx-tiles runs blocks of 2 x 2, 2 x 1, 1 x 2 and 1 x 1
accumulator tiles), its inputs and its exact outputs:

  mm_tail    [37x70] x constant [70x48]: rows padded to 48 (a pair of row
             tiles and a single), K to 128, 3 column tiles
  mm_batch   [3x50x256] x constant [256x96]: 150 rows padded to 160 (5
             pairs), K four steps of 64
  mm_rows16  [16x200] x constant [200x32]: one row tile, K padded to 256
  conv_tail  ConvInteger [1x20x9x9] x constant [40x20x3x3], pads 1: 40
             channels padded to 48, 81 positions to 96, K 180 to 192
  conv_1x1   ConvInteger [2x64x7x7] x constant [80x64x1x1]: two images, 80
             channels (2 pairs and a single), 49 positions padded to 64,
             K one step
  conv_u8    ConvInteger uint8 [1x8x6x6] x constant [16x8x3x3], pads 1

  amx_products.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import sys

import numpy as np
from onnx import helper

from int8_contractions import conv2d, write_model


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)

    def i8(shape):
        return rng.integers(-128, 128, size=shape).astype(np.int8)

    inputs = {
        "x_tail": i8([37, 70]),
        "x_batch": i8([3, 50, 256]),
        "x_rows16": i8([16, 200]),
        "x_conv": i8([1, 20, 9, 9]),
        "x_1x1": i8([2, 64, 7, 7]),
        "x_u8": rng.integers(0, 256, size=[1, 8, 6, 6]).astype(np.uint8),
    }
    weights = {
        "w_tail": i8([70, 48]),
        "w_batch": i8([256, 96]),
        "w_rows16": i8([200, 32]),
        "w_conv": i8([40, 20, 3, 3]),
        "w_1x1": i8([80, 64, 1, 1]),
        "w_u8": i8([16, 8, 3, 3]),
    }
    mm = lambda x, w, y: helper.make_node("MatMulInteger", [x, w], [y], name=y)
    nodes = [
        mm("x_tail", "w_tail", "mm_tail"),
        mm("x_batch", "w_batch", "mm_batch"),
        mm("x_rows16", "w_rows16", "mm_rows16"),
        helper.make_node("ConvInteger", ["x_conv", "w_conv"], ["conv_tail"],
                         name="conv_tail", pads=[1, 1, 1, 1]),
        helper.make_node("ConvInteger", ["x_1x1", "w_1x1"], ["conv_1x1"],
                         name="conv_1x1"),
        helper.make_node("ConvInteger", ["x_u8", "w_u8"], ["conv_u8"],
                         name="conv_u8", pads=[1, 1, 1, 1]),
    ]
    v = {k: a.astype(np.int64) for k, a in {**inputs, **weights}.items()}
    results = {
        "mm_tail": v["x_tail"] @ v["w_tail"],
        "mm_batch": v["x_batch"] @ v["w_batch"],
        "mm_rows16": v["x_rows16"] @ v["w_rows16"],
        "conv_tail": conv2d(v["x_conv"], v["w_conv"], 1, 1),
        "conv_1x1": conv2d(v["x_1x1"], v["w_1x1"], 1, 0),
        "conv_u8": conv2d(v["x_u8"], v["w_u8"], 1, 1),
    }
    write_model(out, "amx_products", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
