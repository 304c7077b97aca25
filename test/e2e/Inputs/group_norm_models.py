#!/usr/bin/env python3
"""Writes two models of GroupNormalization and their expected outputs from
ONNX's reference implementation (onnx.reference), with seeded inputs:

  OUT/m18.onnx  opset 18: scale and bias per group
  OUT/m21.onnx  opset 21: scale and bias per channel

each on x [2, 6, 5, 4] with 3 groups (output y4, epsilon 1e-3) and on
z [2, 8, 10] with 4 groups (output y3, the default epsilon), inputs
OUT/x.npy and OUT/z.npy, expected outputs OUT/mNN_y4.npy and OUT/mNN_y3.npy.

  group_norm_models.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def model(opset, params):
    rng = np.random.default_rng(opset)
    inits = []

    def param(name, n):
        inits.append(numpy_helper.from_array(
            rng.standard_normal(n).astype(np.float32), name))
        return name

    g4, g3 = (3, 4) if params == "group" else (6, 8)
    nodes = [
        helper.make_node("GroupNormalization",
                         ["x", param("s4", g4), param("b4", g4)], ["y4"],
                         num_groups=3, epsilon=1e-3),
        helper.make_node("GroupNormalization",
                         ["z", param("s3", g3), param("b3", g3)], ["y3"],
                         num_groups=4),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "group_norm",
        [helper.make_tensor_value_info("x", f, [2, 6, 5, 4]),
         helper.make_tensor_value_info("z", f, [2, 8, 10])],
        [helper.make_tensor_value_info("y4", f, [2, 6, 5, 4]),
         helper.make_tensor_value_info("y3", f, [2, 8, 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    # onnx's checker refuses GroupNormalization-18 as deprecated (by 21,
    # which changed the scale and bias to per channel); models exported
    # before then hold it all the same.
    if opset >= 21:
        onnx.checker.check_model(m, full_check=True)
    return m


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    # Channels with different means and spreads, so that a wrong grouping
    # shows.
    x = (rng.standard_normal((2, 6, 5, 4)) * np.arange(1, 7).reshape(1, 6, 1, 1)
         + np.arange(6).reshape(1, 6, 1, 1)).astype(np.float32)
    z = (rng.standard_normal((2, 8, 10)) * np.arange(1, 9).reshape(1, 8, 1)
         - np.arange(8).reshape(1, 8, 1)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "z.npy"), z)
    for opset, params in ((18, "group"), (21, "channel")):
        m = model(opset, params)
        name = "m%d" % opset
        onnx.save(m, os.path.join(out, name + ".onnx"))
        y4, y3 = ReferenceEvaluator(m).run(None, {"x": x, "z": z})
        np.save(os.path.join(out, name + "_y4.npy"), y4)
        np.save(os.path.join(out, name + "_y3.npy"), y3)


if __name__ == "__main__":
    main()
