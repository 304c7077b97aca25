#!/usr/bin/env python3
"""Writes a model of matrix products for the GPU's tiled contraction
kernels (kiln-gpu-contractions), its inputs and its exact outputs:

  mm_edges     MatMul [100x70] x [70x50]: M, N and K not multiples of the
               64x64x16 tiles
  bmm          MatMul [3x40x96] x [3x96x72]: a batch dimension, both
               operands inputs
  gemm_bias    Gemm transB=1 with a bias: B read as [n][k]
  gemm_trans_a Gemm transA=1: A's innermost dimension is M
  mm_f16       MatMul in f16 [64x48] x [48x40] (tensor cores, m16n8k16)
  mm_narrow    MatMul [8x70] x [70x50]: M below the tiles' minimum, a
               loop kernel
  mm_bf16      MatMul in bf16 [64x32] x [32x48] (inputs cast from f32,
               output cast back; tensor cores, m16n8k16 bf16)
  gemm_f16_tt  Gemm transA=1 transB=1 in f16, A [48x72] and B [56x48]:
               A's contiguous side is M and B's K (the other ldmatrix
               layouts), M and N past the tiles' edges, K past a step

Every value is a multiple of 1/16 in [-2, 2] (f16 and bf16: of 1/2 in
[-1, 1]), so every product and every partial sum is exact in f32 (and in
f16 for mm_f16, in bf16 for mm_bf16) and in tf32: whatever order a kernel sums in, and whether it reads
f32 as tf32 or not, the outputs must equal numpy's exactly.

  contractions.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

import exact_model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def grid(shape, dtype=np.float32, step=16, bound=2):
        return (rng.integers(-bound * step, bound * step + 1, size=shape)
                / step).astype(dtype)

    inputs = {
        "x_edges": grid([100, 70]),
        "x_bmm": grid([3, 40, 96]),
        "y_bmm": grid([3, 96, 72]),
        "x_gemm": grid([64, 128]),
        "x_trans": grid([128, 64]),
        "x_f16": grid([64, 48], np.float16, step=2, bound=1),
        "x_narrow": grid([8, 70]),
        "x_bf16": grid([64, 32], step=2, bound=1),
        "x_tt": grid([48, 72], np.float16, step=2, bound=1),
    }
    weights = {
        "w_edges": grid([70, 50]),
        "w_gemm": grid([80, 128]),
        "b_gemm": grid([80]),
        "w_trans": grid([128, 96]),
        "w_f16": grid([48, 40], np.float16, step=2, bound=1),
        "w_bf16": grid([32, 48], step=2, bound=1),
        "w_tt": grid([56, 48], np.float16, step=2, bound=1),
    }
    nodes = [
        helper.make_node("MatMul", ["x_edges", "w_edges"], ["mm_edges"],
                         name="mm_edges"),
        helper.make_node("MatMul", ["x_bmm", "y_bmm"], ["bmm"], name="bmm"),
        helper.make_node("Gemm", ["x_gemm", "w_gemm", "b_gemm"],
                         ["gemm_bias"], name="gemm_bias", transB=1),
        helper.make_node("Gemm", ["x_trans", "w_trans"], ["gemm_trans_a"],
                         name="gemm_trans_a", transA=1),
        helper.make_node("MatMul", ["x_f16", "w_f16"], ["mm_f16"],
                         name="mm_f16"),
        helper.make_node("MatMul", ["x_narrow", "w_edges"], ["mm_narrow"],
                         name="mm_narrow"),
        helper.make_node("Cast", ["x_bf16"], ["x_bf16_c"], name="x_to_bf16",
                         to=TensorProto.BFLOAT16),
        helper.make_node("Cast", ["w_bf16"], ["w_bf16_c"], name="w_to_bf16",
                         to=TensorProto.BFLOAT16),
        helper.make_node("MatMul", ["x_bf16_c", "w_bf16_c"], ["mm_bf16_c"],
                         name="mm_bf16"),
        helper.make_node("Cast", ["mm_bf16_c"], ["mm_bf16"],
                         name="bf16_to_f32", to=TensorProto.FLOAT),
        helper.make_node("Gemm", ["x_tt", "w_tt"], ["gemm_f16_tt"],
                         name="gemm_f16_tt", transA=1, transB=1),
    ]
    f64 = {k: v.astype(np.float64) for k, v in {**inputs, **weights}.items()}
    results = {
        "mm_edges": (f64["x_edges"] @ f64["w_edges"], np.float32),
        "bmm": (f64["x_bmm"] @ f64["y_bmm"], np.float32),
        "gemm_bias": (f64["x_gemm"] @ f64["w_gemm"].T + f64["b_gemm"],
                      np.float32),
        "gemm_trans_a": (f64["x_trans"].T @ f64["w_trans"], np.float32),
        "mm_f16": (f64["x_f16"] @ f64["w_f16"], np.float16),
        "mm_narrow": (f64["x_narrow"] @ f64["w_edges"], np.float32),
        "mm_bf16": (f64["x_bf16"] @ f64["w_bf16"], np.float32),
        "gemm_f16_tt": (f64["x_tt"].T @ f64["w_tt"].T, np.float16),
    }

    exact_model.write(out, "contractions", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
