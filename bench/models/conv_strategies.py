#!/usr/bin/env python3
"""Writes single-purpose convolution models for the strategy benchmarks
(bench/compare_ort.py times each against ONNX Runtime):

| name            | what                                                         |
|-----------------|--------------------------------------------------------------|
| alexnet_g2      | AlexNet's grouped conv2: 96 -> 256 channels, 5x5, pad 2,     |
|                 | group 2, on 1x96x27x27                                       |
| grouped_g4      | a grouped 3x3 of four groups: 256 -> 256, pad 1, 1x256x28x28 |
| shuffle_g3      | ShuffleNet-v1's grouped 1x1: 240 -> 240, group 3, 1x240x28x28 |
| deconv_2x2      | a text detector's upsampling ConvTranspose: 64 -> 64, 2x2,   |
|                 | stride 2, on 1x64x160x160                                    |
| deconv_4x4      | a decoder's ConvTranspose: 128 -> 64, 4x4, stride 2, pads 1, |
|                 | on 1x128x64x64                                               |
| stored_w        | three 3x3 convolutions 64 -> 64 (pad 1, ReLU) on 1x64x56x56  |
|                 | with their weights stored as initializers                    |
| computed_w      | the same weights computed in the graph: the first one a      |
|                 | Transpose of a stored [F, C, kw, kh] table, the second a     |
|                 | DequantizeLinear of int8 (values that dequantize exactly),   |
|                 | the third a ConstantOfShape filled with one value (the same  |
|                 | fill in stored_w)                                            |

Inputs: `input`, f32. Each model is OUT/NAME.onnx with OUT/NAME.npy, a
fixed-seed input.

  python3 bench/models/conv_strategies.py OUT
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from single_op import save_model


def weighted_model(path, op, x_shape, w, y_shape, **attrs):
    """One `op` node of input, weight w and a bias of 0.1 per output
    channel (Conv's dim 0 of w, ConvTranspose's dim 1)."""
    f = w.shape[1] if op == "ConvTranspose" else w.shape[0]
    graph = helper.make_graph(
        [helper.make_node(op, ["input", "w", "b"], ["y"], **attrs)],
        op.lower(),
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.zeros(f, np.float32) + 0.1, "b")])
    save_model(graph, path)


def conv_model(path, x_shape, w, group, pads):
    k = w.shape[2]
    y_shape = [x_shape[0], w.shape[0]] + [d + pads[0] + pads[2] - k + 1
                                          for d in x_shape[2:]]
    weighted_model(path, "Conv", x_shape, w, y_shape, group=group, pads=pads)


def deconv_model(path, x_shape, w, strides, pads):
    k = w.shape[2]
    y_shape = [x_shape[0], w.shape[1]] + [(d - 1) * strides[0] + k - pads[0]
                                          - pads[2] for d in x_shape[2:]]
    weighted_model(path, "ConvTranspose", x_shape, w, y_shape,
                   strides=strides, pads=pads)


def chain_models(out, rng):
    """stored_w and computed_w: the same three convolutions."""
    c = 64
    shape = [1, c, 56, 56]
    w0 = (rng.standard_normal((c, c, 3, 3)) * 0.05).astype(np.float32)
    q1 = rng.integers(-100, 100, (c, c, 3, 3)).astype(np.int8)
    s1 = np.float32(1 / 1024)
    w1 = q1.astype(np.float32) * s1
    fill = np.float32(0.002)
    w2 = np.full((c, c, 3, 3), fill, np.float32)

    def convs(names):
        nodes, x = [], "input"
        for i, w in enumerate(names):
            nodes.append(helper.make_node("Conv", [x, w], [f"c{i}"], pads=[1] * 4))
            nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
            x = f"r{i}"
        nodes[-1].output[0] = "y"
        return nodes

    io = ([helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    stored = helper.make_graph(
        convs(["w0", "w1", "w2"]), "stored", *io,
        [numpy_helper.from_array(w, n) for n, w in
         (("w0", w0), ("w1", w1), ("w2", w2))])
    save_model(stored, os.path.join(out, "stored_w.onnx"))
    computed = helper.make_graph(
        [helper.make_node("Transpose", ["w0t"], ["w0"], perm=[0, 1, 3, 2]),
         helper.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["w1"]),
         helper.make_node("ConstantOfShape", ["shape2"], ["w2"],
                          value=numpy_helper.from_array(
                              np.array([fill], np.float32)))]
        + convs(["w0", "w1", "w2"]), "computed", *io,
        [numpy_helper.from_array(np.ascontiguousarray(w0.transpose(0, 1, 3, 2)),
                                 "w0t"),
         numpy_helper.from_array(q1, "q1"),
         numpy_helper.from_array(np.array(s1, np.float32), "s1"),
         numpy_helper.from_array(np.array(0, np.int8), "z1"),
         numpy_helper.from_array(np.array([c, c, 3, 3], np.int64), "shape2")])
    save_model(computed, os.path.join(out, "computed_w.onnx"))
    for name in ("stored_w", "computed_w"):
        np.save(os.path.join(out, name + ".npy"),
                rng.standard_normal(shape).astype(np.float32))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    specs = {
        "alexnet_g2": ([1, 96, 27, 27], (256, 48, 5, 5), 2, [2] * 4),
        "grouped_g4": ([1, 256, 28, 28], (256, 64, 3, 3), 4, [1] * 4),
        "shuffle_g3": ([1, 240, 28, 28], (240, 80, 1, 1), 3, [0] * 4),
    }
    for name, (xs, ws, group, pads) in specs.items():
        w = (rng.standard_normal(ws) * 0.05).astype(np.float32)
        conv_model(os.path.join(out, name + ".onnx"), xs, w, group, pads)
        np.save(os.path.join(out, name + ".npy"),
                rng.standard_normal(xs).astype(np.float32))
    deconvs = {
        "deconv_2x2": ([1, 64, 160, 160], (64, 64, 2, 2), [2, 2], [0] * 4),
        "deconv_4x4": ([1, 128, 64, 64], (128, 64, 4, 4), [2, 2], [1] * 4),
    }
    for name, (xs, ws, strides, pads) in deconvs.items():
        w = (rng.standard_normal(ws) * 0.05).astype(np.float32)
        deconv_model(os.path.join(out, name + ".onnx"), xs, w, strides, pads)
        np.save(os.path.join(out, name + ".npy"),
                rng.standard_normal(xs).astype(np.float32))
    chain_models(out, rng)


if __name__ == "__main__":
    main()
