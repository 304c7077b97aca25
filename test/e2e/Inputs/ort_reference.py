#!/usr/bin/env python3
"""Writes seeded random inputs of an ONNX model and ONNX Runtime's outputs
for them as .npy files (input_K.npy, output_K.npy), the reference Kiln's
end-to-end tests compare with. --onnx-reference computes the outputs with
the ONNX reference evaluator instead, for what ONNX Runtime does not
implement; --basic-optimizations runs ONNX Runtime without the graph
rewrites that approximate.

  ort_reference.py MODEL.onnx OUTDIR [--shape NAME:DxD ...] [--seed N]
      [--onnx-reference] [--basic-optimizations]
"""
import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("outdir")
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--range", action="append", default=[],
                    help="NAME:LOW:HIGH: integer input NAME takes values "
                    "in [LOW, HIGH) (default [0, 4))")
    ap.add_argument("--onnx-reference", action="store_true")
    ap.add_argument("--basic-optimizations", action="store_true",
                    help="run ONNX Runtime with basic graph optimizations "
                    "only: its extended ones approximate some graphs (a "
                    "MatMul of a dequantized int8 weight is run on "
                    "dynamically quantized activations)")
    args = ap.parse_args()
    shapes = {}
    for s in args.shape:
        name, dims = s.rsplit(":", 1)
        shapes[name] = [int(d) for d in dims.split("x")] if dims else []
    ranges = {}
    for s in args.range:
        name, lo, hi = s.rsplit(":", 2)
        ranges[name] = (int(lo), int(hi))
    model = onnx.load(args.model)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for k, vi in enumerate(i for i in model.graph.input if i.name not in inits):
        tt = vi.type.tensor_type
        dims = shapes.get(vi.name) or [d.dim_value for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.floating):
            x = rng.standard_normal(dims).astype(dtype)
        else:
            x = rng.integers(*ranges.get(vi.name, (0, 4)), dims).astype(dtype)
        feeds[vi.name] = x
        np.save(os.path.join(args.outdir, "input_%d.npy" % k), x)
    if args.onnx_reference:
        from onnx.reference import ReferenceEvaluator

        outputs = ReferenceEvaluator(model).run(None, feeds)
    else:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        if args.basic_optimizations:
            opts.graph_optimization_level = (
                ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
        sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
        outputs = sess.run(None, feeds)
    for k, y in enumerate(outputs):
        np.save(os.path.join(args.outdir, "output_%d.npy" % k), y)


if __name__ == "__main__":
    main()
