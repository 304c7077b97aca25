#!/usr/bin/env python3
"""Writes a model of grouped convolutions in 1-D and 3-D (the generic
convolution with a group index in its input map), its inputs and its
exact outputs:

  grouped_1d    group 3 (4 input and 6 output channels each), stride 2,
                dilation 2, uneven pads, a bias, a batch of 2
  causal_dw_1d  depthwise, kernel 4 padded on the left only (a causal
                convolution, as Mamba's and CausalConvWithState's)
  grouped_3d    group 2, strides (1, 2, 1), uneven pads, a bias
  grouped_2d_g2 group 2 (AlexNet's), 3x3 stride 2, pads, a bias, batch 2:
                one convolution per group on channel slices
  grouped_2d_g4 group 4, 3x3 dilation 2, uneven pads, no bias
  grouped_2d_g24 group 24 (past the per-group split: one batched GEMM over
                the groups on the CPU), 3x3, a bias
  conv_1d       ungrouped, kernel 5, stride 3, uneven pads, a bias, batch 2
                (1-D convolutions run as 2-D ones one row high)
  grouped_1d_g20 group 20 (past the split) in 1-D, kernel 6, pads 3 (as
                wav2vec2's positional convolution), a bias
  grouped_2d_g18 group 18, 3x3 stride 2 and dilation (1, 2), batch 2

Values are multiples of 1/16 in [-2, 2] (exact_model.grid): every sum is
exact in f32, so the outputs must equal numpy's exactly.

  grouped_convs.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
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
    rng = np.random.default_rng(3)

    def grid(shape):
        return exact_model.grid(rng, shape)

    inputs = {
        "x_g1": grid([2, 12, 20]),
        "x_dw": grid([1, 8, 16]),
        "x_g3": grid([1, 8, 5, 6, 7]),
        "x_2d": grid([2, 8, 9, 11]),
        "x_2d4": grid([1, 16, 10, 9]),
        "x_2d24": grid([1, 48, 6, 7]),
        "x_c1": grid([2, 6, 23]),
        "x_g20": grid([1, 40, 15]),
        "x_g18": grid([2, 36, 9, 12]),
    }
    weights = {
        "w_g1": grid([18, 4, 3]), "b_g1": grid([18]),
        "w_dw": grid([8, 1, 4]),
        "w_g3": grid([12, 4, 3, 2, 3]), "b_g3": grid([12]),
        "w_2d": grid([6, 4, 3, 3]), "b_2d": grid([6]),
        "w_2d4": grid([12, 4, 3, 3]),
        "w_2d24": grid([48, 2, 3, 3]), "b_2d24": grid([48]),
        "w_c1": grid([10, 6, 5]), "b_c1": grid([10]),
        "w_g20": grid([40, 2, 6]), "b_g20": grid([40]),
        "w_g18": grid([54, 2, 3, 3]),
    }
    specs = [
        ("grouped_1d", ["x_g1", "w_g1", "b_g1"],
         dict(group=3, strides=[2], dilations=[2], pads=[1, 2])),
        ("causal_dw_1d", ["x_dw", "w_dw"], dict(group=8, pads=[3, 0])),
        ("grouped_3d", ["x_g3", "w_g3", "b_g3"],
         dict(group=2, strides=[1, 2, 1], pads=[1, 0, 1, 1, 0, 1])),
        ("grouped_2d_g2", ["x_2d", "w_2d", "b_2d"],
         dict(group=2, strides=[2, 2], pads=[1, 1, 1, 1])),
        ("grouped_2d_g4", ["x_2d4", "w_2d4"],
         dict(group=4, dilations=[2, 2], pads=[2, 1, 0, 2])),
        ("grouped_2d_g24", ["x_2d24", "w_2d24", "b_2d24"],
         dict(group=24, pads=[1, 1, 1, 1])),
        ("conv_1d", ["x_c1", "w_c1", "b_c1"], dict(strides=[3], pads=[2, 1])),
        ("grouped_1d_g20", ["x_g20", "w_g20", "b_g20"],
         dict(group=20, pads=[3, 3])),
        ("grouped_2d_g18", ["x_g18", "w_g18"],
         dict(group=18, strides=[2, 2], dilations=[1, 2], pads=[1, 0, 0, 2])),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    nodes, results = [], {}
    for name, args, attrs in specs:
        nodes.append(helper.make_node("Conv", args, [name], name=name, **attrs))
        results[name] = (conv(*[f64[a] for a in args], **attrs), np.float32)
    exact_model.write(out, "grouped_convs", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
