#!/usr/bin/env python3
"""Writes models for length ranges (kiln-compile --input-shape=NAME:BxMIN..MAX):

  OUTDIR/encoder.onnx   a BERT-style encoder layer as the TorchScript exporter
                        writes it: input_ids and attention_mask [batch, seq]
                        (int64), word embeddings gathered, position ids from
                        Range(0, Shape(input_ids)[1]), the additive mask
                        (1 - mask) * -10000 per key, two heads as reshapes and
                        transposes, Softmax, a residual and LayerNorm; outputs
                        last_hidden_state [batch, seq, 16] and the pooler's
                        tanh(dense(first token)) [batch, 16].
  OUTDIR/gram.onnx      x^T x over positions (no Softmax): refused.
  OUTDIR/conv.onnx      a Conv over positions: refused.
  OUTDIR/tail.onnx      a Slice of the last position: refused.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
rng = np.random.default_rng(0)
H, HEADS, VOCAB, MAXPOS = 16, 2, 50, 64


def save(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, "%s/%s.onnx" % (OUT, name))


def encoder():
    nodes, inits = [], []

    def w(name, shape, scale=0.2):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def n(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    words = n("Gather", [w("word_emb", [VOCAB, H]), "input_ids"], "words", axis=0)
    shape = n("Shape", ["input_ids"], "ids_shape")
    seq = n("Gather", [shape, c("one", 1)], "seq_len", axis=0)
    pos = n("Range", [c("zero", 0), seq, c("step", 1)], "position_ids")
    posv = n("Gather", [w("pos_emb", [MAXPOS, H]), pos], "positions", axis=0)
    emb = n("Add", [words, posv], "embeddings")
    x = n("LayerNormalization", [emb, w("ln0.w", [H]), w("ln0.b", [H])], "ln0",
          axis=-1, epsilon=1e-12)
    # The additive mask, [batch, 1, 1, seq].
    m = n("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    m = n("Unsqueeze", [m, c("axes12", [1, 2])], "mask_4d")
    m = n("Sub", [c("one_f", 1.0, np.float32), m], "mask_inv")
    m = n("Mul", [m, c("neg", -10000.0, np.float32)], "mask_add")
    split = n("Concat", [c("b0", [0]), c("s0", [0]), c("hd", [HEADS, H // HEADS])],
              "split_shape", axis=0)

    def heads(name, perm):
        p = n("Add", [n("MatMul", [x, w(name + ".w", [H, H])], name + "_mm"),
                      w(name + ".b", [H])], name)
        return n("Transpose", [n("Reshape", [p, split], name + "_split")],
                 name + "_heads", perm=perm)

    q, k, v = heads("q", [0, 2, 1, 3]), heads("k", [0, 2, 3, 1]), heads("v", [0, 2, 1, 3])
    s = n("MatMul", [q, k], "scores")
    s = n("Div", [s, c("sqrt_d", np.sqrt(H // HEADS), np.float32)], "scaled")
    s = n("Add", [s, m], "masked")
    p = n("Softmax", [s], "probs", axis=-1)
    ctx = n("Transpose", [n("MatMul", [p, v], "context")], "context_t", perm=[0, 2, 1, 3])
    ctx = n("Reshape", [ctx, c("merge", [0, 0, H])], "context_merged")
    o = n("Add", [n("MatMul", [ctx, w("o.w", [H, H])], "o_mm"), w("o.b", [H])], "o")
    h = n("Add", [x, o], "residual")
    nodes.append(helper.make_node("LayerNormalization", [h, w("ln1.w", [H]), w("ln1.b", [H])],
                                  ["last_hidden_state"], name="ln1", axis=-1, epsilon=1e-12))
    first = n("Gather", ["last_hidden_state", c("zero_idx", 0)], "first_token", axis=1)
    nodes.append(helper.make_node("Tanh", [n("Gemm", [first, w("pool.w", [H, H]), w("pool.b", [H])],
                                             "pool_dense")], ["pooler_output"], name="pooler"))
    save("encoder", nodes,
         [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
          helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
         [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", H]),
          helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch", H])],
         inits)


def refused():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 4])
    save("gram", [helper.make_node("Transpose", ["x"], ["xt"], name="xt", perm=[0, 2, 1]),
                  helper.make_node("MatMul", ["xt", "x"], ["y"], name="gram")],
         [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4])], [])
    wt = numpy_helper.from_array(rng.standard_normal((4, 4, 3)).astype(np.float32), "w")
    save("conv", [helper.make_node("Transpose", ["x"], ["xc"], name="xc", perm=[0, 2, 1]),
                  helper.make_node("Conv", ["xc", "w"], ["y"], name="conv1d", pads=[1, 1])],
         [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, "seq"])], [wt])
    consts = [numpy_helper.from_array(np.array(v, np.int64), k)
              for k, v in (("st", [-1]), ("en", [2**62]), ("ax", [1]))]
    save("tail", [helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"], name="last")],
         [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4])], consts)


encoder()
refused()
