#!/usr/bin/env python3
"""Writes a float32 model whose bf16 outputs (kiln-compile --precision=bf16)
are known exactly, for the AMX form of bf16 products (kiln-cpu-amx-bf16),
with its inputs and expected outputs:

  pad    MatMul(x [2x9x40], W [40x24]): 18 rows, K = 40 and N = 24, all
         padded to whole tiles (32 rows, K 64, N 32)
  long   MatMul(y [40x200], V [200x80]) + b: 40 rows (a pair of row tiles
         and a single one), K = 200 over 7 steps of 32, 5 column tiles (an
         odd count: single columns), then the bias Add in bf16
  gemm   Gemm(z [64x96], G [48x96], c [48], transB=1): a weight over
         (n, k), 64 rows (two blocks for two threads), accumulating onto
         the broadcast of c instead of from zero
  conv   Conv(img [2x5x9x11], K [20x5x3x3], kb [20], pads 1, strides 2):
         K = 45 padded to 64, 20 channels to 32, the 5x6 plane's 30
         positions to 32 (windows copied at stride 2, rows of 6 split
         across panels), onto the broadcast bias
  conv1  Conv(sq [1x24x7x7], L [16x24x1x1]): a 1x1 convolution with no
         bias, 49 positions in panels of 16 (rows of 7)

Every value is a multiple of 1/16 in [-2, 2] (exact in bf16) and every
float32 partial sum is exact (|sum| < 2^10 in steps of 2^-8), so a
product summed in f32 gives the exact sum, rounded once to bf16 where the
contraction's result is stored, whatever the order of the sums.

  amx_bf16.py OUTDIR  (writes m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

import exact_model
from convolutions import conv
from mixed_precision import to_bf16


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    grid = exact_model.grids(5)
    x, w = grid(2, 9, 40), grid(40, 24)
    y, v, b = grid(40, 200), grid(200, 80), grid(80)
    z, g, c = grid(64, 96), grid(48, 96), grid(48)
    img, kw, kb = grid(2, 5, 9, 11), grid(20, 5, 3, 3), grid(20)
    sq, lw = grid(1, 24, 7, 7), grid(16, 24, 1, 1)
    f64 = lambda a: a.astype(np.float64)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["pad"], name="pad"),
             helper.make_node("MatMul", ["y", "v"], ["yv"], name="long_matmul"),
             helper.make_node("Add", ["yv", "b"], ["long"], name="long_add"),
             helper.make_node("Gemm", ["z", "g", "c"], ["gemm"], transB=1, name="gemm"),
             helper.make_node("Conv", ["img", "kw", "kb"], ["conv"], pads=[1, 1, 1, 1],
                              strides=[2, 2], name="conv"),
             helper.make_node("Conv", ["sq", "lw"], ["conv1"], name="conv1")]
    results = {
        "pad": (f64(to_bf16(f64(x) @ f64(w))), np.float32),
        "long": (f64(to_bf16(to_bf16(f64(y) @ f64(v)) + b)), np.float32),
        "gemm": (f64(to_bf16(f64(z) @ f64(g).T + c)), np.float32),
        "conv": (f64(to_bf16(conv(f64(img), f64(kw), f64(kb), strides=[2, 2],
                                  pads=[1, 1, 1, 1]))), np.float32),
        "conv1": (f64(to_bf16(conv(f64(sq), f64(lw)))), np.float32),
    }
    exact_model.write(out, "amx_bf16", nodes, {"x": x, "y": y, "z": z, "img": img, "sq": sq},
                      {"w": w, "v": v, "b": b, "g": g, "c": c, "kw": kw, "kb": kb, "lw": lw},
                      results)


if __name__ == "__main__":
    main()
