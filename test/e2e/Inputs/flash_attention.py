"""Attentions for kiln-gpu-flash-attention's end-to-end test, with seeded
inputs and ONNX Runtime's f32 outputs (output_N.npy):

  o1: the decomposed form PyTorch's exporters write, MatMul(Q, K^T) *
      scale + an additive mask -> Softmax -> MatMul(., V), 100 queries
      against 77 keys (neither a multiple of the kernel's 64), batch 2,
      3 heads of 32, the last 10 keys of the second batch masked by
      -10000;
  o2: ONNX Attention (opset 23), causal, grouped queries (4 query heads
      over 2 key/value heads), 130 tokens, heads of 64;
  o3: ONNX Attention with a boolean mask [40, 130] (every row keeps a
      key), softcap 20, Q and K heads of 48 and V heads of 16;
  o4: ONNX Attention with heads of 8, which the kernel does not take
      (it stays unfused).

  python3 flash_attention.py OUTDIR
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main(out):
    rng = np.random.default_rng(7)
    inputs, nodes, outputs = [], [], []
    values = {}

    def add_input(name, shape, dtype=TensorProto.FLOAT, value=None):
        inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        values[name] = (value if value is not None else
                        rng.standard_normal(shape).astype(np.float32))

    # o1: the decomposed form.
    add_input("q1", [2, 3, 100, 32])
    add_input("k1", [2, 3, 77, 32])
    add_input("v1", [2, 3, 77, 32])
    mask = np.zeros([2, 1, 1, 77], np.float32)
    mask[1, :, :, 67:] = -10000.0
    add_input("m1", [2, 1, 1, 77], value=mask)
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [],
                               [1.0 / np.sqrt(32.0)])
    nodes += [
        helper.make_node("Transpose", ["k1"], ["k1t"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q1", "k1t"], ["s1"]),
        helper.make_node("Mul", ["s1", "scale"], ["s1s"]),
        helper.make_node("Add", ["s1s", "m1"], ["s1m"]),
        helper.make_node("Softmax", ["s1m"], ["p1"], axis=-1),
        helper.make_node("MatMul", ["p1", "v1"], ["o1"]),
    ]
    outputs.append(
        helper.make_tensor_value_info("o1", TensorProto.FLOAT, [2, 3, 100, 32]))

    # o2: causal, grouped queries.
    add_input("q2", [1, 4, 130, 64])
    add_input("k2", [1, 2, 130, 64])
    add_input("v2", [1, 2, 130, 64])
    nodes.append(
        helper.make_node("Attention", ["q2", "k2", "v2"], ["o2"], is_causal=1))
    outputs.append(
        helper.make_tensor_value_info("o2", TensorProto.FLOAT, [1, 4, 130, 64]))

    # o3: boolean mask, softcap, V's head size other than Q's.
    add_input("q3", [1, 2, 40, 48])
    add_input("k3", [1, 2, 130, 48])
    add_input("v3", [1, 2, 130, 16])
    keep = rng.random([40, 130]) < 0.7
    keep[:, 0] = True
    add_input("m3", [40, 130], TensorProto.BOOL, keep)
    nodes.append(
        helper.make_node("Attention", ["q3", "k3", "v3", "m3"], ["o3"],
                         softcap=20.0))
    outputs.append(
        helper.make_tensor_value_info("o3", TensorProto.FLOAT, [1, 2, 40, 16]))

    # o4: heads of 8.
    add_input("q4", [1, 2, 16, 8])
    add_input("k4", [1, 2, 16, 8])
    add_input("v4", [1, 2, 16, 8])
    nodes.append(helper.make_node("Attention", ["q4", "k4", "v4"], ["o4"]))
    outputs.append(
        helper.make_tensor_value_info("o4", TensorProto.FLOAT, [1, 2, 16, 8]))

    graph = helper.make_graph(nodes, "flash_attention", inputs, outputs,
                              initializer=[scale])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "m.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    feeds = {i.name: values[i.name] for i in inputs}
    for i, inp in enumerate(inputs):
        np.save(os.path.join(out, "input_%d.npy" % i), values[inp.name])
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for i, value in enumerate(session.run(None, feeds)):
        np.save(os.path.join(out, "output_%d.npy" % i), value)


if __name__ == "__main__":
    main(sys.argv[1])
