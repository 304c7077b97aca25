#!/usr/bin/env python3
"""Writes a small CNN whose convolution weights are 2:4 sparse along their
input channels (in every group of four consecutive channels c at each
output channel and window tap, at most two non-zeros: how NVIDIA's ASP
prunes convolutions), a seeded input and ONNX Runtime's output:

  conv.onnx  x[2, 16, 10, 10] -> Conv 3x3 pad 1 (W1 [40, 16, 3, 3]) + b1
             -> Relu -> Conv 3x3 stride 2 (W2 [24, 40, 3, 3]) + b2
             -> Relu -> Conv 1x1 (W3 [16, 24, 1, 1]) -> y[2, 16, 4, 4]
  nchw.onnx  x[1, 12, 6, 6] -> Conv 3x3 (W [16, 12, 3, 3]): 12 f16
             input channels are no whole 16-byte run, so the convolution
             stays NCHW on the GPU (and dense)

Some groups keep one value or none; the first convolution's K (144) is no
multiple of 32 and its 40 output channels no multiple of 64, so the
kernels' padded K and the tiles past the weight's rows run.

  gpu_sparse_conv.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def sparse_conv_weight(rng, f, c, kh, kw):
    """[f, c, kh, kw] with at most two non-zeros per group of four
    channels at each (f, kh, kw)."""
    w = rng.standard_normal((f, c, kh, kw)).astype(np.float32) * 0.2
    for o in range(f):
        for i in range(kh):
            for j in range(kw):
                for g in range(0, c, 4):
                    keep = rng.choice(4, size=2, replace=False)
                    for t in range(4):
                        if t not in keep:
                            w[o, g + t, i, j] = 0.0
    # Some groups keep one value or none.
    w[::5, 0:3, 0, 0] = 0.0
    w[1::3, 4:8, -1, -1] = 0.0
    return w


def cnn_graph(rng, channels, size):
    """x[2, C0, size, size] -> Conv 3x3 pad 1 (W1 [C1, C0, 3, 3]) + b1 ->
    Relu -> Conv 3x3 stride 2 (W2 [C2, C1, 3, 3]) + b2 -> Relu -> Conv 1x1
    (W3 [C3, C2, 1, 1]) -> y, its weights 2:4 along the input channels."""
    c0, c1, c2, c3 = channels
    w1 = sparse_conv_weight(rng, c1, c0, 3, 3)
    w2 = sparse_conv_weight(rng, c2, c1, 3, 3)
    w3 = sparse_conv_weight(rng, c3, c2, 1, 1)
    b1 = rng.standard_normal(c1).astype(np.float32) * 0.1
    b2 = rng.standard_normal(c2).astype(np.float32) * 0.1
    out = (size - 3) // 2 + 1
    return helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
            helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                             kernel_shape=[3, 3], strides=[2, 2]),
            helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
            helper.make_node("Conv", ["r2", "w3"], ["y"], name="conv3",
                             kernel_shape=[1, 1]),
        ],
        "sparse_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [2, c0, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [2, c3, out, out])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2"),
         numpy_helper.from_array(w3, "w3")],
    )


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def write(out, name, graph, x):
    """Saves `graph` as OUT/NAME.onnx with input `x` and ONNX Runtime's
    output (OUT/NAME_x.npy, OUT/NAME_y.npy)."""
    path = os.path.join(out, name + ".onnx")
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         path)
    np.save(os.path.join(out, name + "_x.npy"), x)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.save(os.path.join(out, name + "_y.npy"), sess.run(None, {"x": x})[0])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)

    graph = cnn_graph(rng, [16, 40, 24, 16], 10)
    write(out, "conv", graph,
          rng.standard_normal((2, 16, 10, 10)).astype(np.float32))

    w = sparse_conv_weight(rng, 16, 12, 3, 3)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="narrow",
                          kernel_shape=[3, 3])],
        "nchw_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 4, 4])],
        [numpy_helper.from_array(w, "w")],
    )
    write(out, "nchw", graph,
          rng.standard_normal((1, 12, 6, 6)).astype(np.float32))


if __name__ == "__main__":
    main()
