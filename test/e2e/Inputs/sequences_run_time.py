#!/usr/bin/env python3
"""Writes models whose sequences are edited, split or returned at positions,
sizes or presence known only at run time, with inputs and ONNX Runtime's
outputs for them, for test/e2e/sequence-run-time.test:

  OUTDIR/insert.onnx   SequenceInsert of t [4x3] into a sequence input of
                       [2x3], [5x3], [1x3] at a position input p: a sequence
                       output whose elements' shapes depend on p; SequenceAt
                       of the input at a position input q: a tensor output
                       whose shape depends on q.
      OUTDIR/insert_P_Q/ for (p, q) in (0, 1), (2, -3), (-1, 2), (3, 0)
  OUTDIR/erase.onnx    SequenceErase of a sequence input of three [2x2] at a
                       position input r, then ConcatFromSequence: elements of
                       one shape, chosen inside the graph.
      OUTDIR/erase_R/ for r in 0, 1, -1
  OUTDIR/split.onnx    SplitToSequence of x [5x4] along 0 by a split input
                       of two run-time sizes: a sequence output.
      OUTDIR/split_A_B/ for (a, b) in (1, 4), (3, 2), (5, 0)
  OUTDIR/chunks.onnx   SplitToSequence of x [3x7] along 1 by a scalar split
                       input (chunks of that size, the last shorter): a
                       sequence output of run-time length, and its
                       SequenceLength.
      OUTDIR/chunks_S/ for s in 2, 3, 7, 9
  OUTDIR/maybe.onnx    If on a bool input: then Optional(Relu(x)), else an
                       empty Optional: an optional tensor output present
                       at run time or not, and OptionalHasElement of it.
      OUTDIR/maybe_true/, OUTDIR/maybe_false/
  OUTDIR/grow.onnx     A Loop of run-time trip count M and condition c
                       whose body appends Slice(1..5, 0, i + 1) to a
                       sequence and adds 1 to a carried count, and whose
                       condition is i + 1 < L: a sequence output of
                       run-time length and the count.
      OUTDIR/grow_M_C_L/ for (M, c, L) in (3, true, 100), (7, true, 100),
                       (0, true, 100), (4, false, 100), (10, true, 2),
                       (20, true, 100)
  OUTDIR/at_inserted.onnx  SequenceAt at a run-time position of a sequence
                       whose elements' shapes are known only at run time
                       (not supported: an error).
Each case's data is in its folder as input_K.pb, output_K.pb.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sequences import save  # noqa: E402

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
rng = np.random.default_rng(23)


def seq_type(elem, shape):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape))


def to_proto(value, name):
    if isinstance(value, onnx.OptionalProto):
        return value
    if isinstance(value, list):
        return numpy_helper.from_list(value, name)
    return numpy_helper.from_array(np.asarray(value), name)


def run(path, feeds, outdir):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    os.makedirs(outdir, exist_ok=True)
    for k, (name, v) in enumerate(feeds.items()):
        with open(os.path.join(outdir, "input_%d.pb" % k), "wb") as f:
            f.write(to_proto(v, name).SerializeToString())
    for k, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
        if o.type.startswith("optional"):
            v = numpy_helper.from_optional(
                None if v is None else np.asarray(v), o.name,
                dtype=onnx.OptionalProto.TENSOR)
        with open(os.path.join(outdir, "output_%d.pb" % k), "wb") as f:
            f.write(to_proto(v, o.name).SerializeToString())
    return outs


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def scalar(v):
    return np.array(v, dtype=np.int64)


def main(out):
    # SequenceInsert and SequenceAt at run-time positions, elements of
    # three shapes.
    insert_inputs = [helper.make_value_info("xs", seq_type(F, [None, 3])),
                     helper.make_tensor_value_info("t", F, [4, 3]),
                     helper.make_tensor_value_info("p", I64, []),
                     helper.make_tensor_value_info("q", I64, [])]
    g = helper.make_graph(
        [helper.make_node("SequenceInsert", ["xs", "t", "p"], ["ys"]),
         helper.make_node("SequenceAt", ["xs", "q"], ["at"])],
        "insert",
        insert_inputs,
        [helper.make_value_info("ys", seq_type(F, [None, 3])),
         helper.make_tensor_value_info("at", F, [None, 3])])
    path = save(g, os.path.join(out, "insert.onnx"))
    xs = [f32(2, 3), f32(5, 3), f32(1, 3)]
    t = f32(4, 3)
    for p, q in [(0, 1), (2, -3), (-1, 2), (3, 0)]:
        run(path, {"xs": xs, "t": t, "p": scalar(p), "q": scalar(q)},
            os.path.join(out, "insert_%d_%d" % (p, q)))

    # SequenceErase at a run-time position, elements of one shape, used
    # inside the graph.
    g = helper.make_graph(
        [helper.make_node("SequenceErase", ["xs", "r"], ["ys"]),
         helper.make_node("ConcatFromSequence", ["ys"], ["cat"], axis=0)],
        "erase",
        [helper.make_value_info("xs", seq_type(F, [2, 2])),
         helper.make_tensor_value_info("r", I64, [])],
        [helper.make_tensor_value_info("cat", F, [None, 2])])
    path = save(g, os.path.join(out, "erase.onnx"))
    xs = [f32(2, 2), f32(2, 2), f32(2, 2)]
    for r in (0, 1, -1):
        run(path, {"xs": xs, "r": scalar(r)}, os.path.join(out, "erase_%d" % r))

    # SplitToSequence by two run-time sizes.
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "split"], ["parts"], axis=0)],
        "split",
        [helper.make_tensor_value_info("x", F, [5, 4]),
         helper.make_tensor_value_info("split", I64, [2])],
        [helper.make_value_info("parts", seq_type(F, [None, 4]))])
    path = save(g, os.path.join(out, "split.onnx"))
    x = f32(5, 4)
    for a, b in [(1, 4), (3, 2), (5, 0)]:
        run(path, {"x": x, "split": np.array([a, b], dtype=np.int64)},
            os.path.join(out, "split_%d_%d" % (a, b)))

    # SplitToSequence by a scalar run-time size: a run-time length.
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "s"], ["chunks"], axis=1),
         helper.make_node("SequenceLength", ["chunks"], ["n"])],
        "chunks",
        [helper.make_tensor_value_info("x", F, [3, 7]),
         helper.make_tensor_value_info("s", I64, [])],
        [helper.make_value_info("chunks", seq_type(F, [3, None])),
         helper.make_tensor_value_info("n", I64, [])])
    path = save(g, os.path.join(out, "chunks.onnx"))
    x = f32(3, 7)
    for s in (2, 3, 7, 9):
        run(path, {"x": x, "s": scalar(s)}, os.path.join(out, "chunks_%d" % s))

    # An optional present in one If branch only.
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Optional", ["r"], ["o_then"])],
        "then", [],
        [helper.make_value_info("o_then", helper.make_optional_type_proto(
            helper.make_tensor_type_proto(F, [2, 3])))])
    else_g = helper.make_graph(
        [helper.make_node("Optional", [], ["o_else"],
                          type=helper.make_tensor_type_proto(F, [2, 3]))],
        "else", [],
        [helper.make_value_info("o_else", helper.make_optional_type_proto(
            helper.make_tensor_type_proto(F, [2, 3])))])
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2, 3]))
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g),
         helper.make_node("OptionalHasElement", ["o"], ["has"])],
        "maybe",
        [helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_value_info("o", opt_t),
         helper.make_tensor_value_info("has", B, [])])
    path = save(g, os.path.join(out, "maybe.onnx"))
    x = f32(2, 3)
    for c in (True, False):
        run(path, {"c": np.array(c), "x": x},
            os.path.join(out, "maybe_%s" % str(c).lower()))

    # A Loop of run-time trip count M and condition that appends a growing
    # Slice of a constant and carries a count; the body's condition is
    # iter + 1 < L.
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["x"], value=numpy_helper.from_array(
            np.arange(1, 6, dtype=np.float32), "x")),
         helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(
            np.array(1, dtype=np.int64), "one")),
         helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(
            np.array([0], dtype=np.int64), "zero")),
         helper.make_node("Constant", [], ["axes"], value=numpy_helper.from_array(
            np.array([0], dtype=np.int64), "axes")),
         helper.make_node("Constant", [], ["fone"], value=numpy_helper.from_array(
            np.array([1], dtype=np.float32), "fone")),
         helper.make_node("Add", ["i", "one"], ["next"]),
         helper.make_node("Unsqueeze", ["next", "axes"], ["end"]),
         helper.make_node("Slice", ["x", "zero", "end"], ["part"]),
         helper.make_node("SequenceInsert", ["seq_in", "part"], ["seq_out"]),
         helper.make_node("Add", ["acc_in", "fone"], ["acc_out"]),
         helper.make_node("Less", ["next", "L"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_value_info("seq_in", seq_type(F, [None])),
         helper.make_tensor_value_info("acc_in", F, [1])],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_value_info("seq_out", seq_type(F, [None])),
         helper.make_tensor_value_info("acc_out", F, [1])])
    g = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
         helper.make_node("Constant", [], ["acc0"], value=numpy_helper.from_array(
            np.array([0], dtype=np.float32), "acc0")),
         helper.make_node("Loop", ["M", "c", "empty", "acc0"], ["parts", "count"],
                          body=body)],
        "grow",
        [helper.make_tensor_value_info("M", I64, []),
         helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("L", I64, [])],
        [helper.make_value_info("parts", seq_type(F, [None])),
         helper.make_tensor_value_info("count", F, [1])])
    path = save(g, os.path.join(out, "grow.onnx"))
    for m, c, limit in [(3, True, 100), (7, True, 100), (0, True, 100),
                        (4, False, 100), (10, True, 2), (20, True, 100)]:
        run(path, {"M": scalar(m), "c": np.array(c), "L": scalar(limit)},
            os.path.join(out, "grow_%d_%s_%d" % (m, str(c).lower(), limit)))

    # SequenceAt at a run-time position of elements chosen at run time.
    g = helper.make_graph(
        [helper.make_node("SequenceInsert", ["xs", "t", "p"], ["ys"]),
         helper.make_node("SequenceAt", ["ys", "q"], ["at"])],
        "at_inserted",
        insert_inputs,
        [helper.make_tensor_value_info("at", F, [None, 3])])
    save(g, os.path.join(out, "at_inserted.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
