#!/usr/bin/env python3
"""Writes a single self-attention model (no weights: Q, K and V are the
input split into heads, as a transformer's projections would give them)
and a seeded input, for timing attention alone against ONNX Runtime with
bench/compare_ort.py.

  python3 bench/models/attention.py SEQ HEADS HEAD_DIM OUTDIR [--qkv]
  build/bin/kiln-compile OUTDIR/attention.onnx -o OUTDIR/attention.kmod
  python3 bench/compare_ort.py OUTDIR/attention.onnx OUTDIR/attention.kmod \\
      OUTDIR/x.npy --threads 1,2

With --qkv the model takes Q, K and V ([1, H, S, D]) and an additive mask
([1, 1, 1, S], zeros) as inputs instead (OUTDIR/attention_qkv.onnx, with
q.npy, k.npy, v.npy and mask.npy): softmax(Q K^T * scale + mask) V, for
`kiln-run --benchmark` with four --input files.

The graph is the form Hugging Face's eager BERT writes: x [1, S, H*D]
reshaped to [1, S, H, D]; Q and V transposed to [1, H, S, D], K to
[1, H, D, S]; softmax(Q K / sqrt(D)) V, transposed and reshaped back.
kiln-fuse-layers makes it one Attention op.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from single_op import save_model


def write_qkv(s, h, d, out):
    """The attention of Q, K, V and a mask given as inputs."""
    shape = [1, h, s, d]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v"], ["o"]),
    ]
    graph = helper.make_graph(
        nodes, "attention_qkv",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
         for n in "qkv"] +
        [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, s])],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale")])
    save_model(graph, os.path.join(out, "attention_qkv.onnx"))
    rng = np.random.default_rng(0)
    for n in "qkv":
        np.save(os.path.join(out, n + ".npy"),
                rng.standard_normal(shape, dtype=np.float32))
    np.save(os.path.join(out, "mask.npy"), np.zeros((1, 1, 1, s), np.float32))


def main():
    args = [a for a in sys.argv[1:] if a != "--qkv"]
    if len(args) != 4:
        sys.exit(__doc__)
    s, h, d = map(int, args[0:3])
    out = args[3]
    os.makedirs(out, exist_ok=True)
    if len(args) != len(sys.argv) - 1:
        write_qkv(s, h, d, out)
        return
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
    save_model(graph, os.path.join(out, "attention.onnx"))
    rng = np.random.default_rng(0)
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((1, s, h * d)).astype(np.float32))


if __name__ == "__main__":
    main()
