#!/usr/bin/env python3
"""Writes a model of concatenations whose inputs a CPU module computes in
place (upstream's empty-tensor elimination before bufferization: each
result computed into its slice of the concatenation) and of convolutions
with output channels in two-vector register tiles whose last is half used
(72 and 1000 channels with 8 f32 lanes), its inputs and exact outputs:

  fire        a SqueezeNet fire module: a 1x1 squeeze, then 1x1 and 3x3
              expands of 72 channels each with Relus, concatenated
  classifier  a 1x1 convolution to 1000 channels on a 13x13 plane
  dense       two DenseNet layers: the block's input concatenated with a
              3x3 convolution of it, then with a 1x1 convolution of that
  branch      a Relu'd 1x1 convolution that is a graph output and also
  joined      concatenated with the graph input
  hcat, wcat  concatenations along the height and the width

Values are multiples of 1/16 (exact_model.grid; the later layers' weights
in [-1/2, 1/2]): every sum is exact in f32, so the outputs must equal
numpy's exactly.

  concat_in_place.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
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
    grid = exact_model.grids(11)
    halves = np.random.default_rng(12)

    def small(*shape):  # Multiples of 1/16 in [-1/2, 1/2].
        return (halves.integers(-8, 9, size=shape) / 16).astype(np.float32)

    inputs = {"x": grid(1, 8, 13, 13)}
    weights = {
        "ws": grid(4, 8, 1, 1),
        "w1": grid(72, 4, 1, 1), "b1": grid(72),
        "w3": grid(72, 4, 3, 3),
        "wc": grid(1000, 8, 1, 1), "bc": grid(1000),
        "wd1": grid(8, 8, 3, 3),
        "wd2": small(8, 16, 1, 1),
        "wa": grid(16, 8, 1, 1),
        "wh": grid(8, 8, 1, 1),
    }
    f = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    relu = lambda v: np.maximum(v, 0)
    pad1 = dict(pads=[1, 1, 1, 1])
    N = helper.make_node
    nodes = [
        N("Conv", ["x", "ws"], ["s0"], name="squeeze"),
        N("Relu", ["s0"], ["s"]),
        N("Conv", ["s", "w1", "b1"], ["e10"], name="expand1x1"),
        N("Relu", ["e10"], ["e1"]),
        N("Conv", ["s", "w3"], ["e30"], name="expand3x3", **pad1),
        N("Relu", ["e30"], ["e3"]),
        N("Concat", ["e1", "e3"], ["fire"], name="fire", axis=1),
        N("Conv", ["x", "wc", "bc"], ["classifier"], name="classifier"),
        N("Conv", ["x", "wd1"], ["d10"], name="dense1", **pad1),
        N("Relu", ["d10"], ["d1"]),
        N("Concat", ["x", "d1"], ["y1"], name="dense_cat1", axis=1),
        N("Conv", ["y1", "wd2"], ["d20"], name="dense2"),
        N("Relu", ["d20"], ["d2"]),
        N("Concat", ["y1", "d2"], ["dense"], name="dense_cat2", axis=1),
        N("Conv", ["x", "wa"], ["a0"], name="branch_conv"),
        N("Relu", ["a0"], ["branch"]),
        N("Concat", ["branch", "x"], ["joined"], name="joined", axis=1),
        N("Conv", ["x", "wh"], ["h0"], name="h_conv"),
        N("Relu", ["h0"], ["h"]),
        N("Relu", ["x"], ["xr"]),
        N("Concat", ["h", "xr"], ["hcat"], name="hcat", axis=2),
        N("Concat", ["xr", "h"], ["wcat"], name="wcat", axis=3),
    ]
    s = relu(conv(f["x"], f["ws"]))
    e1 = relu(conv(s, f["w1"], f["b1"]))
    e3 = relu(conv(s, f["w3"], **pad1))
    d1 = relu(conv(f["x"], f["wd1"], **pad1))
    y1 = np.concatenate([f["x"], d1], axis=1)
    d2 = relu(conv(y1, f["wd2"]))
    a = relu(conv(f["x"], f["wa"]))
    h = relu(conv(f["x"], f["wh"]))
    xr = relu(f["x"])
    results = {
        "fire": np.concatenate([e1, e3], axis=1),
        "classifier": conv(f["x"], f["wc"], f["bc"]),
        "dense": np.concatenate([y1, d2], axis=1),
        "branch": a,
        "joined": np.concatenate([a, f["x"]], axis=1),
        "hcat": np.concatenate([h, xr], axis=2),
        "wcat": np.concatenate([xr, h], axis=3),
    }
    exact_model.write(out, "concat_in_place", nodes, inputs, weights,
                      {k: (v, np.float32) for k, v in results.items()})


if __name__ == "__main__":
    main()
