#!/usr/bin/env python3
"""Writes a single self-attention model (no weights: Q, K and V are the
input split into heads, as a transformer's projections would give them)
and a seeded input, for timing attention alone against ONNX Runtime with
bench/compare_ort.py.

  python3 bench/models/attention.py SEQ HEADS HEAD_DIM OUTDIR
  build/bin/kiln-compile OUTDIR/attention.onnx -o OUTDIR/attention.kmod
  python3 bench/compare_ort.py OUTDIR/attention.onnx OUTDIR/attention.kmod \\
      OUTDIR/x.npy --threads 1,2

The graph is the form Hugging Face's eager BERT writes: x [1, S, H*D]
reshaped to [1, S, H, D]; Q and V transposed to [1, H, S, D], K to
[1, H, D, S]; softmax(Q K / sqrt(D)) V, transposed and reshaped back.
kiln-fuse-layers makes it one Attention op.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    s, h, d = map(int, sys.argv[1:4])
    out = sys.argv[4]
    os.makedirs(out, exist_ok=True)
    consts = [
        numpy_helper.from_array(np.array([1, s, h, d], np.int64), "heads"),
        numpy_helper.from_array(np.array([1, s, h * d], np.int64), "merged"),
        numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "heads"], ["xh"]),
        helper.make_node("Transpose", ["xh"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["xh"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "q"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merged"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, s, h * d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, s, h * d])],
        consts)
    # IR version 8: what the ONNX Runtime in bench/requirements.txt reads.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "attention.onnx"))
    rng = np.random.default_rng(0)
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((1, s, h * d)).astype(np.float32))


if __name__ == "__main__":
    main()
