#!/usr/bin/env python3
"""A transformer MLP stack with 2:4-sparse weights, as ONNX.

`layers` blocks of x -> Relu(x W1 + b1) W2 + b2 + x (hidden -> ffn ->
hidden, GPT-2's sizes by default), every weight pruned to 2:4 along its
reduction dim K by magnitude (in each group of four consecutive k of an
output column the two largest stay), random values from a fixed seed.
With `rows` 1 it is what a decoder's MLP does per generated token: a
chain of matrix-vector products that read every weight once, bound by
memory bandwidth.

Writes into OUT: `mlp_stack.onnx` (Gemm with transB, as PyTorch's
TorchScript exporter writes nn.Linear, or MatMul with --form matmul),
`mlp_stack_dense.onnx` (the same weights before pruning, for
--sparsity=force), `x.npy` and ONNX Runtime's outputs `expected.npy`,
`expected_dense.npy`. With --qdq also `mlp_stack_qdq.onnx`, the 2:4 model
quantized by onnxruntime's quantize_static (QDQ, per-channel symmetric
int8 weights, which stay 2:4: zero stays zero; int8 activations,
calibrated on 8 seeded inputs), its ONNX Runtime output
`expected_qdq.npy` and `qdq_step.txt`, the output's quantization step.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def prune_2of4(w_kn):
    """w as [K, N]: the two largest |w| of every 4 consecutive k kept."""
    k, n = w_kn.shape
    g = w_kn.reshape(k // 4, 4, n)
    order = np.argsort(-np.abs(g), axis=1, kind="stable")
    keep = np.zeros_like(g, dtype=bool)
    np.put_along_axis(keep, order[:, :2, :], True, axis=1)
    return np.where(keep, g, 0).reshape(k, n).astype(np.float32)


def build(weights, rows, hidden, form):
    nodes, inits = [], []
    x = "x"
    for i, (w1, b1, w2, b2) in enumerate(weights):
        def linear(inp, w, b, name):
            if form == "gemm":
                inits.append(numpy_helper.from_array(
                    np.ascontiguousarray(w.T), name + ".weight"))
                inits.append(numpy_helper.from_array(b, name + ".bias"))
                nodes.append(helper.make_node(
                    "Gemm", [inp, name + ".weight", name + ".bias"],
                    [name + ".out"], name=name, transB=1))
                return name + ".out"
            inits.append(numpy_helper.from_array(w, name + ".weight"))
            inits.append(numpy_helper.from_array(b, name + ".bias"))
            nodes.append(helper.make_node(
                "MatMul", [inp, name + ".weight"], [name + ".mm"],
                name=name))
            nodes.append(helper.make_node(
                "Add", [name + ".mm", name + ".bias"], [name + ".out"],
                name=name + ".add"))
            return name + ".out"
        h = linear(x, w1, b1, f"layer{i}.fc1")
        nodes.append(helper.make_node("Relu", [h], [f"layer{i}.act"],
                                      name=f"layer{i}.relu"))
        o = linear(f"layer{i}.act", w2, b2, f"layer{i}.fc2")
        out = f"layer{i}.res" if i + 1 < len(weights) else "y"
        nodes.append(helper.make_node("Add", [o, x], [out],
                                      name=f"layer{i}.residual"))
        x = out
    graph = helper.make_graph(
        nodes, "mlp_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [rows, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [rows, hidden])], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def quantize_qdq(src, dst, samples):
    """onnxruntime's quantize_static of `src` into `dst` (QDQ, per-channel
    symmetric int8 weights, int8 activations), calibrated on `samples`
    (feed dicts); returns the quantization step of its first output."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    it = iter(samples)

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(it, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    model = onnx.load(dst)
    inits = {i.name: i for i in model.graph.initializer}
    out = model.graph.output[0].name
    last = [n for n in model.graph.node
            if n.op_type == "DequantizeLinear" and n.output[0] == out]
    return float(numpy_helper.to_array(inits[last[0].input[1]]))


def qdq_reference(path, feeds):
    """ONNX Runtime's outputs of the QDQ model `path` run as written
    (DequantizeLinear, float Conv/Gemm, QuantizeLinear), its graph
    optimizations off: the QLinearConv/MatMulInteger kernels they fuse to
    differ by CPU (on AVX2 without VNNI their u8s8 products saturate in 16
    bits: 6 output steps off on a Zen 3 for gpu_sparse_conv_int8.py's CNN),
    while the unfused graph gives the same answer everywhere, the ONNX
    reference evaluator's."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def write_qdq(a, rng, x):
    samples = [{"x": rng.standard_normal(x.shape).astype(np.float32)}
               for _ in range(8)] + [{"x": x}]
    src = os.path.join(a.out, "mlp_stack.onnx")
    qdq = os.path.join(a.out, "mlp_stack_qdq.onnx")
    step = quantize_qdq(src, qdq, samples)
    with open(os.path.join(a.out, "qdq_step.txt"), "w") as f:
        f.write("%.9g\n" % step)
    np.save(os.path.join(a.out, "expected_qdq.npy"),
            qdq_reference(qdq, {"x": x})[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--ffn", type=int, default=3072)
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--form", choices=["gemm", "matmul"], default="gemm")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--qdq", action="store_true")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    dense, sparse = [], []
    for _ in range(a.layers):
        w1 = (rng.standard_normal((a.hidden, a.ffn)) /
              np.sqrt(a.hidden)).astype(np.float32)
        w2 = (rng.standard_normal((a.ffn, a.hidden)) /
              np.sqrt(a.ffn)).astype(np.float32)
        b1 = (0.1 * rng.standard_normal(a.ffn)).astype(np.float32)
        b2 = (0.1 * rng.standard_normal(a.hidden)).astype(np.float32)
        dense.append((w1, b1, w2, b2))
        sparse.append((prune_2of4(w1), b1, prune_2of4(w2), b2))
    os.makedirs(a.out, exist_ok=True)
    x = rng.standard_normal((a.rows, a.hidden)).astype(np.float32)
    np.save(os.path.join(a.out, "x.npy"), x)
    import onnxruntime as ort
    for name, weights in (("mlp_stack", sparse), ("mlp_stack_dense", dense)):
        path = os.path.join(a.out, name + ".onnx")
        onnx.save(build(weights, a.rows, a.hidden, a.form), path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        y = sess.run(None, {"x": x})[0]
        np.save(os.path.join(a.out, "expected" + name[9:] + ".npy"), y)
    if a.qdq:
        write_qdq(a, rng, x)
    print(f"wrote {a.out}/mlp_stack.onnx ({a.layers} layers, "
          f"{a.hidden}x{a.ffn}, {a.rows} rows, {a.form})")


if __name__ == "__main__":
    main()
