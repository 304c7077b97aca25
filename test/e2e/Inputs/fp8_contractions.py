#!/usr/bin/env python3
"""Writes a float8 QDQ model whose products are exact, for the GPU's fp8
tensor-core tiles (kiln-gpu-fold-dequantize, then kiln-gpu-contractions'
mma.sync m16n8k32 e4m3), its inputs and its exact outputs:

  mm    x [96x128] -> QuantizeLinear/DequantizeLinear (FLOAT8E4M3FN,
        scale 0.5) -> MatMul with DequantizeLinear(FLOAT8E4M3FN constant
        [128x80], per-column scales 0.25 and 2) -> y [96x80]
  conv  x [2x16x10x10] the same way, Conv 3x3 pads 1 with a
        DequantizeLinear'd float8 weight [32x16x3x3] (per-output-channel
        scales) and a float bias -> [2x32x10x10]

Every input and weight value is a small multiple of a power of two that
e4m3 holds exactly (x/0.5 and w in {0, +-0.5, +-1, ..., +-4}), so every
product and every partial sum is exact in f32: whatever order the tiles
sum in, the outputs equal numpy's float64 results.

  fp8_contractions.py OUTDIR   (writes OUTDIR/m.onnx, input_K.npy,
                                output_K.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import convolutions


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, -0.5, -1, -1.5, -2, -3, -4])

    def values(shape):
        return rng.choice(grid, size=shape)

    x_mm = (values([96, 128]) * 0.5).astype(np.float32)
    w_mm = values([128, 80])
    s_mm = np.where(np.arange(80) % 2 == 0, 0.25, 2.0).astype(np.float32)
    x_conv = (values([2, 16, 10, 10]) * 0.5).astype(np.float32)
    w_conv = values([32, 16, 3, 3])
    s_conv = np.where(np.arange(32) % 3 == 0, 0.5, 1.0).astype(np.float32)
    b_conv = (rng.integers(-8, 9, size=[32]) / 4).astype(np.float32)

    def f8(name, v):
        return helper.make_tensor(name, TensorProto.FLOAT8E4M3FN, list(v.shape),
                                  v.flatten().tolist())

    zero = helper.make_tensor("zero", TensorProto.FLOAT8E4M3FN, [], [0])
    inits = [
        zero,
        numpy_helper.from_array(np.array(0.5, np.float32), "s_x"),
        f8("w_mm", w_mm), numpy_helper.from_array(s_mm, "s_mm"),
        f8("z_mm", np.zeros(80)),
        f8("w_conv", w_conv), numpy_helper.from_array(s_conv, "s_conv"),
        f8("z_conv", np.zeros(32)), numpy_helper.from_array(b_conv, "b_conv"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x_mm", "s_x", "zero"], ["q_mm"]),
        helper.make_node("DequantizeLinear", ["q_mm", "s_x", "zero"], ["d_mm"]),
        helper.make_node("DequantizeLinear", ["w_mm", "s_mm", "z_mm"], ["wd_mm"],
                         axis=1),
        helper.make_node("MatMul", ["d_mm", "wd_mm"], ["mm"], name="mm"),
        helper.make_node("QuantizeLinear", ["x_conv", "s_x", "zero"], ["q_conv"]),
        helper.make_node("DequantizeLinear", ["q_conv", "s_x", "zero"],
                         ["d_conv"]),
        helper.make_node("DequantizeLinear", ["w_conv", "s_conv", "z_conv"],
                         ["wd_conv"], axis=0),
        helper.make_node("Conv", ["d_conv", "wd_conv", "b_conv"], ["conv"],
                         name="conv", pads=[1, 1, 1, 1]),
    ]
    mm = x_mm.astype(np.float64) @ (w_mm * s_mm)
    conv = convolutions.conv(x_conv.astype(np.float64),
                             w_conv * s_conv.reshape(32, 1, 1, 1), b_conv,
                             pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        nodes, "fp8_contractions",
        [helper.make_tensor_value_info("x_mm", TensorProto.FLOAT, x_mm.shape),
         helper.make_tensor_value_info("x_conv", TensorProto.FLOAT,
                                       x_conv.shape)],
        [helper.make_tensor_value_info("mm", TensorProto.FLOAT, mm.shape),
         helper.make_tensor_value_info("conv", TensorProto.FLOAT, conv.shape)],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "m.onnx"))
    np.save(os.path.join(out, "input_0.npy"), x_mm)
    np.save(os.path.join(out, "input_1.npy"), x_conv)
    for i, r in enumerate((mm, conv)):
        assert np.array_equal(r.astype(np.float32).astype(np.float64), r)
        np.save(os.path.join(out, "output_%d.npy" % i), r.astype(np.float32))


if __name__ == "__main__":
    main()
