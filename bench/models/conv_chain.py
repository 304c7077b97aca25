#!/usr/bin/env python3
"""Writes a chain of N 3x3 convolutions with their Relus (C -> C channels on
an HxW plane, seeded weights) and a seeded input, for timing convolutions
whose weights do (N = 1) or do not (N = 10 at 512 channels: 94 MB) stay in
the caches, against ONNX Runtime with bench/compare_ort.py. --kernel sets
the window (pads keep the plane), --out-channels the last convolution's
output channels (a 1000-class 1x1 classifier: --kernel 1 --out-channels 1000).

  python3 bench/models/conv_chain.py N OUTDIR [--channels 512] [--size 7]
      [--kernel 3] [--out-channels C]
  build/bin/kiln-compile OUTDIR/chain.onnx -o OUTDIR/chain.kmod
  python3 bench/compare_ort.py OUTDIR/chain.onnx OUTDIR/chain.kmod \\
      OUTDIR/x.npy --threads 2
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("count", type=int)
    ap.add_argument("out")
    ap.add_argument("--channels", type=int, default=512)
    ap.add_argument("--size", type=int, default=7)
    ap.add_argument("--kernel", type=int, default=3)
    ap.add_argument("--out-channels", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(0)
    c, s, k = a.channels, a.size, a.kernel
    f = a.out_channels or c
    nodes, inits, prev = [], [], "x"
    for i in range(a.count):
        o = f if i == a.count - 1 else c
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((o, c, k, k)) * 0.02).astype(np.float32), "W%d" % i))
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((o,)) * 0.1).astype(np.float32), "B%d" % i))
        nodes.append(helper.make_node("Conv", [prev, "W%d" % i, "B%d" % i], ["c%d" % i],
                                      pads=[k // 2] * 4, kernel_shape=[k, k],
                                      name="conv%d" % i))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i], name="relu%d" % i))
        prev = "r%d" % i
    graph = helper.make_graph(
        nodes, "conv_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, s, s])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, f, s, s])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(a.out, "chain.onnx"))
    np.save(os.path.join(a.out, "x.npy"), rng.standard_normal((1, c, s, s)).astype(np.float32))


if __name__ == "__main__":
    main()
