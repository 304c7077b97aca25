#!/usr/bin/env python3
"""Writes models whose graph inputs or outputs are ONNX sequences or
optionals, with inputs and ONNX Runtime's outputs for them (SequenceProto,
OptionalProto and TensorProto .pb files), for test/e2e/sequence-io.test:

  OUTDIR/map.onnx       SequenceMap over a sequence input (elements of three
                        lengths) and a tensor input: two sequence outputs
                        (Relu(x + b) and Shape(x)) and SequenceLength.
  OUTDIR/edit.onnx      SequenceInsert at a constant position, SequenceErase
                        of the last element, SequenceAt, ConcatFromSequence:
                        a sequence output and two tensors.
  OUTDIR/if_seq.onnx    If on a bool input whose branches build sequences of
                        two elements: a sequence output.
      OUTDIR/if_seq_true/, OUTDIR/if_seq_false/: both branches
  OUTDIR/loop_map.onnx  SequenceMap's expanded form: a Loop over
                        SequenceLength(xs) that reads SequenceAt(xs, i) and
                        inserts Sigmoid of it into a carried sequence.
  OUTDIR/split.onnx     SplitToSequence of a tensor input by a constant split:
                        a sequence output.
  OUTDIR/empty.onnx     SequenceLength of a sequence input given empty, and
                        ConcatFromSequence with a tensor inserted into it.
  OUTDIR/opt.onnx       An optional tensor input: OptionalHasElement, and If
                        on it (OptionalGetElement + 1, else zeros).
      OUTDIR/opt_present/, OUTDIR/opt_absent/
  OUTDIR/opt_seq.onnx   An optional sequence input: ConcatFromSequence of
                        OptionalGetElement.
  OUTDIR/runtime_trip.onnx  A Loop that inserts into a sequence a number of
                        times given by a graph input (not resolvable unless
                        pinned). OUTDIR/runtime_trip/: 3 times.
Each single-case model's data is in OUTDIR/NAME/input_K.pb, output_K.pb.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
rng = np.random.default_rng(11)


def seq_type(elem, shape):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape))


def const(name, array):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(array), name))


def save(graph, path, opset=18):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def to_proto(value, name):
    if isinstance(value, list):
        return numpy_helper.from_list(value, name)
    return numpy_helper.from_array(np.asarray(value), name)


def write(outdir, inputs, outputs):
    os.makedirs(outdir, exist_ok=True)
    for k, (name, v) in enumerate(inputs):
        proto = v if isinstance(v, onnx.OptionalProto) else to_proto(v, name)
        with open(os.path.join(outdir, "input_%d.pb" % k), "wb") as f:
            f.write(proto.SerializeToString())
    for k, (name, v) in enumerate(outputs):
        with open(os.path.join(outdir, "output_%d.pb" % k), "wb") as f:
            f.write(to_proto(v, name).SerializeToString())


def run(path, feeds, outdir):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    names = [o.name for o in sess.get_outputs()]
    write(outdir, list(feeds.items()), list(zip(names, outs)))
    return outs


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def main(out):
    os.makedirs(out, exist_ok=True)

    # SequenceMap with a sequence and a tensor input, two sequence outputs.
    body = helper.make_graph(
        [helper.make_node("Add", ["e", "b"], ["s"]),
         helper.make_node("Relu", ["s"], ["r"]),
         helper.make_node("Shape", ["e"], ["sh"])],
        "map_body",
        [helper.make_tensor_value_info("e", F, ["N"]),
         helper.make_tensor_value_info("b", F, [1])],
        [helper.make_tensor_value_info("r", F, ["N"]),
         helper.make_tensor_value_info("sh", I64, [1])])
    g = helper.make_graph(
        [helper.make_node("SequenceMap", ["xs", "b"], ["ys", "shapes"], body=body),
         helper.make_node("SequenceLength", ["xs"], ["n"])],
        "map",
        [helper.make_value_info("xs", seq_type(F, ["N"])),
         helper.make_tensor_value_info("b", F, [1])],
        [helper.make_value_info("ys", seq_type(F, ["N"])),
         helper.make_value_info("shapes", seq_type(I64, [1])),
         helper.make_tensor_value_info("n", I64, [])])
    p = save(g, os.path.join(out, "map.onnx"))
    run(p, {"xs": [f32(5), f32(3), f32(7)], "b": f32(1)}, os.path.join(out, "map"))

    # Insert, erase, at, concat.
    g = helper.make_graph(
        [const("one", np.array(1, np.int64)),
         helper.make_node("SequenceInsert", ["xs", "t", "one"], ["ins"]),
         helper.make_node("SequenceErase", ["ins"], ["er"]),
         helper.make_node("SequenceAt", ["er", "one"], ["at1"]),
         helper.make_node("ConcatFromSequence", ["er"], ["cat"], axis=0)],
        "edit",
        [helper.make_value_info("xs", seq_type(F, ["N", 3])),
         helper.make_tensor_value_info("t", F, [4, 3])],
        [helper.make_value_info("er", seq_type(F, ["N", 3])),
         helper.make_tensor_value_info("at1", F, [4, 3]),
         helper.make_tensor_value_info("cat", F, ["M", 3])])
    p = save(g, os.path.join(out, "edit.onnx"))
    run(p, {"xs": [f32(2, 3), f32(5, 3), f32(1, 3)], "t": f32(4, 3)},
        os.path.join(out, "edit"))

    # If whose branches build sequences.
    def branch(name, ops):
        nodes = [helper.make_node(op, ["x"] + ([c] if c else []), ["e%d" % i])
                 for i, (op, c) in enumerate(ops)]
        nodes.append(helper.make_node("SequenceConstruct", ["e0", "e1"], ["s_" + name]))
        return helper.make_graph(nodes, name, [],
                                 [helper.make_value_info("s_" + name, seq_type(F, [2, 3]))])
    then_g = branch("then", [("Sigmoid", None), ("Neg", None)])
    else_g = branch("else", [("Abs", None), ("Exp", None)])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["s"], then_branch=then_g, else_branch=else_g)],
        "if_seq",
        [helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_value_info("s", seq_type(F, [2, 3]))])
    p = save(g, os.path.join(out, "if_seq.onnx"))
    x = f32(2, 3)
    for c in (True, False):
        run(p, {"c": np.array(c), "x": x},
            os.path.join(out, "if_seq_%s" % ("true" if c else "false")))

    # SequenceMap's expanded form: a Loop over the sequence.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("SequenceAt", ["xs", "i"], ["e"]),
         helper.make_node("Sigmoid", ["e"], ["se"]),
         helper.make_node("SequenceInsert", ["acc_in", "se"], ["acc_out"])],
        "loop_body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_value_info("acc_in", seq_type(F, ["N"]))],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_value_info("acc_out", seq_type(F, ["N"]))])
    g = helper.make_graph(
        [helper.make_node("SequenceLength", ["xs"], ["n"]),
         const("t", np.array(True)),
         helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
         helper.make_node("Loop", ["n", "t", "empty"], ["ys"], body=body)],
        "loop_map",
        [helper.make_value_info("xs", seq_type(F, ["N"]))],
        [helper.make_value_info("ys", seq_type(F, ["N"]))])
    p = save(g, os.path.join(out, "loop_map.onnx"))
    run(p, {"xs": [f32(4), f32(9), f32(2), f32(6)]}, os.path.join(out, "loop_map"))

    # SplitToSequence with a constant split.
    g = helper.make_graph(
        [const("split", np.array([2, 4], np.int64)),
         helper.make_node("SplitToSequence", ["d", "split"], ["parts"], axis=0)],
        "split",
        [helper.make_tensor_value_info("d", F, [6, 4])],
        [helper.make_value_info("parts", seq_type(F, ["M", 4]))])
    p = save(g, os.path.join(out, "split.onnx"))
    run(p, {"d": f32(6, 4)}, os.path.join(out, "split"))

    # An empty sequence input.
    g = helper.make_graph(
        [helper.make_node("SequenceLength", ["xs"], ["n"]),
         helper.make_node("SequenceInsert", ["xs", "t"], ["one"]),
         helper.make_node("ConcatFromSequence", ["one"], ["cat"], axis=0)],
        "empty",
        [helper.make_value_info("xs", seq_type(F, [2])),
         helper.make_tensor_value_info("t", F, [2])],
        [helper.make_tensor_value_info("n", I64, []),
         helper.make_tensor_value_info("cat", F, [2])])
    p = save(g, os.path.join(out, "empty.onnx"))
    run(p, {"xs": [], "t": f32(2)}, os.path.join(out, "empty"))

    # An optional tensor input (ONNX Runtime takes None for an absent one;
    # written by hand: OptionalProto files).
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3]))
    one = np.ones(1, np.float32)
    then_g = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["xo"], ["v"]),
         helper.make_node("Add", ["v", "one"], ["r_then"])],
        "then", [], [helper.make_tensor_value_info("r_then", F, [3])])
    else_g = helper.make_graph(
        [const("r_else", np.zeros(3, np.float32))],
        "else", [], [helper.make_tensor_value_info("r_else", F, [3])])
    g = helper.make_graph(
        [const("one", one),
         helper.make_node("OptionalHasElement", ["xo"], ["has"]),
         helper.make_node("If", ["has"], ["r"], then_branch=then_g, else_branch=else_g)],
        "opt",
        [helper.make_value_info("xo", opt_t)],
        [helper.make_tensor_value_info("has", B, []),
         helper.make_tensor_value_info("r", F, [3])])
    save(g, os.path.join(out, "opt.onnx"))
    xv = f32(3)
    write(os.path.join(out, "opt_present"),
          [("xo", numpy_helper.from_optional(xv, "xo"))],
          [("has", np.array(True)), ("r", xv + 1)])
    write(os.path.join(out, "opt_absent"),
          [("xo", numpy_helper.from_optional(None, "xo", dtype=onnx.OptionalProto.TENSOR))],
          [("has", np.array(False)), ("r", np.zeros(3, np.float32))])

    # An optional sequence input.
    opt_s = helper.make_optional_type_proto(seq_type(F, ["N"]))
    g = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["xso"], ["xs"]),
         helper.make_node("ConcatFromSequence", ["xs"], ["cat"], axis=0)],
        "opt_seq",
        [helper.make_value_info("xso", opt_s)],
        [helper.make_tensor_value_info("cat", F, ["M"])])
    save(g, os.path.join(out, "opt_seq.onnx"))
    parts = [f32(2), f32(3)]
    write(os.path.join(out, "opt_seq"),
          [("xso", numpy_helper.from_optional(parts, "xso"))],
          [("cat", np.concatenate(parts))])

    # A Loop whose trip count is a graph input: the sequence it builds has a
    # length known only at run time.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("SequenceInsert", ["acc_in", "fi"], ["acc_out"])],
        "loop_body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_value_info("acc_in", seq_type(F, []))],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_value_info("acc_out", seq_type(F, []))])
    g = helper.make_graph(
        [const("t", np.array(True)),
         helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
         helper.make_node("Loop", ["m", "t", "empty"], ["ys"], body=body),
         helper.make_node("ConcatFromSequence", ["ys"], ["cat"], axis=0, new_axis=1)],
        "runtime_trip",
        [helper.make_tensor_value_info("m", I64, [])],
        [helper.make_tensor_value_info("cat", F, ["M"])])
    p = save(g, os.path.join(out, "runtime_trip.onnx"))
    run(p, {"m": np.array(3, np.int64)}, os.path.join(out, "runtime_trip"))


if __name__ == "__main__":
    main(sys.argv[1])
