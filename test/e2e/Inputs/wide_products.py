#!/usr/bin/env python3
"""Writes a model of products whose constant weight is past the caches
(over 1 MiB) and whose n no register tile divides, its input and its exact
outputs:

  gemm_tb   Gemm with transB: x [3, 64] times B [4100, 64]^T, a bias
  matmul    MatMul: x [3, 64] times B [64, 4100] (n innermost)

Values are multiples of 1/16 in [-2, 2] (exact_model.grid): every sum is
exact in f32, so the outputs must equal numpy's exactly.

  wide_products.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

import exact_model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    grid = exact_model.grids(5)
    n = 4100
    inputs = {"x": grid(3, 64)}
    weights = {"bt": grid(n, 64), "c": grid(n), "b": grid(64, n)}
    x = inputs["x"].astype(np.float64)
    results = {
        "gemm_tb": (x @ weights["bt"].astype(np.float64).T
                    + weights["c"].astype(np.float64), np.float32),
        "matmul": (x @ weights["b"].astype(np.float64), np.float32),
    }
    nodes = [helper.make_node("Gemm", ["x", "bt", "c"], ["gemm_tb"], transB=1),
             helper.make_node("MatMul", ["x", "b"], ["matmul"])]
    exact_model.write(out, "wide_products", nodes, inputs, weights, results)


if __name__ == "__main__":
    main()
