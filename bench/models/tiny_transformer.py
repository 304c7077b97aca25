#!/usr/bin/env python3
"""Builds a small pre-norm transformer encoder layer as PyTorch's exporter
writes one at opset 18 and later.

Multi-head attention with the head split done by Shape/Gather/Concat/Reshape
on a symbolic batch and sequence, Split with `num_outputs` (opset 18),
ReduceMean with an `axes` input (opset 18), LayerNormalization, Softmax,
Gelu (opset 20) and residual adds. Weights are random from a fixed seed;
only `onnx` and numpy are needed.

  bench/models/tiny_transformer.py OUT.onnx [--hidden 32] [--heads 4] [--opset 21]
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(hidden=32, heads=4, ffn=64, opset=21, seed=0, pool=True):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def w(name, shape, scale=0.1):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, values):
        inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def n(op, inputs, outputs=None, **attrs):
        outputs = outputs or ["%s_%d" % (op.lower(), len(nodes))]
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    head = hidden // heads
    x = "hidden_states"
    ln1 = n("LayerNormalization", [x, w("ln1.weight", [hidden]), w("ln1.bias", [hidden])],
            axis=-1, epsilon=1e-5)
    qkv = n("Add", [n("MatMul", [ln1, w("attn.in_proj.weight", [hidden, 3 * hidden])]),
                    w("attn.in_proj.bias", [3 * hidden])])
    q, k, v = n("Split", [qkv], ["q", "k", "v"], axis=-1, num_outputs=3)
    # [B, S, H] -> [B, S, heads, head] with B and S read at run time.
    shape = n("Shape", [x])
    b = n("Gather", [shape, c("idx0", 0)], axis=0)
    s = n("Gather", [shape, c("idx1", 1)], axis=0)
    b1 = n("Unsqueeze", [b, c("axes0", [0])])
    s1 = n("Unsqueeze", [s, c("axes0b", [0])])
    split_shape = n("Concat", [b1, s1, c("heads_dims", [heads, head])], axis=0)

    def heads_first(t, perm):
        return n("Transpose", [n("Reshape", [t, split_shape])], perm=perm)

    qh = heads_first(q, [0, 2, 1, 3])
    kh = heads_first(k, [0, 2, 3, 1])
    vh = heads_first(v, [0, 2, 1, 3])
    scores = n("Div", [n("MatMul", [qh, kh]),
                       w("attn.scale", [], 0.0)])
    inits[-1] = numpy_helper.from_array(np.array(np.sqrt(head), dtype=np.float32), "attn.scale")
    probs = n("Softmax", [scores], axis=-1)
    ctx = n("Transpose", [n("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
    merged = n("Reshape", [ctx, n("Concat", [b1, s1, c("hidden_dim", [hidden])], axis=0)])
    attn = n("Add", [n("MatMul", [merged, w("attn.out_proj.weight", [hidden, hidden])]),
                     w("attn.out_proj.bias", [hidden])])
    h = n("Add", [x, attn])
    ln2 = n("LayerNormalization", [h, w("ln2.weight", [hidden]), w("ln2.bias", [hidden])],
            axis=-1, epsilon=1e-5)
    up = n("Add", [n("MatMul", [ln2, w("ffn.up.weight", [hidden, ffn])]), w("ffn.up.bias", [ffn])])
    act = n("Gelu", [up]) if opset >= 20 else n("Relu", [up])
    down = n("Add", [n("MatMul", [act, w("ffn.down.weight", [ffn, hidden])]),
                     w("ffn.down.bias", [hidden])])
    out = n("Add", [h, down])
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                             ["batch", "seq", hidden])]
    if pool:
        # A pooled summary through ReduceMean with an axes input (opset 18).
        pooled = n("ReduceMean", [out, c("seq_axis", [1])], ["pooled"], keepdims=0)
        nodes[-1].output[0] = "pooled"
        nodes[-2].output[0] = "output"
        nodes[-1].input[0] = "output"
        outputs.append(helper.make_tensor_value_info("pooled", TensorProto.FLOAT,
                                                     ["batch", hidden]))
    else:
        nodes[-1].output[0] = "output"

    graph = helper.make_graph(
        nodes, "tiny_transformer",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "seq", hidden])],
        outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="kiln-bench")
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--opset", type=int, default=21)
    ap.add_argument("--no-pool", action="store_true",
                    help="leave out the pooled output (a ReduceMean over the "
                    "sequence), which a length range cannot take")
    args = ap.parse_args()
    onnx.save(build(args.hidden, args.heads, opset=args.opset, pool=not args.no_pool),
              args.out)


if __name__ == "__main__":
    main()
