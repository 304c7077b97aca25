#!/usr/bin/env python3
"""Builds a one-node RNN, GRU or LSTM model with every optional input and
output, and writes it (OUTDIR/m.onnx) with seeded random inputs and ONNX
Runtime's outputs for them (input_K.npy, output_K.npy).

X, initial_h (and initial_c) are graph inputs; W, R, B, the LSTM's
peepholes and sequence_lens are initializers, random from a fixed seed.
ONNX Runtime runs only layout 0: for layout 1 it runs the same op with
layout 0 on the inputs transposed, and its outputs are transposed back.

  recurrent_reference.py OUTDIR --op LSTM [--direction bidirectional]
      [--layout 1] [--seq 5] [--batch 3] [--input 4] [--hidden 6]
      [--seq-lens 5,2,4] [--scale 0.5] [--attr NAME=VALUE ...]

--attr sets further attributes: ints, floats, or comma-separated lists for
activations, activation_alpha and activation_beta (activations=Relu,Tanh).
"""

import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def attr_value(name, text):
    """An --attr value: the activation lists are lists (of floats for
    alpha and beta), others an int or a float."""
    if name == "activations":
        return text.split(",")
    if name.startswith("activation_"):
        return [float(v) for v in text.split(",")]
    try:
        return int(text)
    except ValueError:
        return float(text)


def build(args, layout, weights):
    """The model with `layout`; its graph inputs, in order, as (name, shape)."""
    d = 2 if args.direction == "bidirectional" else 1
    t, b, h = args.seq, args.batch, args.hidden

    def batch_major(a, c):
        return [b, a, c] if layout else [a, b, c]

    inits = [numpy_helper.from_array(w, n) for n, w in weights.items()]
    ins = [("X", batch_major(t, args.input))]
    outs = [("Y", [b, t, d, h] if layout else [t, d, b, h])]
    names = ["X", "W", "R", "B", "lens" if "lens" in weights else "",
             "initial_h"]
    for s in ["h", "c"] if args.op == "LSTM" else ["h"]:
        ins.append(("initial_" + s, batch_major(d, h)))
        outs.append(("Y_" + s, batch_major(d, h)))
    if args.op == "LSTM":
        names += ["initial_c", "P"]
    attrs = {"hidden_size": h, "direction": args.direction, "layout": layout}
    for a in args.attr:
        k, v = a.split("=", 1)
        attrs[k] = attr_value(k, v)
    node = helper.make_node(args.op, names, [n for n, _ in outs], **attrs)

    def infos(values):
        return [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                for n, s in values]

    graph = helper.make_graph([node], args.op.lower(), infos(ins), infos(outs),
                              inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model, ins


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--op", choices=["RNN", "GRU", "LSTM"], required=True)
    ap.add_argument("--direction", default="forward")
    ap.add_argument("--layout", type=int, default=0)
    ap.add_argument("--seq", type=int, default=5)
    ap.add_argument("--batch", type=int, default=3)
    ap.add_argument("--input", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=6)
    ap.add_argument("--seq-lens", default="")
    ap.add_argument("--scale", type=float, default=0.5,
                    help="standard deviation of the random weights")
    ap.add_argument("--attr", action="append", default=[])
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[args.op]
    d = 2 if args.direction == "bidirectional" else 1
    h = args.hidden

    def rand(*shape):
        return (rng.standard_normal(shape) * args.scale).astype(np.float32)

    weights = {"W": rand(d, gates * h, args.input),
               "R": rand(d, gates * h, h), "B": rand(d, 2 * gates * h)}
    if args.seq_lens:
        weights["lens"] = np.array(
            [int(v) for v in args.seq_lens.split(",")], np.int32)
    if args.op == "LSTM":
        weights["P"] = rand(d, 3 * h)

    model, ins = build(args, args.layout, weights)
    onnx.save(model, os.path.join(args.outdir, "m.onnx"))
    feeds = {}
    for k, (name, shape) in enumerate(ins):
        x = rand(*shape)
        np.save(os.path.join(args.outdir, "input_%d.npy" % k), x)
        # Batch-major inputs (X [B,T,I], states [B,D,H]) to time-major.
        feeds[name] = x.transpose(1, 0, 2) if args.layout else x
    reference, _ = build(args, 0, weights)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(reference.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    for k, y in enumerate(sess.run(None, feeds)):
        if args.layout:  # Y [T,D,B,H] to [B,T,D,H]; states [D,B,H] to [B,D,H].
            y = y.transpose(2, 0, 1, 3) if y.ndim == 4 else y.transpose(1, 0, 2)
        np.save(os.path.join(args.outdir, "output_%d.npy" % k), y)


if __name__ == "__main__":
    main()
