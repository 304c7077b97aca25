#!/usr/bin/env python3
"""Writes models with If, Loop and Scan, seeded inputs and ONNX Runtime's
outputs for them (.npy), for test/e2e/control-flow.test:

  OUTDIR/if.onnx         If on a bool input; the branches use outer values
                         (a weight, the input) and yield two outputs.
      OUTDIR/if_true/, OUTDIR/if_false/: inputs and outputs for each branch
  OUTDIR/if_const.onnx   If on a Constant condition (folded at compile time)
  OUTDIR/loop.onnx       Loop with a constant trip count: two loop-carried
                         values, the iteration number used, a scan output.
  OUTDIR/while.onnx      Loop whose condition the body computes from a
                         graph input (the trip count known only at run time).
      OUTDIR/while_2/, OUTDIR/while_7/: a limit of 2 and of 7
  OUTDIR/fib.onnx        Loop whose carried values trade places: (a, b) ->
                         (b, a + b), six times.
  OUTDIR/collect.onnx    Loop (at most 10 times) that stops when its running
                         sum passes a limit (a graph input) and collects
                         each iteration's sum: a scan output as long as the
                         loop ran.
      OUTDIR/collect_3/, OUTDIR/collect_9/: limits reached after 3 and 9
  OUTDIR/nested.onnx     Loop (4 times) whose body holds an If on the
                         iteration's parity (x2 when even, +1 when odd).
  OUTDIR/scan.onnx       Scan (opset 11): one state, two scan inputs (axis
                         0 forward, axis 1 reverse), two scan outputs (axis
                         0, axis 1 reverse).
Each single-case model's data is in OUTDIR/NAME/input_K.npy, output_K.npy.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
rng = np.random.default_rng(7)


def const(name, array):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(array), name))


def save(model, path):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def run(path, feeds, outdir):
    os.makedirs(outdir, exist_ok=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    for k, x in enumerate(feeds.values()):
        np.save(os.path.join(outdir, "input_%d.npy" % k), x)
    for k, y in enumerate(sess.run(None, feeds)):
        np.save(os.path.join(outdir, "output_%d.npy" % k), y)


def if_model(constant):
    w = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "w")
    then = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"]),
         helper.make_node("Relu", ["mm"], ["t0"]),
         helper.make_node("Add", ["x", "t0"], ["t1"])],
        "then", [], [helper.make_tensor_value_info("t0", F, [4, 8]),
                     helper.make_tensor_value_info("t1", F, [4, 8])])
    els = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["e0"]),
         const("two", np.float32(2)),
         helper.make_node("Mul", ["x", "two"], ["e1"])],
        "else", [], [helper.make_tensor_value_info("e0", F, [4, 8]),
                     helper.make_tensor_value_info("e1", F, [4, 8])])
    nodes = [helper.make_node("If", ["flag"], ["y0", "y1"], then_branch=then,
                              else_branch=els)]
    inputs = [helper.make_tensor_value_info("x", F, [4, 8])]
    if constant:
        nodes.insert(0, const("flag", np.array(False)))
    else:
        inputs.append(helper.make_tensor_value_info("flag", B, []))
    graph = helper.make_graph(nodes, "if", inputs,
                              [helper.make_tensor_value_info("y0", F, [4, 8]),
                               helper.make_tensor_value_info("y1", F, [4, 8])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def loop_model():
    # Body (i, cond, a, b) -> (cond, a', b', s): a' = tanh(a) * 0.5 + i,
    # b' = b + a', s = ReduceSum(a', axis 1).
    body = helper.make_graph(
        [helper.make_node("Tanh", ["a"], ["ta"]),
         const("half", np.float32(0.5)),
         helper.make_node("Mul", ["ta", "half"], ["ha"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["ha", "fi"], ["a2"]),
         helper.make_node("Add", ["b", "a2"], ["b2"]),
         const("axes", np.array([1], np.int64)),
         helper.make_node("ReduceSum", ["a2", "axes"], ["s"], keepdims=0),
         helper.make_node("Identity", ["cond"], ["cond2"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond", B, []),
         helper.make_tensor_value_info("a", F, [3, 4]),
         helper.make_tensor_value_info("b", F, [3, 4])],
        [helper.make_tensor_value_info("cond2", B, []),
         helper.make_tensor_value_info("a2", F, [3, 4]),
         helper.make_tensor_value_info("b2", F, [3, 4]),
         helper.make_tensor_value_info("s", F, [3])])
    graph = helper.make_graph(
        [const("m", np.array(5, np.int64)), const("c", np.array(True)),
         helper.make_node("Loop", ["m", "c", "x", "x"], ["a", "b", "s"], body=body)],
        "loop", [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("a", F, [3, 4]),
         helper.make_tensor_value_info("b", F, [3, 4]),
         helper.make_tensor_value_info("s", F, [5, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def while_model():
    # Doubles x while the iteration number is below the limit (at most 10).
    body = helper.make_graph(
        [helper.make_node("Add", ["v", "v"], ["v2"]),
         const("one", np.array(1, np.int64)),
         helper.make_node("Add", ["i", "one"], ["next"]),
         helper.make_node("Less", ["next", "limit"], ["go"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond", B, []),
         helper.make_tensor_value_info("v", F, [2, 3])],
        [helper.make_tensor_value_info("go", B, []),
         helper.make_tensor_value_info("v2", F, [2, 3])])
    graph = helper.make_graph(
        [const("m", np.array(10, np.int64)), const("c", np.array(True)),
         helper.make_node("Loop", ["m", "c", "x"], ["y"], body=body)],
        "while", [helper.make_tensor_value_info("x", F, [2, 3]),
                  helper.make_tensor_value_info("limit", I64, [])],
        [helper.make_tensor_value_info("y", F, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def fib_model():
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["ab"]),
         helper.make_node("Identity", ["b"], ["b1"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond", B, []),
         helper.make_tensor_value_info("a", F, [5]),
         helper.make_tensor_value_info("b", F, [5])],
        [helper.make_tensor_value_info("cond", B, []),
         helper.make_tensor_value_info("b1", F, [5]),
         helper.make_tensor_value_info("ab", F, [5])])
    graph = helper.make_graph(
        [const("m", np.array(6, np.int64)),
         helper.make_node("Loop", ["m", "", "x", "y"], ["a", "b"], body=body)],
        "fib", [helper.make_tensor_value_info("x", F, [5]),
                helper.make_tensor_value_info("y", F, [5])],
        [helper.make_tensor_value_info("a", F, [5]),
         helper.make_tensor_value_info("b", F, [5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def collect_model():
    # s' = s + x; go on while sum(s') < limit; scan output: s'.
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("ReduceSum", ["s2"], ["t"], keepdims=0),
         helper.make_node("Less", ["t", "limit"], ["go"]),
         helper.make_node("Identity", ["s2"], ["row"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("s", F, [2])],
        [helper.make_tensor_value_info("go", B, []),
         helper.make_tensor_value_info("s2", F, [2]),
         helper.make_tensor_value_info("row", F, [2])])
    graph = helper.make_graph(
        [const("m", np.array(10, np.int64)), const("c0", np.array(True)),
         helper.make_node("Loop", ["m", "c0", "x"], ["s", "rows"], body=body)],
        "collect", [helper.make_tensor_value_info("x", F, [2]),
                    helper.make_tensor_value_info("limit", F, [])],
        [helper.make_tensor_value_info("s", F, [2]),
         helper.make_tensor_value_info("rows", F, ["n", 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nested_model():
    then = helper.make_graph([helper.make_node("Add", ["v", "v"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", F, [3])])
    els = helper.make_graph([helper.make_node("Add", ["v", "one"], ["e"])], "else", [],
                            [helper.make_tensor_value_info("e", F, [3])])
    body = helper.make_graph(
        [const("two", np.array(2, np.int64)),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         const("zero", np.array(0, np.int64)),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["v2"], then_branch=then, else_branch=els),
         helper.make_node("Identity", ["c"], ["c2"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("v", F, [3])],
        [helper.make_tensor_value_info("c2", B, []),
         helper.make_tensor_value_info("v2", F, [3])])
    graph = helper.make_graph(
        [const("m", np.array(4, np.int64)), const("one", np.ones(3, np.float32)),
         helper.make_node("Loop", ["m", "", "x"], ["y"], body=body)],
        "nested", [helper.make_tensor_value_info("x", F, [3])],
        [helper.make_tensor_value_info("y", F, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def scan_model():
    # State s [4]; scan inputs x [6, 4] (axis 0) and y [4, 6] (axis 1,
    # reverse). s' = s + x_t * y_t; outputs s' (axis 0) and x_t - s'
    # (axis 1, reverse).
    body = helper.make_graph(
        [helper.make_node("Mul", ["xt", "yt"], ["p"]),
         helper.make_node("Add", ["s", "p"], ["s2"]),
         helper.make_node("Sub", ["xt", "s2"], ["d"]),
         helper.make_node("Identity", ["s2"], ["o"])],
        "body",
        [helper.make_tensor_value_info("s", F, [4]),
         helper.make_tensor_value_info("xt", F, [4]),
         helper.make_tensor_value_info("yt", F, [4])],
        [helper.make_tensor_value_info("s2", F, [4]),
         helper.make_tensor_value_info("o", F, [4]),
         helper.make_tensor_value_info("d", F, [4])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x", "y"], ["s", "o", "d"], body=body,
                          num_scan_inputs=2, scan_input_axes=[0, 1],
                          scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                          scan_output_directions=[0, 1])],
        "scan", [helper.make_tensor_value_info("s0", F, [4]),
                 helper.make_tensor_value_info("x", F, [6, 4]),
                 helper.make_tensor_value_info("y", F, [4, 6])],
        [helper.make_tensor_value_info("s", F, [4]),
         helper.make_tensor_value_info("o", F, [6, 4]),
         helper.make_tensor_value_info("d", F, [4, 6])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x48 = rng.standard_normal((4, 8)).astype(np.float32)
    p = os.path.join(out, "if.onnx")
    save(if_model(False), p)
    run(p, {"x": x48, "flag": np.array(True)}, os.path.join(out, "if_true"))
    run(p, {"x": x48, "flag": np.array(False)}, os.path.join(out, "if_false"))
    p = os.path.join(out, "if_const.onnx")
    save(if_model(True), p)
    run(p, {"x": x48}, os.path.join(out, "if_const"))
    p = os.path.join(out, "loop.onnx")
    save(loop_model(), p)
    run(p, {"x": rng.standard_normal((3, 4)).astype(np.float32)},
        os.path.join(out, "loop"))
    p = os.path.join(out, "while.onnx")
    save(while_model(), p)
    x23 = rng.standard_normal((2, 3)).astype(np.float32)
    for limit in (2, 7):
        run(p, {"x": x23, "limit": np.array(limit, np.int64)},
            os.path.join(out, "while_%d" % limit))
    p = os.path.join(out, "fib.onnx")
    save(fib_model(), p)
    run(p, {"x": rng.standard_normal(5).astype(np.float32),
            "y": rng.standard_normal(5).astype(np.float32)},
        os.path.join(out, "fib"))
    p = os.path.join(out, "collect.onnx")
    save(collect_model(), p)
    x2 = np.array([1.0, 0.5], np.float32)
    # Sums after k iterations: 1.5 * (k + 1); below 5.5 for k <= 2, 14.5 for k <= 8.
    for rows, limit in ((3, 5.5), (9, 14.5)):
        run(p, {"x": x2, "limit": np.array(limit, np.float32)},
            os.path.join(out, "collect_%d" % rows))
    p = os.path.join(out, "nested.onnx")
    save(nested_model(), p)
    run(p, {"x": rng.standard_normal(3).astype(np.float32)}, os.path.join(out, "nested"))
    p = os.path.join(out, "scan.onnx")
    save(scan_model(), p)
    run(p, {"s0": rng.standard_normal(4).astype(np.float32),
            "x": rng.standard_normal((6, 4)).astype(np.float32),
            "y": rng.standard_normal((4, 6)).astype(np.float32)},
        os.path.join(out, "scan"))


if __name__ == "__main__":
    main()
