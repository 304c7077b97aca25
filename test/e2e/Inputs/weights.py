"""Writes a model of contractions with constant weights and its numpy
reference outputs.

  weights.py OUTDIR

OUTDIR/m.onnx takes x [5, 40] and z [3, 7, 40] and returns
  MatMul(x, W1 [40, 48])              (n = 48: three 16-wide panels)
  Gemm(x, W2 [24, 40], C, transB=1)   (n = 24: three 8-wide panels, and
                                       the transpose folded into them)
  MatMul(z, W3 [40, 32])              (a batched left-hand side)
  MatMul(x, W4 [40, 20])              (n = 20: no vector width divides it)
  MatMul(x, W5 [40, 16])              (n = 16: one register tile wide)
  Clip(Conv(img [1, 4, 9, 9], Wc [16, 4, 3, 3], bc, pads 1), 0, 6)
  Sigmoid(MatMul(x, W6 [40, 32]))
the cases kiln-pack-weights packs and those it leaves alone, and
activations that kiln-cpu-tile-and-vectorize applies to the register
tiles of the contraction before them. OUTDIR/
input_*.npy and output_*.npy hold seeded inputs and the outputs numpy
computes in float64.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    w = {"W1": (40, 48), "W2": (24, 40), "C": (24,), "W3": (40, 32),
         "W4": (40, 20), "W5": (40, 16), "Wc": (16, 4, 3, 3), "bc": (16,),
         "W6": (40, 32)}
    w = {k: rng.standard_normal(s).astype(np.float32) for k, s in w.items()}
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["y1"]),
        helper.make_node("Gemm", ["x", "W2", "C"], ["y2"], transB=1),
        helper.make_node("MatMul", ["z", "W3"], ["y3"]),
        helper.make_node("MatMul", ["x", "W4"], ["y4"]),
        helper.make_node("MatMul", ["x", "W5"], ["y5"]),
        helper.make_node("Conv", ["img", "Wc", "bc"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["conv", "zero", "six"], ["y6"]),
        helper.make_node("MatMul", ["x", "W6"], ["mm6"]),
        helper.make_node("Sigmoid", ["mm6"], ["y7"]),
    ]
    graph = helper.make_graph(
        nodes, "weights",
        [helper.make_tensor_value_info("x", f, [5, 40]),
         helper.make_tensor_value_info("z", f, [3, 7, 40]),
         helper.make_tensor_value_info("img", f, [1, 4, 9, 9])],
        [helper.make_tensor_value_info("y1", f, [5, 48]),
         helper.make_tensor_value_info("y2", f, [5, 24]),
         helper.make_tensor_value_info("y3", f, [3, 7, 32]),
         helper.make_tensor_value_info("y4", f, [5, 20]),
         helper.make_tensor_value_info("y5", f, [5, 16]),
         helper.make_tensor_value_info("y6", f, [1, 16, 9, 9]),
         helper.make_tensor_value_info("y7", f, [5, 32])],
        initializer=[numpy_helper.from_array(v, k) for k, v in w.items()] +
        [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(6, np.float32), "six")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))

    x = rng.standard_normal((5, 40)).astype(np.float32)
    z = rng.standard_normal((3, 7, 40)).astype(np.float32)
    np.save(os.path.join(out, "input_0.npy"), x)
    img = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    np.save(os.path.join(out, "input_1.npy"), z)
    np.save(os.path.join(out, "input_2.npy"), img)
    d = {k: v.astype(np.float64) for k, v in w.items()}
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    refs = [xd @ d["W1"], xd @ d["W2"].T + d["C"], zd @ d["W3"],
            xd @ d["W4"], xd @ d["W5"]]
    padded = np.pad(img.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 16, 9, 9)) + d["bc"][None, :, None, None]
    for kh in range(3):
        for kw in range(3):
            conv += np.einsum("nchw,fc->nfhw", padded[:, :, kh:kh + 9, kw:kw + 9],
                              d["Wc"][:, :, kh, kw])
    refs += [np.clip(conv, 0.0, 6.0), 1.0 / (1.0 + np.exp(-(xd @ d["W6"])))]
    for k, r in enumerate(refs):
        np.save(os.path.join(out, "output_%d.npy" % k), r.astype(np.float32))


if __name__ == "__main__":
    main()
