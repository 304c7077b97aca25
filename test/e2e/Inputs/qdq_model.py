#!/usr/bin/env python3
"""Writes a float CNN (Conv, Relu, Conv, Relu, Reshape, MatMul, Add) with
seeded weights, quantizes it with onnxruntime's quantize_static (QDQ
format, int8 activations and per-channel int8 weights, calibrated on 16
seeded inputs), and writes the QDQ model, a test input, ONNX Runtime's
output on it and that output's quantization step:

  qdq_model.py OUTDIR [--channels C] [--classes N] [--activations int8|uint8]
      [--depthwise]
  (writes f.onnx, q.onnx, input_0.npy, output_0.npy (ONNX Runtime on
  q.onnx), output_f32.npy (on f.onnx), step.txt, and calibration/NN/input_0.npy,
  the 16 calibration samples)

The defaults (8 channels, 10 classes) give contractions too narrow for
vectors; 32 and 32 give ones that the CPU's 8-bit GEMM kernels take.
--depthwise puts a depthwise 3x3 convolution with a Relu between the two
convolutions (MobileNet's block; QLinearConv with group = channels).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--activations", choices=["int8", "uint8"], default="int8")
    ap.add_argument("--depthwise", action="store_true")
    args = ap.parse_args()
    out, c, classes = args.out, args.channels, args.classes
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)

    def w(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    weights = {"w1": w(c, 3, 3, 3), "b1": w(c), "w2": w(c, c, 3, 3, scale=0.4 / np.sqrt(c)),
               "b2": w(c), "shape": np.array([2, 64 * c], np.int64),
               "w3": w(64 * c, classes, scale=0.4 / np.sqrt(8 * c)), "b3": w(classes)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["d1" if args.depthwise else "r1", "w2", "b2"], ["c2"],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Reshape", ["r2", "shape"], ["f"]),
             helper.make_node("MatMul", ["f", "w3"], ["m"]),
             helper.make_node("Add", ["m", "b3"], ["y"])]
    if args.depthwise:
        weights.update({"wd": w(c, 1, 3, 3, scale=0.5), "bd": w(c)})
        nodes[2:2] = [helper.make_node("Conv", ["r1", "wd", "bd"], ["cd"], group=c,
                                       kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                      helper.make_node("Relu", ["cd"], ["d1"])]
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, classes])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    fp = os.path.join(out, "f.onnx")
    onnx.save(model, fp)

    samples = [rng.standard_normal((2, 3, 8, 8)).astype(np.float32) for _ in range(16)]
    # The same samples as kiln-compile --calibration-data reads them: one
    # folder per sample.
    for i, x in enumerate(samples):
        os.makedirs(os.path.join(out, "calibration", "%02d" % i), exist_ok=True)
        np.save(os.path.join(out, "calibration", "%02d" % i, "input_0.npy"), x)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": x} for x in samples])

        def get_next(self):
            return next(self.data, None)

    qp = os.path.join(out, "q.onnx")
    quantize_static(fp, qp, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8 if args.activations == "int8"
                    else QuantType.QUInt8, weight_type=QuantType.QInt8)
    import onnxruntime as ort
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    # The reference runs the QDQ graph as written (DequantizeLinear, float
    # Conv/MatMul, QuantizeLinear), with ONNX Runtime's graph optimizations
    # off: its fused QLinearConv kernels differ by CPU (on AVX2 without VNNI
    # their u8s8 products saturate in 16 bits, measured 0.084 off here),
    # while the unfused graph gives the same answer everywhere.
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    y = ort.InferenceSession(qp, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.save(os.path.join(out, "input_0.npy"), x)
    np.save(os.path.join(out, "output_0.npy"), y)
    np.save(os.path.join(out, "output_f32.npy"),
            ort.InferenceSession(fp, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0])
    q = onnx.load(qp)
    final = [n for n in q.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == "y"][0]
    step = [numpy_helper.to_array(i) for i in q.graph.initializer if i.name == final.input[1]][0]
    with open(os.path.join(out, "step.txt"), "w") as f:
        f.write("%.9g" % (float(step) * 1.001))


if __name__ == "__main__":
    main()
