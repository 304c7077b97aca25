#!/usr/bin/env python3
"""A float ONNX model quantized by onnxruntime's quantize_static (QDQ,
per-channel symmetric int8 weights, int8 activations; calibrated on
--samples seeded normal inputs of the model's input shape, the batch given
by --batch) with its int8 Conv and Gemm weights then pruned to 2:4, as
int8 2:4 models reach Kiln: in each group of four consecutive input
channels at each output channel and window tap of a Conv weight (the
Gemm's [N, K] weight: four consecutive k), the two largest magnitudes
stay (the first on ties; Kiln's --sparsity=force prunes the same way).
Weights with input channels (K) not a multiple of 4 are left alone.

  python3 bench/sparsity/qdq_2to4.py IN.onnx OUT.onnx [--batch 1] [--samples 2]

Writes OUT.onnx and prints the pruned weight count and the output's
quantization step.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_stack import prune_2of4, quantize_qdq  # noqa: E402


def prune_int8(w):
    """[F, C, KH, KW] int8 with the two largest |w| of each four c kept:
    mlp_stack.prune_2of4 on the [C, F * KH * KW] view (int8 values are
    exact as float32)."""
    f, c, kh, kw = w.shape
    kn = w.transpose(1, 0, 2, 3).reshape(c, f * kh * kw).astype(np.float32)
    p = prune_2of4(kn).astype(np.int8)
    return np.ascontiguousarray(p.reshape(c, f, kh, kw).transpose(1, 0, 2, 3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--samples", type=int, default=2)
    a = ap.parse_args()
    model = onnx.load(a.input)
    inp = model.graph.input[0]
    shape = [d.dim_value if d.dim_value > 0 else a.batch
             for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    samples = [{inp.name: rng.standard_normal(shape).astype(np.float32)}
               for _ in range(a.samples)]
    with tempfile.TemporaryDirectory() as tmp:
        qdq = os.path.join(tmp, "qdq.onnx")
        step = quantize_qdq(a.input, qdq, samples)
        model = onnx.load(qdq)
    inits = {i.name: i for i in model.graph.initializer}
    dequantized = {n.output[0]: n for n in model.graph.node
                   if n.op_type == "DequantizeLinear"}
    pruned = 0
    for node in model.graph.node:
        if node.op_type not in ("Conv", "Gemm") or node.input[1] not in dequantized:
            continue
        init = inits.get(dequantized[node.input[1]].input[0])
        if init is None or init.data_type != onnx.TensorProto.INT8:
            continue
        w = numpy_helper.to_array(init)
        gemm = node.op_type == "Gemm"
        if gemm and not any(at.name == "transB" and at.i for at in node.attribute):
            w = w.T  # [K, N] as [N, K]
        w4 = w[:, :, None, None] if gemm else w
        if w4.shape[1] % 4:
            continue
        p = prune_int8(w4)
        p = p[:, :, 0, 0] if gemm else p
        if gemm and not any(at.name == "transB" and at.i for at in node.attribute):
            p = p.T
        init.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(p), init.name))
        pruned += 1
    onnx.save(model, a.output)
    print("%s: %d int8 weights pruned to 2:4; output step %.9g" % (a.output, pruned, step))


if __name__ == "__main__":
    main()
