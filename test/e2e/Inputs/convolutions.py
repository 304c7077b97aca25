#!/usr/bin/env python3
"""Writes a model of convolutions for the GPU's implicit-GEMM kernels
(kiln-gpu-contractions reading the convolution's input in place), its
inputs and its exact outputs:

  conv_pad      3x3, pads 1, a bias, a batch of 2: N = 2 x 12 x 12
  conv_strided  3x3, strides 2, dilations 2, uneven pads, 20 output
                channels (an M edge), no bias
  conv_grouped  3x3, group 2 (each group 24 output channels), a bias
  conv_1x1      1x1 on a 7x7 plane (N = 49, an N edge), a bias
  conv_1d       1-D, kernel 5, stride 3 (the generic convolution)
  conv_dw       depthwise (group = channels): one output channel per
                group, below the tiles' minimum, a loop kernel
  conv_chain    a 1x1 convolution, then a padded 3x3 convolution, then
                Relu: the padded convolution's source is an intermediate
                that dies at the padded copy, whose bytes the memory plan
                may give to the convolution's output

Every value is a multiple of 1/16 in [-2, 2], so every product and every
partial sum is exact in f32 and in tf32: the outputs must equal numpy's
exactly, in whatever order a kernel sums.

  convolutions.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

import exact_model


def conv(x, w, b=None, strides=None, pads=None, dilations=None, group=1):
    """Reference convolution in float64 (NC..., FC...), ONNX semantics."""
    sp = x.ndim - 2
    strides = strides or [1] * sp
    dilations = dilations or [1] * sp
    pads = pads or [0] * (2 * sp)
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + sp])
                                      for i in range(sp)])
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    kernel = w.shape[2:]
    outs = [(x.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1)
            // strides[i] + 1 for i in range(sp)]
    y = np.zeros([n, f] + outs)
    fg = f // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        for idx in np.ndindex(*kernel):
            window = tuple(
                slice(idx[i] * dilations[i],
                      idx[i] * dilations[i] + strides[i] * (outs[i] - 1) + 1,
                      strides[i]) for i in range(sp))
            patch = xs[(slice(None), slice(None)) + window]
            wk = w[(slice(g * fg, (g + 1) * fg), slice(None)) + idx]
            y[:, g * fg:(g + 1) * fg] += np.einsum("nc...,fc->nf...", patch,
                                                   wk)
    if b is not None:
        y += b.reshape([1, f] + [1] * sp)
    return y


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def grid(shape):
        return exact_model.grid(rng, shape)

    inputs = {
        "x_pad": grid([2, 16, 12, 12]),
        "x_strided": grid([1, 8, 15, 17]),
        "x_grouped": grid([1, 32, 10, 10]),
        "x_1x1": grid([1, 40, 7, 7]),
        "x_1d": grid([2, 16, 50]),
        "x_dw": grid([1, 24, 9, 9]),
        "x_chain": grid([1, 16, 8, 8]),
    }
    weights = {
        "w_pad": grid([32, 16, 3, 3]), "b_pad": grid([32]),
        "w_strided": grid([20, 8, 3, 3]),
        "w_grouped": grid([48, 16, 3, 3]), "b_grouped": grid([48]),
        "w_1x1": grid([64, 40, 1, 1]), "b_1x1": grid([64]),
        "w_1d": grid([24, 16, 5]),
        "w_dw": grid([24, 1, 3, 3]),
        "w_chain_in": (rng.integers(-1, 2, size=[16, 16, 1, 1]) / 4).astype(
            np.float32),
        "w_chain": grid([16, 16, 3, 3]),
    }
    specs = [
        ("conv_pad", ["x_pad", "w_pad", "b_pad"], dict(pads=[1, 1, 1, 1])),
        ("conv_strided", ["x_strided", "w_strided"],
         dict(strides=[2, 2], dilations=[2, 2], pads=[1, 0, 2, 1])),
        ("conv_grouped", ["x_grouped", "w_grouped", "b_grouped"],
         dict(group=2, pads=[1, 1, 1, 1])),
        ("conv_1x1", ["x_1x1", "w_1x1", "b_1x1"], {}),
        ("conv_1d", ["x_1d", "w_1d"], dict(strides=[3])),
        ("conv_dw", ["x_dw", "w_dw"], dict(group=24, pads=[1, 1, 1, 1])),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    nodes, results = [], {}
    for name, args, attrs in specs:
        nodes.append(helper.make_node("Conv", args, [name], name=name,
                                      **attrs))
        results[name] = (conv(*[f64[a] for a in args], **attrs), np.float32)
    nodes += [
        helper.make_node("Conv", ["x_chain", "w_chain_in"], ["a_chain"],
                         name="conv_chain_in"),
        helper.make_node("Conv", ["a_chain", "w_chain"], ["c_chain"],
                         name="conv_chain", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c_chain"], ["conv_chain"],
                         name="relu_out"),
    ]
    a_chain = conv(f64["x_chain"], f64["w_chain_in"])
    results["conv_chain"] = (np.maximum(conv(
        a_chain, f64["w_chain"], pads=[1, 1, 1, 1]), 0), np.float32)

    exact_model.write(out, "convolutions", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
