#!/usr/bin/env python3
"""Writes a model of 2-D ConvTransposes (one group: a GEMM, then its taps
placed), its inputs and its exact outputs:

  up2x2       2x2 stride 2, a bias, a batch of 2: taps that do not overlap
              (the placement is a transpose)
  up4x4_pad1  4x4 stride 2, pads 1, no bias: overlapping taps, cropped
  up3x3_opad  3x3 stride 2, pads 1, output_padding 1, dilations 1, a bias:
              an output row no tap reaches
  dil2        3x3 stride 1, dilations 2, uneven pads, a bias

Values are multiples of 1/16 in [-2, 2] (exact_model.grid): every sum is
exact in f32, so the outputs must equal numpy's exactly.

  conv_transposes.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

import exact_model


def conv_transpose(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0),
                   dilations=(1, 1), output_padding=(0, 0)):
    """Reference 2-D ConvTranspose of one group in float64, ONNX semantics:
    scatter every input tap, then crop the pads."""
    n, c, ih, iw = x.shape
    f, kh, kw = w.shape[1:]
    full_h = (ih - 1) * strides[0] + (kh - 1) * dilations[0] + 1 + output_padding[0]
    full_w = (iw - 1) * strides[1] + (kw - 1) * dilations[1] + 1 + output_padding[1]
    y = np.zeros((n, f, full_h, full_w))
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("nchw,cf->nfhw", x, w[:, :, i, j])
            r0, c0 = i * dilations[0], j * dilations[1]
            y[:, :, r0:r0 + (ih - 1) * strides[0] + 1:strides[0],
              c0:c0 + (iw - 1) * strides[1] + 1:strides[1]] += contrib
    y = y[:, :, pads[0]:full_h - pads[2], pads[1]:full_w - pads[3]]
    if b is not None:
        y = y + b.reshape(1, f, 1, 1)
    return y


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    grid = exact_model.grids(11)
    inputs = {"x_up": grid(2, 6, 5, 7), "x_ov": grid(1, 4, 6, 6),
              "x_op": grid(1, 5, 4, 5), "x_dl": grid(1, 3, 6, 5)}
    weights = {"w_up": grid(6, 8, 2, 2), "b_up": grid(8),
               "w_ov": grid(4, 3, 4, 4),
               "w_op": grid(5, 6, 3, 3), "b_op": grid(6),
               "w_dl": grid(3, 4, 3, 3), "b_dl": grid(4)}
    specs = [
        ("up2x2", ["x_up", "w_up", "b_up"], dict(strides=[2, 2])),
        ("up4x4_pad1", ["x_ov", "w_ov"], dict(strides=[2, 2], pads=[1, 1, 1, 1])),
        ("up3x3_opad", ["x_op", "w_op", "b_op"],
         dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
        ("dil2", ["x_dl", "w_dl", "b_dl"], dict(dilations=[2, 2], pads=[1, 0, 2, 1])),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    nodes, results = [], {}
    for name, args, attrs in specs:
        nodes.append(helper.make_node("ConvTranspose", args, [name], name=name, **attrs))
        results[name] = (conv_transpose(*[f64[a] for a in args], **attrs), np.float32)
    exact_model.write(out, "conv_transposes", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
