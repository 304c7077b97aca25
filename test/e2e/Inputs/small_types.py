#!/usr/bin/env python3
"""Writes two models of conversions to and from the small types, a seeded
input with the edge values (overflow, infinities, NaN, subnormals, ties)
and the ONNX reference evaluator's outputs as TensorProto files (which
pack 4- and 2-bit integers as ONNX does):

  float8.onnx  x[40] f32 -> Cast to E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ (with
               saturation), to E4M3FN and E5M2 without, and each back to f32
  int4.onnx    x[40] f32 -> Cast to FLOAT4E2M1, and (from xi[40], x without
               NaN and infinities, clipped to each type's range: out of
               range the cast is undefined in ONNX) to INT4, UINT4, INT2,
               UINT2; each back to f32

  small_types.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


# The range of each integer target: ONNX leaves a float cast to an integer
# type undefined out of range (the reference evaluator's answer there has
# changed between ml_dtypes releases), so those casts read their input
# clipped to it, from a copy without NaN and infinities.
INT_RANGES = {TensorProto.INT4: (-8, 7), TensorProto.UINT4: (0, 15),
              TensorProto.INT2: (-2, 1), TensorProto.UINT2: (0, 3)}


def model(path, casts):
    nodes, outputs, inits = [], [], []
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [40])]
    for i, (to, saturate) in enumerate(casts):
        attrs = {"to": to}
        if saturate is not None:
            attrs["saturate"] = saturate
        src = "x"
        if to in INT_RANGES:
            if len(inputs) == 1:
                inputs.append(helper.make_tensor_value_info("xi", TensorProto.FLOAT, [40]))
            lo, hi = INT_RANGES[to]
            inits += [numpy_helper.from_array(np.array(lo, np.float32), "lo%d" % i),
                      numpy_helper.from_array(np.array(hi, np.float32), "hi%d" % i)]
            src = "clipped%d" % i
            nodes.append(helper.make_node("Clip", ["xi", "lo%d" % i, "hi%d" % i], [src],
                                          name="clip%d" % i))
        nodes.append(helper.make_node("Cast", [src], ["y%d" % i], name="to%d" % i, **attrs))
        nodes.append(helper.make_node("Cast", ["y%d" % i], ["z%d" % i], name="back%d" % i,
                                      to=TensorProto.FLOAT))
        outputs += [helper.make_tensor_value_info("y%d" % i, to, [40]),
                    helper.make_tensor_value_info("z%d" % i, TensorProto.FLOAT, [40])]
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 11
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    edges = [0.0, -0.0, 1.0, -1.5, 448.0, 464.0, 465.0, -500.0, 240.0, 57344.0, 61440.0,
             1e6, np.inf, -np.inf, np.nan, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -17,
             0.1, 7.6, -8.7, 9.2, -9.5, 15.5, 16.5, 2.5, -2.5]
    x = np.array(edges + list(rng.standard_normal(40 - len(edges)) * 20), np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    xi = np.nan_to_num(x, nan=0.0, posinf=1e6, neginf=-1e6).astype(np.float32)
    np.save(os.path.join(out, "xi.npy"), xi)
    T = TensorProto
    for name, casts in [
            ("float8", [(T.FLOAT8E4M3FN, None), (T.FLOAT8E4M3FNUZ, None), (T.FLOAT8E5M2, None),
                        (T.FLOAT8E5M2FNUZ, None), (T.FLOAT8E4M3FN, 0), (T.FLOAT8E5M2, 0)]),
            ("int4", [(T.INT4, None), (T.UINT4, None), (T.INT2, None), (T.UINT2, None),
                      (T.FLOAT4E2M1, None)])]:
        m = model(os.path.join(out, name + ".onnx"), casts)
        feeds = {"x": x, "xi": xi} if len(m.graph.input) == 2 else {"x": x}
        results = ReferenceEvaluator(m).run(None, feeds)
        for i, r in enumerate(results):
            t = numpy_helper.from_array(np.asarray(r), m.graph.output[i].name)
            with open(os.path.join(out, "%s_%d.pb" % (name, i)), "wb") as f:
                f.write(t.SerializeToString())


if __name__ == "__main__":
    main()
