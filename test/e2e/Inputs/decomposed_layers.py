#!/usr/bin/env python3
"""Writes two ONNX models made of the decomposed layers PyTorch's exporters
write, node for node as they write them (constants' values and operand
order included), for kiln-fuse-layers' end-to-end test:

- ts14.onnx (opset 14, as `torch.onnx.export(..., dynamo=False)` writes):
  LayerNorm (ReduceMean with an `axes` attribute, Sub, Pow, ReduceMean,
  Add, Sqrt, Div, Mul, Add with the bias first), GELU erf (Div by sqrt 2,
  Erf, Add 1, Mul x, Mul 0.5), GELU tanh (x^3 as two Muls, every constant
  first), and the hand-written RMSNorm (Pow, ReduceMean, Add, Sqrt,
  Div(1, .), Mul x, Mul w);
  Attention as a hand-written module writes it (K^T a Transpose, the
  product divided by sqrt(d), no mask), and as the TorchScript exporter
  writes Hugging Face's SDPA attention (Q and K^T each times d^-1/4, a
  -inf mask from Where that hides every key of batch 1, then the guard
  Where(IsNaN(P), 0, P));
- dyn18.onnx (opset 18, as `torch.onnx.export` writes): torch.nn.RMSNorm
  (Reciprocal, axes positive), GELU erf (0.5 * (1 + erf) first, then x),
  GPT-2's gelu_new (Pow 3, 0.5 * x aside), SiLU (Sigmoid, Mul), and
  Hugging Face's eager attention (K^T from a [0, 2, 3, 1] Transpose of the
  [B, S, H, D] view, the product times 1/sqrt(d), a finite mask from
  Where(cond, 0, float32 min)) and its SDPA attention with the guard
  behind that finite mask.

Each layer reads the input x [2, 8, 32] and is one graph output of the
same shape (attention: 4 heads of 8, Q, K and V from x times per-channel
weights, the output's heads merged back).

  decomposed_layers.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

X = [2, 8, 32]


class Graph:
    def __init__(self, opset):
        self.opset = opset
        self.nodes, self.inits, self.outputs = [], [], []
        self.count = 0
        self.rng = np.random.default_rng(0)

    def name(self, prefix):
        self.count += 1
        return "%s_%d" % (prefix, self.count)

    def const(self, value, dtype=np.float32, shape=()):
        out = self.name("c")
        self.nodes.append(helper.make_node(
            "Constant", [], [out],
            value=numpy_helper.from_array(np.array(value, dtype).reshape(shape))))
        return out

    def weight(self, shape, mean=0.0):
        out = self.name("w")
        self.inits.append(numpy_helper.from_array(
            (mean + 0.5 * self.rng.standard_normal(shape)).astype(np.float32), out))
        return out

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name="/" + out, **attrs))
        return out

    def heads(self, x, perm=(0, 2, 1, 3)):
        """x [2, 8, 32] times a weight, as [2, 8, 4, 8] permuted."""
        v = self.node("Reshape", [self.node("Mul", [x, self.weight([32], 1.0)]),
                                  self.const([2, 8, 4, 8], np.int64, [4])])
        return self.node("Transpose", [v], perm=list(perm))

    def merge(self, y):
        """[2, 4, 8, 8] back to [2, 8, 32]."""
        t = self.node("Transpose", [y], perm=[0, 2, 1, 3])
        return self.node("Reshape", [t, self.const([2, 8, 32], np.int64, [3])])

    def mask(self, masked_value, all_hidden_batch=None):
        """An additive [2, 1, 1, 8] mask: 0 where kept, `masked_value` on
        the last 3 keys (on every key of `all_hidden_batch`)."""
        keep = np.ones([2, 1, 1, 8], bool)
        keep[:, :, :, 5:] = False
        if all_hidden_batch is not None:
            keep[all_hidden_batch] = False
        cond = self.name("keep")
        self.inits.append(numpy_helper.from_array(keep, cond))
        return self.node("Where", [cond, self.const(0.0), self.const(masked_value)])

    def guarded(self, p):
        return self.node("Where", [self.node("IsNaN", [p]), self.const(0.0), p])

    def output(self, name, value):
        self.nodes.append(helper.make_node("Identity", [value], [name]))
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, X))

    def mean(self, x, axes):
        if self.opset < 18:
            return self.node("ReduceMean", [x], axes=axes)
        return self.node("ReduceMean", [x, self.const(axes, np.int64, [len(axes)])],
                         keepdims=1)

    def model(self):
        graph = helper.make_graph(
            self.nodes, "decomposed",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, X)],
            self.outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])


def ts14():
    g = Graph(14)
    x = "x"
    # LayerNorm(32), eps 1e-5.
    m = g.mean(x, [-1])
    d = g.node("Sub", [x, m])
    v = g.mean(g.node("Pow", [d, g.const(2.0)]), [-1])
    s = g.node("Sqrt", [g.node("Add", [v, g.const(9.999999747378752e-06)])])
    y = g.node("Mul", [g.node("Div", [d, s]), g.weight([32], 1.0)])
    g.output("layer_norm", g.node("Add", [g.weight([32]), y]))
    # GELU, erf.
    e = g.node("Erf", [g.node("Div", [x, g.const(1.4142135381698608)])])
    a = g.node("Add", [e, g.const(1.0)])
    g.output("gelu_erf", g.node("Mul", [g.node("Mul", [x, a]), g.const(0.5)]))
    # GELU, tanh.
    cube = g.node("Mul", [x, g.node("Mul", [x, x])])
    p = g.node("Add", [x, g.node("Mul", [g.const(0.044714998453855515), cube])])
    t = g.node("Tanh", [g.node("Mul", [g.const(0.7978845834732056), p])])
    a = g.node("Add", [g.const(1.0), t])
    g.output("gelu_tanh", g.node("Mul", [g.const(0.5), g.node("Mul", [x, a])]))
    # Hand-written RMSNorm, eps 1e-6.
    v = g.mean(g.node("Pow", [x, g.const(2.0)]), [-1])
    r = g.node("Div", [g.const(1.0), g.node("Sqrt", [g.node("Add", [v, g.const(1e-6)])])])
    g.output("rms_norm", g.node("Mul", [g.node("Mul", [x, r]), g.weight([32], 1.0)]))
    # Hand-written attention.
    q, k, v = g.heads(x), g.heads(x), g.heads(x)
    kt = g.node("Transpose", [k], perm=[0, 1, 3, 2])
    s = g.node("Div", [g.node("MatMul", [q, kt]), g.const(np.sqrt(8.0))])
    p = g.node("Softmax", [s], axis=-1)
    g.output("attention", g.merge(g.node("MatMul", [p, v])))
    # SDPA with a -inf mask that hides batch 1 whole, and its guard.
    q, k, v = g.heads(x), g.heads(x, (0, 2, 3, 1)), g.heads(x)
    quarter = 8.0 ** -0.25
    qs = g.node("Mul", [q, g.const(quarter)])
    ks = g.node("Mul", [k, g.const(quarter)])
    s = g.node("Add", [g.node("MatMul", [qs, ks]), g.mask(-np.inf, 1)])
    p = g.guarded(g.node("Softmax", [s], axis=-1))
    g.output("sdpa_hidden", g.merge(g.node("MatMul", [p, v])))
    return g.model()


def dyn18():
    g = Graph(18)
    x = "x"
    # torch.nn.RMSNorm(32, eps=1e-6).
    v = g.mean(g.node("Pow", [x, g.const(2.0)]), [2])
    r = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [v, g.const(1e-6)])])])
    g.output("rms_norm", g.node("Mul", [g.node("Mul", [x, r]), g.weight([32], 1.0)]))
    # GELU, erf.
    e = g.node("Erf", [g.node("Div", [x, g.const(1.4142135381698608)])])
    a = g.node("Add", [e, g.const(1.0)])
    g.output("gelu_erf", g.node("Mul", [x, g.node("Mul", [g.const(0.5), a])]))
    # gelu_new.
    half_x = g.node("Mul", [x, g.const(0.5)])
    p = g.node("Add", [x, g.node("Mul", [g.node("Pow", [x, g.const(3.0)]),
                                         g.const(0.044714998453855515)])])
    t = g.node("Tanh", [g.node("Mul", [p, g.const(0.7978845834732056)])])
    g.output("gelu_new", g.node("Mul", [half_x, g.node("Add", [t, g.const(1.0)])]))
    # SiLU.
    g.output("silu", g.node("Mul", [x, g.node("Sigmoid", [x])]))
    # Eager attention with a finite mask.
    f32min = float(np.finfo(np.float32).min)
    q, k, v = g.heads(x), g.heads(x, (0, 2, 3, 1)), g.heads(x)
    s = g.node("Mul", [g.node("MatMul", [q, k]), g.const(8.0 ** -0.5)])
    p = g.node("Softmax", [g.node("Add", [s, g.mask(f32min)])], axis=-1)
    g.output("eager", g.merge(g.node("MatMul", [p, v])))
    # SDPA behind the finite mask: the guard never fires.
    q, k, v = g.heads(x), g.heads(x, (0, 2, 3, 1)), g.heads(x)
    quarter = 8.0 ** -0.25
    s = g.node("MatMul", [g.node("Mul", [q, g.const(quarter)]),
                          g.node("Mul", [k, g.const(quarter)])])
    p = g.guarded(g.node("Softmax", [g.node("Add", [s, g.mask(f32min)])], axis=-1))
    g.output("sdpa", g.merge(g.node("MatMul", [p, v])))
    return g.model()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build in (("ts14", ts14), ("dyn18", dyn18)):
        model = build()
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
