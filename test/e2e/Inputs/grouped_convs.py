#!/usr/bin/env python3
"""Writes a model of grouped convolutions in 1-D and 3-D (the generic
convolution with a group index in its input map), its inputs and its
exact outputs:

  grouped_1d    group 3 (4 input and 6 output channels each), stride 2,
                dilation 2, uneven pads, a bias, a batch of 2
  causal_dw_1d  depthwise, kernel 4 padded on the left only (a causal
                convolution, as Mamba's and CausalConvWithState's)
  grouped_3d    group 2, strides (1, 2, 1), uneven pads, a bias

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
    }
    weights = {
        "w_g1": grid([18, 4, 3]), "b_g1": grid([18]),
        "w_dw": grid([8, 1, 4]),
        "w_g3": grid([12, 4, 3, 2, 3]), "b_g3": grid([12]),
    }
    specs = [
        ("grouped_1d", ["x_g1", "w_g1", "b_g1"],
         dict(group=3, strides=[2], dilations=[2], pads=[1, 2])),
        ("causal_dw_1d", ["x_dw", "w_dw"], dict(group=8, pads=[3, 0])),
        ("grouped_3d", ["x_g3", "w_g3", "b_g3"],
         dict(group=2, strides=[1, 2, 1], pads=[1, 0, 1, 1, 0, 1])),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    nodes, results = [], {}
    for name, args, attrs in specs:
        nodes.append(helper.make_node("Conv", args, [name], name=name, **attrs))
        results[name] = (conv(*[f64[a] for a in args], **attrs), np.float32)
    exact_model.write(out, "grouped_convs", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
