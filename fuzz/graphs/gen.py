#!/usr/bin/env python3
"""Random valid ONNX graphs for differential testing (fuzz/graphs/run.py).

Graph (seed, index) is a pure function of its two numbers: a few float
inputs, then 3-14 nodes drawn from the operators the zoo's models use
(convolutions of every kind, products, pooling, normalizations, reductions,
broadcasting arithmetic, layout and shape ops, the Shape -> Gather ->
Concat -> Reshape chains that exporters write), each node's attributes
drawn within its ONNX schema (opset 17) and every intermediate shape taken
from ONNX's own shape inference. Operators whose result jumps with a tiny
change of their input (comparisons, Floor, ArgMax, casts to integers) read
graph inputs only, so a correct compiler matches the reference within
rounding. Weights are scaled by 1/sqrt(fan-in), and a graph whose reference
outputs are not finite or exceed 1e4 is drawn again (the next attempt of the
same seed), so every graph this writes is one ONNX Runtime runs.

  gen.py OUT.onnx --seed S --index I     write one graph
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 17
MAX_ELEMENTS = 1 << 16
F32 = TensorProto.FLOAT


class Graph:
    """A graph being drawn: nodes, initializers and the float values that
    later nodes may read, each with its static shape."""

    def __init__(self, rng, prefix):
        self.rng, self.prefix = rng, prefix
        self.nodes, self.inits, self.inputs = [], [], []
        self.values = {}  # name -> shape (float values)
        # Graph inputs and values computed exactly from them, in the order
        # they were made (a dict: a set's order of strings changes from one
        # Python process to the next, and the draws that pick from it with
        # it).
        self.exact = {}
        self.count = 0

    def fresh(self, what):
        self.count += 1
        return "%s%s_%d" % (self.prefix, what, self.count)

    def input(self, shape):
        name = self.fresh("in")
        self.inputs.append(helper.make_tensor_value_info(name, F32, shape))
        self.values[name] = list(shape)
        self.exact[name] = None
        return name

    def const(self, array, what="c"):
        name = self.fresh(what)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, shape, fan_in):
        w = self.rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))
        return self.const(w.astype(np.float32), "w")

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64), "i")

    def node(self, op, inputs, outputs=1, **attrs):
        names = [self.fresh(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names,
                                           name=self.fresh("n_" + op), **attrs))
        return names if outputs > 1 else names[0]

    def model(self, outputs):
        outs = [helper.make_tensor_value_info(o, F32, None) for o in outputs]
        graph = helper.make_graph(self.nodes, self.prefix + "graph",
                                  self.inputs, outs, self.inits)
        return helper.make_model(graph,
                                 opset_imports=[helper.make_opsetid("", OPSET)])

    def infer(self, outputs):
        """The shapes ONNX infers for `outputs` (None where unknown), or
        None when the graph is invalid."""
        try:
            m = shape_inference.infer_shapes(self.model(outputs),
                                             strict_mode=True)
        except Exception:
            return None
        known = {v.name: v for v in list(m.graph.value_info) +
                 list(m.graph.output)}
        shapes = []
        for o in outputs:
            t = known[o].type.tensor_type if o in known else None
            if t is None or not t.HasField("shape") or any(
                    not d.HasField("dim_value") for d in t.shape.dim):
                return None
            shapes.append([d.dim_value for d in t.shape.dim])
        return shapes

    def add(self, out, exact=False):
        """Keeps the nodes just added if ONNX infers a static shape of a
        modest size for `out`; otherwise removes them. Returns success."""
        shapes = self.infer([out])
        if shapes is None or not shapes[0] or min(shapes[0]) < 1 or \
                int(np.prod(shapes[0])) > MAX_ELEMENTS:
            return False
        self.values[out] = shapes[0]
        if exact:
            self.exact[out] = None
        return True


def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def broadcast_partner(rng, shape):
    """A shape that broadcasts to `shape`: dims kept or set to 1, leading
    dims maybe dropped."""
    out = [d if rng.random() < 0.6 else 1 for d in shape]
    drop = int(rng.integers(len(shape) + 1)) if rng.random() < 0.4 else 0
    return out[drop:] or [1]


# Each rule reads values of g and appends nodes; it returns the new value's
# name, or None when it does not apply to the drawn operand.

def unary(g, x):
    op = pick(g.rng, ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Erf",
                      "LeakyRelu", "Elu", "HardSigmoid", "HardSwish",
                      "Softsign", "Sin", "Cos", "Clip", "Selu", "Softplus",
                      "Exp", "Sqrt", "Log", "Reciprocal", "Identity"])
    if op == "LeakyRelu":
        return g.node(op, [x], alpha=float(g.rng.uniform(0.01, 0.3)))
    if op == "Elu":
        return g.node(op, [x], alpha=float(g.rng.uniform(0.5, 1.5)))
    if op == "HardSigmoid":
        return g.node(op, [x], alpha=float(g.rng.uniform(0.1, 0.3)),
                      beta=0.5)
    if op == "Clip":
        lo = float(g.rng.uniform(-1, 0))
        ins = [x, g.const(np.array(lo, np.float32))]
        if g.rng.random() < 0.7:
            ins.append(g.const(np.array(lo + g.rng.uniform(0.2, 2),
                                        np.float32)))
        return g.node(op, ins)
    if op == "Exp":  # of a bounded value
        return g.node(op, [g.node("Tanh", [x])])
    if op in ("Sqrt", "Log", "Reciprocal"):  # of a value >= 0.5
        shift = g.const(np.array(0.5, np.float32))
        return g.node(op, [g.node("Add", [g.node("Abs", [x]), shift])])
    return g.node(op, [x])


def binary(g, x):
    shape = g.values[x]
    op = pick(g.rng, ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow",
                      "Sum", "Mean"])
    same = [v for v, s in g.values.items() if s == shape and v != x]
    if same and g.rng.random() < 0.5:
        y = pick(g.rng, same)
    else:
        y = g.const(g.rng.uniform(-1, 1, broadcast_partner(g.rng, shape))
                    .astype(np.float32))
    if g.rng.random() < 0.5:
        x, y = y, x
    if op == "Div":
        y = g.node("Add", [g.node("Abs", [y]),
                           g.const(np.array(0.5, np.float32))])
    if op == "Pow":
        x = g.node("Add", [g.node("Abs", [x]),
                           g.const(np.array(0.5, np.float32))])
        y = g.const(np.array(pick(g.rng, [2.0, 0.5, 3.0, -1.0]), np.float32))
    return g.node(op, [x, y])


def matmul(g, x):
    shape = g.values[x]
    if g.rng.random() < 0.3 and len(shape) >= 2:  # x @ x^T, attention-like
        perm = list(range(len(shape)))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return g.node("MatMul", [x, g.node("Transpose", [x], perm=perm)])
    k, n = shape[-1], int(g.rng.integers(1, 80))
    w = g.weight([k, n] if len(shape) > 1 or g.rng.random() < 0.5 else [k],
                 k)
    return g.node("MatMul", [x, w])


def gemm(g, x):
    shape = g.values[x]
    if len(shape) != 2:
        return None
    ta, tb = int(g.rng.integers(2)), int(g.rng.integers(2))
    m, k = (shape[1], shape[0]) if ta else shape
    n = int(g.rng.integers(1, 24))
    w = g.weight([n, k] if tb else [k, n], k)
    ins = [x, w]
    if g.rng.random() < 0.7:
        ins.append(g.const(g.rng.uniform(-1, 1, pick(g.rng, [[n], [1], [m, n],
                                                               [m, 1]]))
                           .astype(np.float32)))
    return g.node("Gemm", ins, transA=ta, transB=tb,
                  alpha=float(pick(g.rng, [1.0, 0.5])),
                  beta=float(pick(g.rng, [1.0, 2.0])))


def window_pads(rng, k):
    """Pads for a window of sizes `k`: less than the window on each side,
    the same at both ends."""
    return [int(rng.integers(0, kk)) if kk > 1 else 0 for kk in k] * 2


def conv(g, x):
    shape = g.values[x]
    if len(shape) not in (3, 4):
        return None
    rng, c, sp = g.rng, shape[1], shape[2:]
    groups = [d for d in range(1, c + 1) if c % d == 0]
    group = pick(rng, groups) if rng.random() < 0.5 else 1
    f = group * int(rng.integers(1, max(2, 64 // group) + 1))
    if rng.random() < 0.2 and group == c:
        f = c  # depthwise
    k = [int(rng.integers(1, min(s, 3) + 1 if rng.random() < 0.8 else
                          min(s, 5) + 1)) for s in sp]
    attrs = dict(kernel_shape=k)
    if rng.random() < 0.5:
        attrs["strides"] = [int(rng.integers(1, 3)) for _ in sp]
    if rng.random() < 0.3:
        attrs["dilations"] = [int(rng.integers(1, 3)) for _ in sp]
    if rng.random() < 0.3:
        attrs["auto_pad"] = pick(rng, ["SAME_UPPER", "SAME_LOWER", "VALID"])
    elif rng.random() < 0.6:
        attrs["pads"] = window_pads(rng, k)
    if group > 1:
        attrs["group"] = group
    w = g.weight([f, c // group] + k, c // group * int(np.prod(k)))
    ins = [x, w]
    if rng.random() < 0.6:
        ins.append(g.const(rng.uniform(-0.5, 0.5, [f]).astype(np.float32)))
    return g.node("Conv", ins, **attrs)


def conv_transpose(g, x):
    shape = g.values[x]
    if len(shape) not in (3, 4):
        return None
    rng, c, sp = g.rng, shape[1], shape[2:]
    group = pick(rng, [d for d in (1, 2, c) if c % d == 0])
    f = group * int(rng.integers(1, 5))
    k = [int(rng.integers(1, 5)) for _ in sp]
    s = [int(rng.integers(1, 3)) for _ in sp]
    attrs = dict(kernel_shape=k, strides=s)
    if rng.random() < 0.4:
        attrs["pads"] = window_pads(rng, k)
    if rng.random() < 0.3:
        attrs["output_padding"] = [int(rng.integers(0, ss)) for ss in s]
    if group > 1:
        attrs["group"] = group
    w = g.weight([c, f // group] + k, c // group * int(np.prod(k)))
    ins = [x, w]
    if rng.random() < 0.5:
        ins.append(g.const(rng.uniform(-0.5, 0.5, [f]).astype(np.float32)))
    return g.node("ConvTranspose", ins, **attrs)


def pool(g, x):
    shape = g.values[x]
    if len(shape) not in (3, 4):
        return None
    rng, sp = g.rng, shape[2:]
    op = pick(rng, ["MaxPool", "AveragePool", "GlobalAveragePool",
                    "GlobalMaxPool", "LpPool"])
    if op.startswith("Global"):
        return g.node(op, [x])
    k = [int(rng.integers(1, min(s, 3) + 1)) for s in sp]
    attrs = dict(kernel_shape=k)
    if rng.random() < 0.7:
        attrs["strides"] = [int(rng.integers(1, 3)) for _ in sp]
    if rng.random() < 0.5:
        attrs["pads"] = window_pads(rng, k)
    if op != "LpPool" and rng.random() < 0.3:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and rng.random() < 0.5:
        attrs["count_include_pad"] = 1
    if op == "MaxPool" and rng.random() < 0.2:
        attrs["dilations"] = [int(rng.integers(1, 3)) for _ in sp]
    return g.node(op, [x], **attrs)


def norm(g, x):
    shape = g.values[x]
    rng = g.rng
    op = pick(rng, ["BatchNormalization", "InstanceNormalization",
                    "LayerNormalization", "Softmax", "LogSoftmax",
                    "LpNormalization"])
    if op in ("BatchNormalization", "InstanceNormalization"):
        if len(shape) < 3:
            return None
        c = shape[1]
        u = lambda lo, hi: g.const(rng.uniform(lo, hi, [c]).astype(np.float32))
        if op == "InstanceNormalization":
            return g.node(op, [x, u(0.5, 1.5), u(-0.5, 0.5)], epsilon=1e-5)
        return g.node(op, [x, u(0.5, 1.5), u(-0.5, 0.5), u(-0.5, 0.5),
                           u(0.5, 2)], epsilon=1e-5)
    axis = int(rng.integers(-len(shape), len(shape)))
    if op == "LayerNormalization":
        inner = shape[axis:]
        ins = [x, g.const(rng.uniform(0.5, 1.5, inner).astype(np.float32))]
        if rng.random() < 0.7:
            ins.append(g.const(rng.uniform(-0.5, 0.5, inner)
                               .astype(np.float32)))
        return g.node(op, ins, axis=axis, epsilon=1e-5)
    if op == "LpNormalization":
        return g.node(op, [x], axis=axis, p=int(rng.integers(1, 3)))
    return g.node(op, [x], axis=axis)


def reduce(g, x):
    shape = g.values[x]
    rng = g.rng
    op = pick(rng, ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                    "ReduceL2", "ReduceL1", "ReduceSumSquare",
                    "ReduceLogSumExp"])
    r = len(shape)
    axes = sorted({int(a) % r for a in rng.integers(-r, r, int(
        rng.integers(1, r + 1)))})
    keep = int(rng.integers(2))
    if rng.random() < 0.15:
        axes = None  # every axis
    if op == "ReduceSum":  # opset 13+: axes are an input
        ins = [x] + ([g.ints(axes)] if axes is not None else [])
        return g.node(op, ins, keepdims=keep)
    if axes is None:
        return g.node(op, [x], keepdims=keep)
    return g.node(op, [x], axes=axes, keepdims=keep)


def layout(g, x):
    shape = g.values[x]
    rng, r = g.rng, len(shape)
    op = pick(rng, ["Transpose", "Reshape", "Flatten", "Unsqueeze",
                    "Squeeze", "Expand", "Tile", "DepthToSpace",
                    "SpaceToDepth", "ShapeReshape"])
    if op == "Transpose":
        return g.node(op, [x], perm=[int(p) for p in rng.permutation(r)])
    if op == "Reshape":
        n = int(np.prod(shape))
        dims = []
        while n > 1 and len(dims) < 4:
            d = pick(rng, [q for q in range(1, n + 1) if n % q == 0])
            dims.append(d)
            n //= d
        dims.append(n)
        dims = [int(d) for d in rng.permutation(dims)]
        if rng.random() < 0.4:
            dims[int(rng.integers(len(dims)))] = -1
        return g.node(op, [x, g.ints(dims)])
    if op == "ShapeReshape":  # the exporters' Shape -> Gather -> Concat
        if r < 2:
            return None
        s = g.node("Shape", [x])
        a = int(rng.integers(r - 1))
        parts = [g.node("Gather", [s, g.ints([i])], axis=0)
                 for i in range(a)]
        parts.append(g.ints([-1]))
        parts += [g.node("Gather", [s, g.ints([i])], axis=0)
                  for i in range(a + 2, r)]
        return g.node("Reshape", [x, g.node("Concat", parts, axis=0)])
    if op == "Flatten":
        return g.node(op, [x], axis=int(rng.integers(-r, r + 1)))
    if op == "Unsqueeze":
        return g.node(op, [x, g.ints([int(rng.integers(-r - 1, r + 1))])])
    if op == "Squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones or r == 1:
            return None
        return g.node(op, [x, g.ints([pick(rng, ones)])])
    if op == "Expand":
        target = [d if d != 1 or rng.random() < 0.5 else
                  int(rng.integers(2, 4)) for d in shape]
        if rng.random() < 0.3:
            target = [int(rng.integers(1, 3))] + target
        return g.node(op, [x, g.ints(target)])
    if op == "Tile":
        return g.node(op, [x, g.ints([int(rng.integers(1, 3))
                                      for _ in shape])])
    if r != 4:
        return None
    b = 2
    if op == "DepthToSpace":
        if shape[1] % 4:
            return None
        return g.node(op, [x], blocksize=b,
                      mode=pick(rng, ["DCR", "CRD"]))
    if shape[2] % b or shape[3] % b:
        return None
    return g.node(op, [x], blocksize=b)


def select(g, x):
    shape = g.values[x]
    rng, r = g.rng, len(shape)
    op = pick(rng, ["Slice", "Gather", "Split", "Concat", "Pad", "Resize",
                    "CumSum", "Where", "Einsum"])
    a = int(rng.integers(r))
    d = shape[a]
    if op == "Slice":
        step = pick(rng, [1, 1, 2, -1, -2])
        lo, hi = sorted(int(v) for v in rng.integers(0, d + 1, 2))
        if lo == hi:
            hi = min(d, lo + 1)
            lo = hi - 1
        starts, ends = (lo, hi) if step > 0 else (hi - 1, lo - 1 if lo else
                                                  -d - 1)
        return g.node(op, [x, g.ints([starts]), g.ints([ends]),
                           g.ints([a if rng.random() < 0.5 else a - r]),
                           g.ints([step])])
    if op == "Gather":
        idx = rng.integers(-d, d, pick(rng, [[], [2], [3, 2]]))
        return g.node(op, [x, g.const(np.array(idx, np.int64), "i")], axis=a)
    if op == "Split":
        if d < 2:
            return None
        cut = int(rng.integers(1, d))
        outs = g.node(op, [x, g.ints([cut, d - cut])], outputs=2, axis=a)
        return outs[int(rng.integers(2))]
    if op == "Concat":
        others = [v for v, s in g.values.items()
                  if len(s) == r and all(s[i] == shape[i]
                                         for i in range(r) if i != a)]
        ins = [x, pick(rng, others)]
        if rng.random() < 0.5:
            cs = list(shape)
            cs[a] = int(rng.integers(1, 4))
            ins.append(g.const(rng.uniform(-1, 1, cs).astype(np.float32)))
        return g.node(op, [ins[int(i)] for i in rng.permutation(len(ins))],
                      axis=a)
    if op == "Pad":
        mode = pick(rng, ["constant", "reflect", "edge"])
        hi = 3 if mode != "reflect" else 0
        pads = [int(rng.integers(0, min(3, max(1, s - 1 if mode == "reflect"
                                                 else hi)) + 1))
                for s in shape] * 2
        if mode == "reflect":
            pads = [min(p, s - 1) for p, s in zip(pads, shape * 2)]
        ins = [x, g.ints(pads)]
        if mode == "constant" and rng.random() < 0.5:
            ins.append(g.const(np.array(rng.uniform(-1, 1), np.float32)))
        return g.node(op, ins, mode=mode)
    if op == "Resize":
        if r < 3:
            return None
        mode = pick(rng, ["nearest", "linear"])
        scales = [1.0, 1.0] + [float(pick(rng, [1, 2, 3, 0.5]))
                               for _ in shape[2:]]
        attrs = dict(mode=mode)
        if mode == "nearest":
            attrs["coordinate_transformation_mode"] = pick(
                rng, ["asymmetric", "half_pixel"])
            attrs["nearest_mode"] = "floor"
        else:
            modes = ["half_pixel", "asymmetric", "pytorch_half_pixel"]
            # align_corners divides by the resized length less one: ONNX's
            # reference takes it unrounded (in * scale), ONNX Runtime
            # rounded, so they agree only where in * scale is whole.
            if all(float(d * sc).is_integer()
                   for d, sc in zip(shape, scales)):
                modes.append("align_corners")
            attrs["coordinate_transformation_mode"] = pick(rng, modes)
        return g.node(op, [x, "", g.const(np.array(scales, np.float32))],
                      **attrs)
    if op == "CumSum":
        return g.node(op, [x, g.const(np.array(a, np.int64), "i")],
                      exclusive=int(rng.integers(2)),
                      reverse=int(rng.integers(2)))
    if op == "Where":
        exact = [v for v in g.exact if g.values[v] == shape]
        if not exact:
            return None
        cond = g.node(pick(rng, ["Less", "Greater", "LessOrEqual"]),
                      [pick(rng, exact),
                       g.const(np.array(rng.uniform(-0.5, 0.5), np.float32))])
        y = g.const(rng.uniform(-1, 1, broadcast_partner(rng, shape))
                    .astype(np.float32))
        return g.node(op, [cond, x, y] if rng.random() < 0.5 else
                      [cond, y, x])
    if r > 4:
        return None
    letters = "abcd"[:r]  # contract the last axis with a weight
    n = int(rng.integers(1, 9))
    return g.node("Einsum", [x, g.weight([shape[-1], n], shape[-1])],
                  equation="%s,%sz->%sz" % (letters, letters[-1],
                                            letters[:-1]))


def discrete(g, x):
    """Ops whose result jumps with its input: on exact values only."""
    exact = [v for v in g.exact if v in g.values]
    x = pick(g.rng, exact)
    shape = g.values[x]
    op = pick(g.rng, ["Floor", "Ceil", "Round", "Sign", "CastRound",
                      "ArgMax", "ReduceMaxExact"])
    if op == "CastRound":
        i = g.node("Cast", [g.node("Mul", [x, g.const(np.array(
            4.0, np.float32))])], to=TensorProto.INT32)
        return g.node("Cast", [i], to=TensorProto.FLOAT)
    if op == "ArgMax":
        a = int(g.rng.integers(len(shape)))
        i = g.node(op, [x], axis=a, keepdims=int(g.rng.integers(2)),
                   select_last_index=int(g.rng.integers(2)))
        return g.node("Cast", [i], to=TensorProto.FLOAT)
    if op == "ReduceMaxExact":
        return g.node("ReduceMax", [x], axes=[int(g.rng.integers(
            len(shape)))], keepdims=1)
    return g.node(op, [x])


def integer(g, x):
    """An integer or boolean chain on an exact value, cast back to float:
    exact arithmetic, so any difference is a lowering's."""
    rng = g.rng
    x = pick(rng, [v for v in g.exact if v in g.values])
    shape = g.values[x]
    if rng.random() < 0.3:  # booleans
        a = g.node("Less", [x, g.const(np.array(rng.uniform(-0.5, 0.5),
                                                np.float32))])
        b = g.node("Greater", [x, g.const(rng.uniform(-1, 1, broadcast_partner(
            rng, shape)).astype(np.float32))])
        op = pick(rng, ["And", "Or", "Xor", "Equal"])
        c = g.node(op, [a, b])
        if rng.random() < 0.5:
            c = g.node("Not", [c])
        return g.node("Cast", [c], to=TensorProto.FLOAT)
    to = pick(rng, [TensorProto.INT32, TensorProto.INT64])
    np_t = np.int32 if to == TensorProto.INT32 else np.int64
    i = g.node("Cast", [g.node("Mul", [x, g.const(np.array(
        16.0, np.float32))])], to=to)
    for _ in range(int(rng.integers(1, 4))):
        op = pick(rng, ["Add", "Sub", "Mul", "Div", "Mod", "Max", "Min",
                        "Abs", "Neg", "ModFmod", "ReduceSum", "CumSum"])
        if op in ("Abs", "Neg"):
            i = g.node(op, [i])
        elif op == "ReduceSum":
            i = g.node(op, [i, g.ints([int(rng.integers(len(shape)))])],
                       keepdims=1)
        elif op == "CumSum":
            i = g.node(op, [i, g.const(np.array(
                int(rng.integers(len(shape))), np.int64), "i")])
        else:
            c = rng.integers(1, 7, broadcast_partner(rng, shape))
            if op != "Div" and op != "Mod" and op != "ModFmod":
                c = c * rng.choice([-1, 1], c.shape)
            elif rng.random() < 0.5:
                c = -c
            c = g.const(c.astype(np_t), "i")
            if op == "ModFmod":
                i = g.node("Mod", [i, c], fmod=1)
            else:
                i = g.node(op, [i, c])
    return g.node("Cast", [i], to=TensorProto.FLOAT)


