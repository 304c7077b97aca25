#!/usr/bin/env python3
"""Writes a model whose integer Div and Mod, by a divisor that differs per
element, feed reductions over rows of 9, 11 and 13 elements (no multiple of
a vector width: the vectorized loops end in a masked tail), its inputs and
numpy's outputs (exact):

  sq_div_i32  ReduceSumSquare(Cast<float>(Div(a_i32, d1)))   [4, 9] -> [4, 1]
  sum_mod_i64 ReduceSum(Mod(b_i64, d2)), Python's sign rule  [3, 13] -> [3]
  sum_fmod    ReduceSum(Mod(b_i64, d2, fmod=1)), C's rule    [3, 13] -> [3]
  sum_div_u8  ReduceSum(Cast<int32>(Div(c_u8, e)))           [2, 11] -> [2]
              (e a graph input: the divisor is read at run time)

A fuzzed graph found the first: the tail's inactive lanes divided by 0,
undefined behaviour that let LLVM drop the tail's elements from the sum.

  int_division.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exact_model import write  # noqa: E402


def trunc_div(x, d):
    q = np.abs(x) // np.abs(d)
    return np.where((x < 0) != (d < 0), -q, q).astype(x.dtype)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    a = rng.integers(-300, 300, (4, 9)).astype(np.int32)
    b = rng.integers(-1000, 1000, (3, 13)).astype(np.int64)
    c = rng.integers(0, 256, (2, 11)).astype(np.uint8)
    e = rng.integers(1, 9, (11,)).astype(np.uint8)
    d1 = (rng.integers(1, 8, (9,)) * rng.choice([-1, 1], 9)).astype(np.int32)
    d2 = (rng.integers(1, 8, (13,)) * rng.choice([-1, 1], 13)).astype(np.int64)
    results = {
        "sq_div_i32": (np.sum(trunc_div(a, d1).astype(np.float64) ** 2,
                              axis=1, keepdims=True), np.float32),
        "sum_mod_i64": (np.sum(np.mod(b, d2), axis=1), np.int64),
        "sum_fmod": (np.sum(np.fmod(b, d2), axis=1), np.int64),
        "sum_div_u8": (np.sum(c // e, axis=1, dtype=np.int64), np.int32),
    }
    N = helper.make_node
    nodes = [
        N("Div", ["a", "d1"], ["qa"]),
        N("Cast", ["qa"], ["fa"], to=1),  # float
        N("ReduceSumSquare", ["fa", "axis1"], ["sq_div_i32"], keepdims=1),
        N("Mod", ["b", "d2"], ["mb"]),
        N("ReduceSum", ["mb", "axis1"], ["sum_mod_i64"], keepdims=0),
        N("Mod", ["b", "d2"], ["fb"], fmod=1),
        N("ReduceSum", ["fb", "axis1"], ["sum_fmod"], keepdims=0),
        N("Div", ["c", "e"], ["qc"]),
        N("Cast", ["qc"], ["ic"], to=6),  # int32
        N("ReduceSum", ["ic", "axis1"], ["sum_div_u8"], keepdims=0),
    ]
    write(out, "int_division", nodes, {"a": a, "b": b, "c": c, "e": e},
          {"d1": d1, "d2": d2, "axis1": np.array([1], np.int64)}, results)


if __name__ == "__main__":
    main()
