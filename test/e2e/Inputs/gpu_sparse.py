#!/usr/bin/env python3
"""Writes two small models with 2:4 sparse weights for the GPU's sparse
tensor-core kernels, a seeded input and ONNX Runtime's output for each:

  gemm.onnx   x[37, 100] -> Gemm(transB, W1 [200, 100]) -> Relu
              -> Gemm(transB, W2 [72, 200]) -> y[37, 72]
  matmul.onnx x[2, 19, 72] -> MatMul(W [72, 136]) + b -> y[2, 19, 136]
  half.onnx   the Gemm model in float16 throughout (weights, input and
              output), as a model exported in half precision is

Every group of four consecutive k of an output column keeps at most two
non-zeros, and some keep one or none; K (100, 200, 72) is no multiple of
32 and the output columns (200, 72, 136) no multiple of 64, so the
kernels' padded K, overhanging tiles and metadata blocks past N all run.

  gpu_sparse.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def sparse_weight(rng, n, k):
    """[n, k] with at most two non-zeros per group of four along k."""
    w = rng.standard_normal((n, k)).astype(np.float32) * 0.3
    for row in range(n):
        for g in range(0, k, 4):
            keep = rng.choice(4, size=2, replace=False)
            for j in range(4):
                if j not in keep and g + j < k:
                    w[row, g + j] = 0.0
    # Some groups keep one value or none.
    w[::5, 8:12] = 0.0
    w[1::3, 20:23] = 0.0
    return w


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)

    w1 = sparse_weight(rng, 200, 100)
    w2 = sparse_weight(rng, 72, 200)
    b1 = rng.standard_normal(200).astype(np.float32) * 0.1
    b2 = rng.standard_normal(72).astype(np.float32) * 0.1
    gemm = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
            helper.make_node("Relu", ["h"], ["r"], name="relu"),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2", transB=1),
        ],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [37, 100])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [37, 72])],
        [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]],
    )

    # MatMul reads its weight as [K, N]: 2:4 along K is along its rows.
    w = sparse_weight(rng, 136, 72).T.copy()
    b = rng.standard_normal(136).astype(np.float32) * 0.1
    matmul = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["p"], name="proj"),
            helper.make_node("Add", ["p", "b"], ["y"], name="bias"),
        ],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 19, 72])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 19, 136])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )

    half = helper.make_graph(
        gemm.node, "half",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [37, 100])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [37, 72])],
        [numpy_helper.from_array(a.astype(np.float16), n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]],
    )

    for name, graph, shape, dtype in [("gemm", gemm, (37, 100), np.float32),
                                      ("matmul", matmul, (2, 19, 72), np.float32),
                                      ("half", half, (37, 100), np.float16)]:
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        path = os.path.join(out, name + ".onnx")
        save(model, path)
        x = rng.standard_normal(shape).astype(dtype)
        np.save(os.path.join(out, name + "_x.npy"), x)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        np.save(os.path.join(out, name + "_y.npy"), sess.run(None, {"x": x})[0])


if __name__ == "__main__":
    main()
