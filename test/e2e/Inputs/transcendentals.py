"""Writes a model of transcendental functions and its numpy references.

  transcendentals.py OUTDIR

OUTDIR/m.onnx takes x [64, 1024] (seeded, spread over [-12, 12]) and
returns Erf(x), Exp(x), Tanh(x), Sigmoid(x), Log(|x| + 1e-3), Softmax(x),
the GELU of x and its tanh form with Pow(x, 3) (GPT-2's), the functions
the CPU pipeline computes with polynomial approximations and products. OUTDIR/input_0.npy and output_*.npy hold the
input and the outputs numpy (and math.erf) compute in float64.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    f = TensorProto.FLOAT
    shape = [64, 1024]
    consts = {"eps": 1e-3, "one": 1.0, "half": 0.5, "sqrt2": math.sqrt(2.0),
              "three": 3.0, "c": 0.044715, "k": math.sqrt(2.0 / math.pi)}
    nodes = [
        helper.make_node("Erf", ["x"], ["erf"]),
        helper.make_node("Exp", ["x"], ["exp"]),
        helper.make_node("Tanh", ["x"], ["tanh"]),
        helper.make_node("Sigmoid", ["x"], ["sigmoid"]),
        helper.make_node("Abs", ["x"], ["abs"]),
        helper.make_node("Add", ["abs", "eps"], ["abs_eps"]),
        helper.make_node("Log", ["abs_eps"], ["log"]),
        helper.make_node("Softmax", ["x"], ["softmax"], axis=-1),
        helper.make_node("Div", ["x", "sqrt2"], ["g0"]),
        helper.make_node("Erf", ["g0"], ["g1"]),
        helper.make_node("Add", ["g1", "one"], ["g2"]),
        helper.make_node("Mul", ["x", "g2"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["gelu"]),
        helper.make_node("Pow", ["x", "three"], ["t0"]),
        helper.make_node("Mul", ["t0", "c"], ["t1"]),
        helper.make_node("Add", ["x", "t1"], ["t2"]),
        helper.make_node("Mul", ["t2", "k"], ["t3"]),
        helper.make_node("Tanh", ["t3"], ["t4"]),
        helper.make_node("Add", ["t4", "one"], ["t5"]),
        helper.make_node("Mul", ["x", "t5"], ["t6"]),
        helper.make_node("Mul", ["t6", "half"], ["gelu_tanh"]),
    ]
    outputs = ["erf", "exp", "tanh", "sigmoid", "log", "softmax", "gelu",
               "gelu_tanh"]
    graph = helper.make_graph(
        nodes, "transcendentals",
        [helper.make_tensor_value_info("x", f, shape)],
        [helper.make_tensor_value_info(o, f, shape) for o in outputs],
        initializer=[numpy_helper.from_array(np.array(v, np.float32), k)
                     for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))

    rng = np.random.default_rng(5)
    x = rng.uniform(-12.0, 12.0, shape).astype(np.float32)
    np.save(os.path.join(out, "input_0.npy"), x)
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    e = np.exp(xd - xd.max(axis=-1, keepdims=True))
    refs = [erf(xd), np.exp(xd), np.tanh(xd), 1.0 / (1.0 + np.exp(-xd)),
            np.log(np.abs(xd) + np.float64(np.float32(1e-3))),
            e / e.sum(axis=-1, keepdims=True),
            0.5 * xd * (1.0 + erf(xd / np.float64(np.float32(math.sqrt(2.0))))),
            0.5 * xd * (1.0 + np.tanh(np.float64(np.float32(math.sqrt(2.0 / math.pi))) *
                                      (xd + np.float64(np.float32(0.044715)) * xd ** 3)))]
    for k, r in enumerate(refs):
        np.save(os.path.join(out, "output_%d.npy" % k), r.astype(np.float32))


if __name__ == "__main__":
    main()
