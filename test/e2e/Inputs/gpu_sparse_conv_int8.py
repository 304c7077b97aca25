#!/usr/bin/env python3
"""Writes gpu_sparse_conv.py's small CNN (weights 2:4 sparse along their
input channels) with wider channels, quantized by onnxruntime's
quantize_static (bench/sparsity/mlp_stack.py's quantize_qdq: QDQ,
per-channel symmetric int8 weights, which stay 2:4; int8 activations,
calibrated on 8 seeded inputs):

  conv_qdq.onnx  x[2, 32, 10, 10] -> Conv 3x3 pad 1 (W1 [48, 32, 3, 3]) + b1
                 -> Relu -> Conv 3x3 stride 2 (W2 [32, 48, 3, 3]) + b2
                 -> Relu -> Conv 1x1 (W3 [16, 32, 1, 1]) -> y[2, 16, 4, 4]

with a seeded input (x.npy), ONNX Runtime's output of the QDQ model
run unfused (y.npy; mlp_stack.qdq_reference) and the output's quantization step (step.txt). Every input channel
count is a multiple of 16 (whole 16-byte runs of int8 channels: the
convolutions run channels-last on the GPU); K = 288, 432 and 32 are no
multiple of 64 (mma.sp m16n8k64's step), 48 output channels no multiple
of 64.

  gpu_sparse_conv_int8.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "..", "bench", "sparsity"))
from gpu_sparse_conv import cnn_graph  # noqa: E402
from mlp_stack import qdq_reference, quantize_qdq  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(12)
    model = helper.make_model(cnn_graph(rng, [32, 48, 32, 16], 10),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    src = os.path.join(out, "conv.onnx")
    onnx.save(model, src)
    x = rng.standard_normal((2, 32, 10, 10)).astype(np.float32)
    samples = [{"x": rng.standard_normal(x.shape).astype(np.float32)}
               for _ in range(8)] + [{"x": x}]
    qdq = os.path.join(out, "conv_qdq.onnx")
    step = quantize_qdq(src, qdq, samples)
    with open(os.path.join(out, "step.txt"), "w") as f:
        f.write("%.9g\n" % step)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), qdq_reference(qdq, {"x": x})[0])


if __name__ == "__main__":
    main()
