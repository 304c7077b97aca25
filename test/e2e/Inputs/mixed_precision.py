#!/usr/bin/env python3
"""Writes a float32 model for kiln-compile --precision=fp16/bf16 whose
outputs under mixed precision are known exactly, with its inputs and, per
precision, its expected outputs:

  mm     Relu(MatMul(x [16x64], W [64x48]) + b): MatMul in half precision,
         then Add and Relu on half values
  gemm   Gemm(x, G [40x64], C [40], transB=1)
  conv   Conv(img [1x8x10x10], K [16x8x3x3], bias, pad 1)

Every input and weight is a multiple of 1/16 in [-2, 2] (exact in f16 and
bf16), so every product and every float32 partial sum is exact: a
contraction that accumulates in float32, as Kiln's do, rounds only its
final sum (plus the bias or C, which the Gemm and the Conv add to the
accumulator) to the half type; the MatMul's bias Add is a half-precision
op of its own. An f16 accumulator would round partial sums of up to 16
significant bits and miss these values.

  mixed_precision.py OUTDIR  (writes m.onnx, input_K.npy, and
                              f16/output_K.npy, bf16/output_K.npy,
                              f32/output_K.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import exact_model
from convolutions import conv


def to_bf16(a):
    """float32 -> nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


ROUND = {"f16": lambda a: np.asarray(a, np.float32).astype(np.float16).astype(np.float32),
         "bf16": to_bf16,
         "f32": lambda a: np.asarray(a, np.float32)}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)

    def grid(*shape):
        return exact_model.grid(rng, shape)

    x, img = grid(16, 64), grid(1, 8, 10, 10)
    w, b = grid(64, 48), grid(48)
    g, c = grid(40, 64), grid(40)
    k, kb = grid(16, 8, 3, 3), grid(16)

    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm_matmul"),
             helper.make_node("Add", ["xw", "b"], ["xwb"], name="mm_add"),
             helper.make_node("Relu", ["xwb"], ["mm"], name="mm_relu"),
             helper.make_node("Gemm", ["x", "g", "c"], ["gemm"], transB=1, name="gemm"),
             helper.make_node("Conv", ["img", "k", "kb"], ["conv"], pads=[1, 1, 1, 1],
                              name="conv")]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "mixed_precision",
        [helper.make_tensor_value_info("x", f32, [16, 64]),
         helper.make_tensor_value_info("img", f32, [1, 8, 10, 10])],
        [helper.make_tensor_value_info("mm", f32, [16, 48]),
         helper.make_tensor_value_info("gemm", f32, [16, 40]),
         helper.make_tensor_value_info("conv", f32, [1, 16, 10, 10])],
        [numpy_helper.from_array(v, n) for n, v in
         [("w", w), ("b", b), ("g", g), ("c", c), ("k", k), ("kb", kb)]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))
    np.save(os.path.join(out, "input_0.npy"), x)
    np.save(os.path.join(out, "input_1.npy"), img)

    x64 = x.astype(np.float64)
    for name, r in ROUND.items():
        os.makedirs(os.path.join(out, name), exist_ok=True)
        # Exact float32 sums (|sum| < 2^9 in steps of 2^-8), rounded once.
        mm = np.maximum(r(r(x64 @ w) + b), 0)
        gemm = r(x64 @ g.T.astype(np.float64) + c)
        cv = r(conv(img.astype(np.float64), k.astype(np.float64), kb.astype(np.float64),
                    pads=[1, 1, 1, 1]))
        for i, v in enumerate([mm, gemm, cv]):
            np.save(os.path.join(out, name, "output_%d.npy" % i), v.astype(np.float32))


if __name__ == "__main__":
    main()
