#!/usr/bin/env python3
"""Writes a model of Abs and Neg on integers (T5's relative-position
buckets take Abs of int64), its inputs and numpy's outputs:

  abs_i64  Abs of an int64 input, with the most negative value (which wraps)
  abs_i32  Abs of an int32 input
  neg_i64  Neg of an int64 input
  abs_u8   Abs of a uint8 input (itself)

  int_unary.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    x64 = rng.integers(-1000, 1000, size=(3, 5)).astype(np.int64)
    x64[0, 0] = np.iinfo(np.int64).min
    x32 = rng.integers(-1 << 20, 1 << 20, size=(7,)).astype(np.int32)
    u8 = rng.integers(0, 256, size=(4,)).astype(np.uint8)
    inputs = {"x64": x64, "x32": x32, "u8": u8}
    with np.errstate(over="ignore"):
        results = {"abs_i64": np.abs(x64), "abs_i32": np.abs(x32),
                   "neg_i64": -x64, "abs_u8": u8}
    nodes = [helper.make_node("Abs", ["x64"], ["abs_i64"]),
             helper.make_node("Abs", ["x32"], ["abs_i32"]),
             helper.make_node("Neg", ["x64"], ["neg_i64"]),
             helper.make_node("Abs", ["u8"], ["abs_u8"])]
    dt = {np.dtype(np.int64): TensorProto.INT64,
          np.dtype(np.int32): TensorProto.INT32,
          np.dtype(np.uint8): TensorProto.UINT8}
    graph = helper.make_graph(
        nodes, "int_unary",
        [helper.make_tensor_value_info(k, dt[v.dtype], v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, dt[v.dtype], v.shape)
         for k, v in results.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))
    for i, v in enumerate(inputs.values()):
        np.save(os.path.join(out, "input_%d.npy" % i), v)
    for i, v in enumerate(results.values()):
        np.save(os.path.join(out, "output_%d.npy" % i), v)


if __name__ == "__main__":
    main()
