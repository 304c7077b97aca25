"""Scan as of opset 8 (a batch axis 0; it scans axis 1), with numpy's
results: OUT/m.onnx (batch 3, two scan inputs, the second read in
reverse), OUT/lens.onnx (sequence_lens given) and OUT/dynamic.onnx (no
static batch), and the inputs and expected outputs of m.onnx as .npy."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def model(batch, with_lens=False):
    # body: s' = s + x * r; y = s'
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "r"], ["p"]),
         helper.make_node("Add", ["s", "p"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y"])],
        "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    scan = helper.make_node(
        "Scan", ["lens" if with_lens else "", "s0", "x", "r"], ["s_final", "ys"],
        num_scan_inputs=2, directions=[0, 1], body=body)
    inputs = [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [batch, 2]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4, 2]),
              helper.make_tensor_value_info("r", TensorProto.FLOAT, [batch, 4, 2])]
    if with_lens:
        inputs.insert(0, helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]))
    graph = helper.make_graph(
        [scan], "scan8", inputs,
        [helper.make_tensor_value_info("s_final", TensorProto.FLOAT, [batch, 2]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [batch, 4, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)],
                             ir_version=3)


def main():
    out = sys.argv[1]
    onnx.save(model(3), os.path.join(out, "m.onnx"))
    onnx.save(model(3, with_lens=True), os.path.join(out, "lens.onnx"))
    onnx.save(model("N"), os.path.join(out, "dynamic.onnx"))
    rng = np.random.default_rng(0)
    s0 = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    r = rng.standard_normal((3, 4, 2)).astype(np.float32)
    ys = np.zeros((3, 4, 2), np.float32)
    s = s0.copy()
    for b in range(3):
        for t in range(4):
            s[b] = s[b] + x[b, t] * r[b, 3 - t]
            ys[b, t] = s[b]
    for i, v in enumerate([s0, x, r]):
        np.save(os.path.join(out, "input_%d.npy" % i), v)
    np.save(os.path.join(out, "output_0.npy"), s)
    np.save(os.path.join(out, "output_1.npy"), ys)


main()