def misc(g, x):
    shape = g.values[x]
    rng, r = g.rng, len(shape)
    op = pick(rng, ["PRelu", "ThresholdedRelu", "Shrink", "Celu", "LRN",
                    "MeanVarianceNormalization", "TopK", "GatherElements",
                    "Trilu", "Recurrent", "Dropout", "ConstantOfShape"])
    if op == "PRelu":
        return g.node(op, [x, g.const(rng.uniform(0, 0.5, broadcast_partner(
            rng, shape)[-min(r, 3):] if r > 1 else [1]).astype(np.float32))])
    if op == "ThresholdedRelu":
        return g.node(op, [x], alpha=float(rng.uniform(0, 0.5)))
    if op == "Shrink":
        return g.node(op, [x], lambd=float(rng.uniform(0, 0.5)),
                      bias=float(rng.uniform(0, 0.5)))
    if op == "Celu":
        return g.node(op, [x], alpha=float(rng.uniform(0.5, 2)))
    if op == "LRN":
        if r != 4:
            return None
        return g.node(op, [x], size=int(pick(rng, [1, 3, 5])),
                      alpha=1e-3, beta=0.75, bias=1.0)
    if op == "MeanVarianceNormalization":
        if r != 4:
            return None
        return g.node(op, [x], axes=pick(rng, [[0, 2, 3], [2, 3], [1]]))
    a = int(rng.integers(r))
    if op == "TopK":
        k = int(rng.integers(1, shape[a] + 1))
        vals, _ = g.node(op, [x, g.ints([k])], outputs=2, axis=a,
                         largest=int(rng.integers(2)))
        return vals
    if op == "GatherElements":
        idx = [int(rng.integers(1, shape[a] + 2)) if i == a else d
               for i, d in enumerate(shape)]
        return g.node(op, [x, g.const(rng.integers(
            -shape[a], shape[a], idx).astype(np.int64), "i")], axis=a)
    if op == "Trilu":
        if r < 2:
            return None
        ins = [x] + ([g.const(np.array(int(rng.integers(-2, 3)), np.int64),
                              "i")] if rng.random() < 0.5 else [])
        return g.node(op, ins, upper=int(rng.integers(2)))
    if op == "Dropout":
        return g.node(op, [x])
    if op == "ConstantOfShape":  # a value filled to x's shape, added
        filled = g.node(op, [g.node("Shape", [x])], value=helper.make_tensor(
            "v", F32, [1], [float(rng.uniform(-1, 1))]))
        return g.node("Add", [x, filled])
    if r != 3:  # Recurrent: x as [seq, batch, input]
        return None
    cell = pick(rng, ["RNN", "GRU", "LSTM"])
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[cell]
    dirs = pick(rng, ["forward", "reverse", "bidirectional"])
    nd = 2 if dirs == "bidirectional" else 1
    h, i = int(rng.integers(1, 17)), shape[2]
    ins = [x, g.weight([nd, gates * h, i], i), g.weight([nd, gates * h, h], h)]
    if rng.random() < 0.7:
        ins.append(g.const(rng.uniform(-0.3, 0.3, [nd, 2 * gates * h])
                           .astype(np.float32)))
    attrs = dict(hidden_size=h, direction=dirs)
    if cell == "GRU" and rng.random() < 0.5:
        attrs["linear_before_reset"] = 1
    outs = g.node(cell, ins, outputs=2, **attrs)
    return outs[int(rng.integers(2))]


