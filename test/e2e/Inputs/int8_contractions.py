#!/usr/bin/env python3
"""Writes a model of 8-bit integer products (MatMulInteger, ConvInteger:
int8 x int8 summed in int32) for the GPU's int8 tensor-core tiles
(kiln-gpu-contractions, mma.sync m16n8k32 s8), its inputs and its exact
outputs:

  mm_edges   [100x70] x constant [70x50]: M, N and K past the tiles'
             edges, B's contiguous side N (transposed as it is staged)
  bmm        [3x40x96] x [3x96x72]: a batch dimension, both operands
             inputs
  mm_nk      [64x128] x Transpose(constant [80x128]): B's contiguous
             side K (cp.async on both operands)
  mm_extreme [64x512] x [512x64] of -128 and 127 only: the largest sums
             (|sum| up to 2^23), exact in int32
  conv       ConvInteger [2x32x10x10] x constant [48x32x3x3], pads 1: an
             implicit GEMM whose input is zero-padded
  conv_s2    ConvInteger [1x16x9x9] x constant [32x16x3x3], stride 2,
             pads 1
  mm_uint8   uint8 [64x48] x int8 [48x40]: not a signed 8-bit product (a
             loop kernel), still exact

  int8_contractions.py OUTDIR [--symmetric-weights]
      (writes OUTDIR/m.onnx, input_K.npy, output_K.npy; with
      --symmetric-weights the constant weights lie in [-127, 127],
      mm_extreme's are -127 and 127, and mm_uint8_wide, uint8 [16x64] x
      int8 [64x32], follows as an 8th output from a 9th input)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import convolutions


def conv2d(x, w, stride, pad):
    """convolutions.py's reference (float64, exact for these sums) as
    int64."""
    y = convolutions.conv(x.astype(np.float64), w.astype(np.float64),
                          strides=[stride] * 2, pads=[pad] * 4)
    return y.astype(np.int64)


def write_model(out, name, nodes, inputs, weights, results):
    """Writes OUTDIR/m.onnx (opset 18: 8-bit inputs, int32 outputs,
    constant weights), input_K.npy and output_K.npy."""
    os.makedirs(out, exist_ok=True)
    elem = {np.dtype(np.int8): TensorProto.INT8,
            np.dtype(np.uint8): TensorProto.UINT8}
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, elem[a.dtype], a.shape)
         for k, a in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.INT32, r.shape)
         for k, r in results.items()],
        [numpy_helper.from_array(a, k) for k, a in weights.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "m.onnx"))
    for i, a in enumerate(inputs.values()):
        np.save(os.path.join(out, "input_%d.npy" % i), a)
    for i, r in enumerate(results.values()):
        assert np.abs(r).max() < 2**31
        np.save(os.path.join(out, "output_%d.npy" % i), r.astype(np.int32))


def main():
    out = sys.argv[1]
    # --symmetric-weights: weights in [-127, 127], as symmetric quantization
    # writes them (kiln-cpu-int8-gemm{signed-dot} needs no -128 there).
    low = -127 if "--symmetric-weights" in sys.argv[2:] else -128
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def i8(shape, lo=-128):
        return rng.integers(lo, 128, size=shape).astype(np.int8)

    inputs = {
        "x_edges": i8([100, 70]),
        "x_bmm": i8([3, 40, 96]),
        "y_bmm": i8([3, 96, 72]),
        "x_nk": i8([64, 128]),
        "x_ext": rng.choice(np.array([-128, 127], np.int8), size=[64, 512]),
        "x_conv": i8([2, 32, 10, 10]),
        "x_s2": i8([1, 16, 9, 9]),
        "x_u8": rng.integers(0, 256, size=[64, 48]).astype(np.uint8),
    }
    weights = {
        "w_edges": i8([70, 50], low),
        "w_nk": i8([80, 128], low),
        "w_ext": rng.choice(np.array([low, 127], np.int8), size=[512, 64]),
        "w_conv": i8([48, 32, 3, 3], low),
        "w_s2": i8([32, 16, 3, 3], low),
        "w_u8": i8([48, 40], low),
    }
    nodes = [
        helper.make_node("MatMulInteger", ["x_edges", "w_edges"], ["mm_edges"],
                         name="mm_edges"),
        helper.make_node("MatMulInteger", ["x_bmm", "y_bmm"], ["bmm"],
                         name="bmm"),
        helper.make_node("Transpose", ["w_nk"], ["w_nk_t"], name="w_nk_t",
                         perm=[1, 0]),
        helper.make_node("MatMulInteger", ["x_nk", "w_nk_t"], ["mm_nk"],
                         name="mm_nk"),
        helper.make_node("MatMulInteger", ["x_ext", "w_ext"], ["mm_extreme"],
                         name="mm_extreme"),
        helper.make_node("ConvInteger", ["x_conv", "w_conv"], ["conv"],
                         name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("ConvInteger", ["x_s2", "w_s2"], ["conv_s2"],
                         name="conv_s2", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("MatMulInteger", ["x_u8", "w_u8"], ["mm_uint8"],
                         name="mm_uint8"),
    ]
    v = {k: a.astype(np.int64) for k, a in {**inputs, **weights}.items()}
    results = {
        "mm_edges": v["x_edges"] @ v["w_edges"],
        "bmm": v["x_bmm"] @ v["y_bmm"],
        "mm_nk": v["x_nk"] @ v["w_nk"].T,
        "mm_extreme": v["x_ext"] @ v["w_ext"],
        "conv": conv2d(v["x_conv"], v["w_conv"], 1, 1),
        "conv_s2": conv2d(v["x_s2"], v["w_s2"], 2, 1),
        "mm_uint8": v["x_u8"] @ v["w_u8"],
    }
    if low == -127:
        # uint8 activations by a 32-column weight: the CPU's register tiles
        # read them as signed bytes less 128 (kiln-cpu-int8-gemm{signed-dot}).
        inputs["x_u8w"] = rng.integers(0, 256, size=[16, 64]).astype(np.uint8)
        weights["w_u8w"] = i8([64, 32], low)
        nodes.append(helper.make_node("MatMulInteger", ["x_u8w", "w_u8w"],
                                      ["mm_uint8_wide"], name="mm_uint8_wide"))
        results["mm_uint8_wide"] = (inputs["x_u8w"].astype(np.int64) @
                                    weights["w_u8w"].astype(np.int64))
    write_model(out, "int8_contractions", nodes, inputs, weights, results)

if __name__ == "__main__":
    main()
