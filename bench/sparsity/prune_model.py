#!/usr/bin/env python3
"""Prunes an ONNX model's MatMul and Gemm weights to 2:4, as 2:4-pruned
training leaves them: every constant float32 matrix operand B (an
initializer, read as [K, N], or [N, K] under Gemm's transB) keeps, in each
group of four consecutive elements along K of each output column, the two
largest magnitudes (the first on ties; Kiln's --sparsity=force prunes the
same way). K must be a multiple of 4; other weights are left alone.

  python3 bench/sparsity/prune_model.py IN.onnx OUT.onnx
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_stack import prune_2of4  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    model = onnx.load(a.input)
    inits = {i.name: i for i in model.graph.initializer}
    pruned = 0
    for node in model.graph.node:
        if node.op_type not in ("MatMul", "Gemm") or len(node.input) < 2:
            continue
        init = inits.get(node.input[1])
        if init is None or init.data_type != onnx.TensorProto.FLOAT or len(init.dims) != 2:
            continue
        trans = node.op_type == "Gemm" and any(
            at.name == "transB" and at.i for at in node.attribute)
        w = numpy_helper.to_array(init)
        kn = w.T if trans else w
        if kn.shape[0] % 4:
            continue
        p = prune_2of4(np.ascontiguousarray(kn))
        init.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(p.T if trans else p),
                                              init.name))
        pruned += 1
    onnx.save(model, a.output)
    print("%s: %d weights pruned to 2:4" % (a.output, pruned))


if __name__ == "__main__":
    main()