RULES = [(unary, 4), (binary, 4), (matmul, 2), (gemm, 1), (conv, 3),
         (conv_transpose, 1), (pool, 2), (norm, 2), (reduce, 2),
         (layout, 3), (select, 3), (discrete, 1), (integer, 1), (misc, 2)]
EXACT_RULES = {discrete, integer}


def input_shape(rng):
    kind = pick(rng, ["image", "image", "wide", "seq", "flat", "vol"])
    if kind == "image":
        return [int(rng.integers(1, 3)), int(rng.integers(1, 9)),
                int(rng.integers(3, 13)), int(rng.integers(3, 13))]
    if kind == "wide":  # enough channels for packed, vectorized kernels
        return [1, int(rng.integers(8, 65)), int(rng.integers(4, 17)),
                int(rng.integers(4, 17))]
    if kind == "seq":
        return [int(rng.integers(1, 3)), int(rng.integers(1, 9)),
                int(rng.integers(2, 17))]
    if kind == "flat":
        return [int(rng.integers(1, 9)), int(rng.integers(1, 129))]
    return [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 6)))]


def draw(seed, index, attempt=0, prefix=""):
    """Graph `index` of `seed` (a later `attempt` when the first is not
    usable): returns (model, feeds)."""
    rng = np.random.default_rng([seed, index, attempt])
    g = Graph(rng, prefix)
    first = g.input(input_shape(rng))
    if rng.random() < 0.3:
        g.input(g.values[first] if rng.random() < 0.5 else
                input_shape(rng))
    weights = np.array([w for _, w in RULES], float)
    target = int(rng.integers(3, 15))
    produced, tries = [], 0
    while len(produced) < target and tries < 8 * target:
        tries += 1
        rule = RULES[int(rng.choice(len(RULES), p=weights / weights.sum()))][0]
        recent = produced[-3:] or list(g.values)
        x = pick(rng, recent if rng.random() < 0.7 else list(g.values))
        mark = (len(g.nodes), len(g.inits), g.count)
        out = rule(g, x)
        if out is None or not g.add(out, exact=rule in EXACT_RULES):
            del g.nodes[mark[0]:], g.inits[mark[1]:]
            continue
        produced.append(out)
    if not produced:
        return None
    outputs = [produced[-1]]
    for v in produced[:-1]:
        if rng.random() < 0.25 and len(outputs) < 3:
            outputs.append(v)
    model = g.model(outputs)
    # Graph outputs take their inferred shapes (no value_info is kept).
    for o, shape in zip(model.graph.output, g.infer(outputs)):
        o.CopyFrom(helper.make_tensor_value_info(o.name, F32, shape))
    onnx.checker.check_model(model, full_check=True)
    feeds = {i.name: rng.uniform(-1, 1, [d.dim_value for d in
                                         i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in model.graph.input}
    return model, feeds


def reference(model, feeds):
    """ONNX Runtime's outputs (basic graph optimizations), or None."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, feeds)
    except Exception:
        return None


def usable(outs):
    return outs is not None and all(
        np.all(np.isfinite(o)) and (o.size == 0 or np.abs(o).max() < 1e4)
        for o in outs)


def graph(seed, index, prefix=""):
    """The first usable attempt of graph (seed, index): (model, feeds,
    reference outputs)."""
    for attempt in range(20):
        drawn = draw(seed, index, attempt, prefix)
        if drawn is None:
            continue
        outs = reference(*drawn)
        if usable(outs):
            return drawn + (outs,)
    raise RuntimeError("graph %d/%d: no usable attempt" % (seed, index))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index", type=int, default=0)
    a = ap.parse_args()
    model, _, _ = graph(a.seed, a.index)
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
