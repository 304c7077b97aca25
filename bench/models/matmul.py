#!/usr/bin/env python3
"""Writes a single-MatMul model (a seeded [K, N] weight) and a seeded input,
for timing one contraction against ONNX Runtime with bench/compare_ort.py.

  python3 bench/models/matmul.py M K N OUTDIR [--weight-left]
  build/bin/kiln-compile OUTDIR/matmul.onnx -o OUTDIR/matmul.kmod
  python3 bench/compare_ort.py OUTDIR/matmul.onnx OUTDIR/matmul.kmod \\
      OUTDIR/x.npy --threads 1,2

With --weight-left the weight is the left operand, y[M, N] = W[M, K] x[K, N]:
the orientation of an NCHW convolution's GEMM (weights broadcast per row,
the activation vectorized along N), against the default's x[M, K] W[K, N]
(a channels-last convolution's GEMM: the weight packed and vectorized).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    args = [a for a in sys.argv[1:] if a != "--weight-left"]
    weight_left = len(args) != len(sys.argv) - 1
    m, k, n = map(int, args[0:3])
    out = args[3]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    w_shape, x_shape = ((m, k), (k, n)) if weight_left else ((k, n), (m, k))
    w = numpy_helper.from_array(rng.standard_normal(w_shape).astype(np.float32), "W")
    inputs = ["W", "x"] if weight_left else ["x", "W"]
    graph = helper.make_graph(
        [helper.make_node("MatMul", inputs, ["y"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w])
    # IR version 8: what the ONNX Runtime in bench/requirements.txt reads.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "matmul.onnx"))
    np.save(os.path.join(out, "x.npy"), rng.standard_normal(x_shape).astype(np.float32))

if __name__ == "__main__":
    main()
