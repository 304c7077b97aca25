#!/usr/bin/env python3
"""Writes a single-MatMul model (a seeded [K, N] weight) and a seeded input,
for timing one contraction against ONNX Runtime with bench/compare_ort.py.

  python3 bench/models/matmul.py M K N OUTDIR
  build/bin/kiln-compile OUTDIR/matmul.onnx -o OUTDIR/matmul.kmod
  python3 bench/compare_ort.py OUTDIR/matmul.onnx OUTDIR/matmul.kmod \\
      OUTDIR/x.npy --threads 1,2
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    m, k, n = map(int, sys.argv[1:4])
    out = sys.argv[4]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w])
    # IR version 8: what the ONNX Runtime in bench/requirements.txt reads.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "matmul.onnx"))
    np.save(os.path.join(out, "x.npy"), rng.standard_normal((m, k)).astype(np.float32))


if __name__ == "__main__":
    main()
