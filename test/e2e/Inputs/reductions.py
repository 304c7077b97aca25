"""Writes a model of reductions and its numpy reference outputs.

  reductions.py OUTDIR

OUTDIR/m.onnx takes x [4, 1000] and y [2, 8, 20, 20] and returns
ReduceSum(x, axis 1), ReduceMax(x, axis 1), Softmax(x) over the last axis,
ReduceMean(x, axis 0) and GlobalAveragePool(y): long rows that the GPU path
reduces with a block of threads per output, and short columns it reduces
with a thread per output. OUTDIR/input_*.npy and output_*.npy hold seeded
inputs and the outputs numpy computes in float64.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    f = TensorProto.FLOAT
    axes1 = helper.make_tensor("axes1", TensorProto.INT64, [1], [1])
    axes0 = helper.make_tensor("axes0", TensorProto.INT64, [1], [0])
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes1"], ["sum"], keepdims=1),
        helper.make_node("ReduceMax", ["x"], ["max"], axes=[1], keepdims=0),
        helper.make_node("Softmax", ["x"], ["softmax"], axis=-1),
        helper.make_node("ReduceMean", ["x"], ["mean0"], axes=[0], keepdims=0),
        helper.make_node("GlobalAveragePool", ["y"], ["gap"]),
    ]
    graph = helper.make_graph(
        nodes, "reductions",
        [helper.make_tensor_value_info("x", f, [4, 1000]),
         helper.make_tensor_value_info("y", f, [2, 8, 20, 20])],
        [helper.make_tensor_value_info("sum", f, [4, 1]),
         helper.make_tensor_value_info("max", f, [4]),
         helper.make_tensor_value_info("softmax", f, [4, 1000]),
         helper.make_tensor_value_info("mean0", f, [1000]),
         helper.make_tensor_value_info("gap", f, [2, 8, 1, 1])],
        initializer=[axes1])
    # ReduceMax and ReduceMean take axes as attributes before opset 18.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))

    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 1000)).astype(np.float32)
    y = rng.standard_normal((2, 8, 20, 20)).astype(np.float32)
    np.save(os.path.join(out, "input_0.npy"), x)
    np.save(os.path.join(out, "input_1.npy"), y)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    refs = [xd.sum(axis=1, keepdims=True), xd.max(axis=1),
            e / e.sum(axis=1, keepdims=True), xd.mean(axis=0),
            yd.mean(axis=(2, 3), keepdims=True)]
    for k, r in enumerate(refs):
        np.save(os.path.join(out, "output_%d.npy" % k), r.astype(np.float32))


if __name__ == "__main__":
    main()
