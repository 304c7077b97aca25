#!/usr/bin/env python3
"""Writes a single-MaxPool model and a seeded input: ResNet-50's stem pool
by default (3x3, stride 2, pads 1, over 1x64x112x112), for timing it alone
against ONNX Runtime with bench/compare_ort.py.

  python3 bench/models/maxpool.py OUTDIR [N C H W]
  build/bin/kiln-compile OUTDIR/maxpool.onnx -o OUTDIR/maxpool.kmod
  python3 bench/compare_ort.py OUTDIR/maxpool.onnx OUTDIR/maxpool.kmod \\
      OUTDIR/x.npy --threads 2
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
from single_op import save_model


def main():
    if len(sys.argv) not in (2, 6):
        sys.exit(__doc__)
    out = sys.argv[1]
    n, c, h, w = map(int, sys.argv[2:6]) if len(sys.argv) == 6 else (1, 64, 112, 112)
    os.makedirs(out, exist_ok=True)
    oh, ow = (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                          strides=[2, 2], pads=[1, 1, 1, 1])], "maxpool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, c, oh, ow])])
    save_model(graph, os.path.join(out, "maxpool.onnx"))
    rng = np.random.default_rng(0)
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((n, c, h, w)).astype(np.float32))


if __name__ == "__main__":
    main()
