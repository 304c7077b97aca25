#!/usr/bin/env python3
"""Writes a model of RotaryEmbedding (opset 23) and CumProd (opset 26)
cases, its inputs and the ONNX reference evaluator's outputs:

  r4    4-D input [2, 3, 5, 8] (batch, heads, sequence, head), interleaved
        pairs, position ids, 6 of the 8 head dims rotated
  r3    3-D input [2, 5, 12] with num_heads 3, halves rotated, caches per
        batch and position (no position ids)
  cp    CumProd of [3, 4] along axis 1, exclusive and reversed
  cpi   CumProd of int32 [6] along its one axis

  rotary_models.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy, output_K.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    f, i64, i32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
    angles = rng.uniform(0, 6.3, size=(16, 3)).astype(np.float32)
    angles3 = rng.uniform(0, 6.3, size=(2, 5, 2)).astype(np.float32)
    feeds = {
        "x4": rng.standard_normal((2, 3, 5, 8)).astype(np.float32),
        "pos": rng.integers(0, 16, size=(2, 5)).astype(np.int64),
        "cos4": np.cos(angles), "sin4": np.sin(angles),
        "x3": rng.standard_normal((2, 5, 12)).astype(np.float32),
        "cos3": np.cos(angles3), "sin3": np.sin(angles3),
        "c": rng.uniform(0.5, 1.5, size=(3, 4)).astype(np.float32),
        "ci": rng.integers(-3, 4, size=(6,)).astype(np.int32),
    }
    types = {"pos": i64, "ci": i32}
    axis1 = helper.make_tensor("axis1", i64, [], [1])
    axis0 = helper.make_tensor("axis0", i64, [], [0])
    nodes = [
        helper.make_node("RotaryEmbedding", ["x4", "cos4", "sin4", "pos"], ["r4"],
                         interleaved=1, rotary_embedding_dim=6),
        helper.make_node("RotaryEmbedding", ["x3", "cos3", "sin3"], ["r3"],
                         num_heads=3),
        helper.make_node("CumProd", ["c", "axis1"], ["cp"], exclusive=1, reverse=1),
        helper.make_node("CumProd", ["ci", "axis0"], ["cpi"]),
    ]
    outs = {"r4": (f, [2, 3, 5, 8]), "r3": (f, [2, 5, 12]), "cp": (f, [3, 4]),
            "cpi": (i32, [6])}
    graph = helper.make_graph(
        nodes, "rotary",
        [helper.make_tensor_value_info(k, types.get(k, f), v.shape)
         for k, v in feeds.items()],
        [helper.make_tensor_value_info(k, t, s) for k, (t, s) in outs.items()],
        [axis1, axis0])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))
    results = ReferenceEvaluator(model).run(None, feeds)
    for k, v in enumerate(feeds.values()):
        np.save(os.path.join(out, "input_%d.npy" % k), v)
    for k, v in enumerate(results):
        np.save(os.path.join(out, "output_%d.npy" % k), v)


if __name__ == "__main__":
    main()
