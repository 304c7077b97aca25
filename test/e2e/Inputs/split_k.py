#!/usr/bin/env python3
"""Writes a model of contractions whose outputs have too few 64x64 tiles
for the GPU and whose reductions are long, so that kiln-gpu-split-k splits
them, with its inputs and its exact outputs:

  mm_bias_relu  MatMul [64x2048] x [2048x96] + bias, Relu: 2 tiles, K 2048
  bmm           MatMul [2x40x1536] x [2x1536x72]: a batch, both operands
                inputs
  conv_res      Conv 3x3 pad 1, 256 -> 128 channels on 7x7, + bias, + a
                residual input, Relu: 2 tiles, K 256 x 9
  conv_1x1      Conv 1x1 stride 2, 512 -> 64 channels on 8x8 (4x4 out)

Every value is a multiple of 1/16 in [-2, 2], so every product and partial
sum is exact in f32 and in tf32 (|sum| <= 2^13 in steps of 2^-8): however
the splits divide the sums, the outputs must equal numpy's exactly.

  split_k.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

import exact_model
from convolutions import conv


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def grid(shape):
        return exact_model.grid(rng, shape)

    inputs = {
        "x_mm": grid([64, 2048]),
        "x_bmm": grid([2, 40, 1536]),
        "y_bmm": grid([2, 1536, 72]),
        "x_conv": grid([1, 256, 7, 7]),
        "r_conv": grid([1, 128, 7, 7]),
        "x_1x1": grid([1, 512, 8, 8]),
    }
    weights = {
        "w_mm": grid([2048, 96]),
        "b_mm": grid([96]),
        "w_conv": grid([128, 256, 3, 3]),
        "b_conv": grid([128]),
        "w_1x1": grid([64, 512, 1, 1]),
    }
    nodes = [
        helper.make_node("MatMul", ["x_mm", "w_mm"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "b_mm"], ["mm_b"], name="mm_add"),
        helper.make_node("Relu", ["mm_b"], ["mm_bias_relu"], name="mm_relu"),
        helper.make_node("MatMul", ["x_bmm", "y_bmm"], ["bmm"], name="bmm"),
        helper.make_node("Conv", ["x_conv", "w_conv", "b_conv"], ["conv"],
                         name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Add", ["conv", "r_conv"], ["conv_r"], name="conv_add"),
        helper.make_node("Relu", ["conv_r"], ["conv_res"], name="conv_relu"),
        helper.make_node("Conv", ["x_1x1", "w_1x1"], ["conv_1x1"],
                         name="conv_1x1", strides=[2, 2], kernel_shape=[1, 1]),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    results = {
        "mm_bias_relu": (np.maximum(f64["x_mm"] @ f64["w_mm"] + f64["b_mm"], 0),
                         np.float32),
        "bmm": (f64["x_bmm"] @ f64["y_bmm"], np.float32),
        "conv_res": (np.maximum(conv(f64["x_conv"], f64["w_conv"], pads=[1, 1, 1, 1]) +
                                f64["b_conv"][None, :, None, None] + f64["r_conv"], 0),
                     np.float32),
        "conv_1x1": (conv(f64["x_1x1"], f64["w_1x1"], strides=[2, 2]), np.float32),
    }
    exact_model.write(out, "split_k", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
