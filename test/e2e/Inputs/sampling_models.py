#!/usr/bin/env python3
"""Builds the models of the sampling-*.test end-to-end tests: GridSample,
RoiAlign and MaxUnpool in the modes ONNX's backend tests leave out. A model
concatenates the results of one op in several modes along an axis, so one
output checks them all.

  gridsample     4-D in every mode, padding and align_corners; 5-D linear
                 and nearest (what ONNX Runtime implements).
  gridsample-nd  one spatial dim, and 5-D cubic, for the ONNX reference.
  roialign       avg and max, both coordinate modes, adaptive and fixed
                 sampling, on regions partly outside the map or malformed.
  maxunpool      2-D with overlapping windows and pads, 1-D, 3-D; the
                 indices are ONNX Runtime's MaxPool Indices of a seeded
                 input.
  maxunpool-output-shape
                 output_shape, for the ONNX reference (ONNX Runtime reads
                 the indices in the output_shape plane, the reference and
                 the backend test in the unpooled one).

  sampling_models.py KIND OUT.onnx
"""

import argparse
import itertools

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PADS = ["zeros", "border", "reflection"]


class Graph:
    def __init__(self):
        self.nodes, self.inputs, self.outputs, self.inits = [], [], [], []

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, out=None, **attrs):
        out = out or "%s_%d" % (op.lower(), len(self.nodes))
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def output(self, name, parts, axis=0, shape=None):
        """Graph output `name`: the concatenation of `parts` (one is renamed)."""
        if len(parts) == 1:
            self.nodes[-1].output[0] = name
        else:
            self.node("Concat", parts, name, axis=axis)
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))

    def model(self, opset):
        g = helper.make_graph(self.nodes, "sampling", self.inputs, self.outputs,
                              initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10)
        return onnx.shape_inference.infer_shapes(m)


def grid_samples(g, x, grid, modes, skip=()):
    return [g.node("GridSample", [x, grid], mode=m, padding_mode=p, align_corners=a)
            for m, p, a in itertools.product(modes, PADS, [0, 1]) if (m, p) not in skip]


def gridsample():
    g = Graph()
    x4, g4 = g.input("x4", [2, 3, 5, 6]), g.input("grid4", [2, 4, 7, 2])
    g.output("y4", grid_samples(g, x4, g4, ["linear", "nearest", "cubic"]), 1)
    x5, g5 = g.input("x5", [1, 2, 3, 4, 5]), g.input("grid5", [1, 3, 4, 2, 3])
    g.output("y5", grid_samples(g, x5, g5, ["linear", "nearest"]), 1)
    return g.model(20)


def roialign():
    g = Graph()
    x = g.input("x", [2, 3, 12, 10])
    rois = g.const("rois", np.array(
        [[0, 0, 9, 9], [2.5, 1.2, 7.7, 11.3], [-3, -2, 3, 2], [5, 5, 4, 3],
         [1, 1, 1.5, 1.2], [8, 8, 30, 25], [-20, -20, -10, -12]], np.float32))
    batch = g.const("batch", np.array([0, 1, 1, 0, 1, 0, 1], np.int64))
    parts = [g.node("RoiAlign", [x, rois, batch], mode=m,
                    coordinate_transformation_mode=c, sampling_ratio=s,
                    spatial_scale=scale, output_height=3, output_width=4)
             for m, c, (s, scale) in itertools.product(
                 ["avg", "max"], ["half_pixel", "output_half_pixel"],
                 [(0, 1.0), (2, 0.5)])]
    g.output("y", parts, 1)
    return g.model(16)


def maxunpool():
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    g = Graph()
    # (pooled input shape, kernel, strides, pads); each pooled shape
    # unpools back to itself.
    cases = [([2, 3, 7, 7], [3, 3], [2, 2], [1, 1, 1, 1]),
             ([1, 2, 6, 7], [3, 2], [2, 3], [1, 0, 0, 1]),
             ([2, 2, 9], [3], [2], [1, 1]),
             ([1, 2, 4, 6, 5], [2, 2, 2], [2, 2, 2], [0, 0, 0, 0, 0, 1])]
    for k, (shape, kernel, strides, pads) in enumerate(cases):
        pool = helper.make_graph(
            [helper.make_node("MaxPool", ["a"], ["p", "i"], kernel_shape=kernel,
                              strides=strides, pads=pads)], "pool",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("p", TensorProto.FLOAT, None),
             helper.make_tensor_value_info("i", TensorProto.INT64, None)])
        model = helper.make_model(pool, opset_imports=[helper.make_opsetid("", 12)],
                                  ir_version=10)
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        # Few distinct values: overlapping windows often pick one element.
        p, i = sess.run(None, {"a": rng.integers(0, 4, shape).astype(np.float32)})
        x = g.input("x%d" % k, list(p.shape))
        g.output("y%d" % k, [g.node("MaxUnpool", [x, g.const("i%d" % k, i)],
                                    kernel_shape=kernel, strides=strides, pads=pads)])
    return g.model(12)


def gridsample_nd():
    g = Graph()
    x3, g3 = g.input("x3", [2, 2, 7]), g.input("grid3", [2, 5, 1])
    # ONNX Runtime and PyTorch clamp cubic's taps, not its point, at the
    # border; the reference differs there, and Kiln follows the former.
    g.output("y3", grid_samples(g, x3, g3, ["linear", "nearest", "cubic"],
                                skip=[("cubic", "border")]), 1)
    x5, g5 = g.input("x5", [1, 1, 2, 3, 4]), g.input("grid5", [1, 2, 1, 2, 3])
    g.output("y5", grid_samples(g, x5, g5, ["cubic"], skip=[("cubic", "border")]), 1)
    return g.model(20)


def maxunpool_output_shape():
    # The indices address the unpooled 4x4 plane, which output_shape pads.
    # ONNX's shape inference does not read output_shape's values: the graph
    # output declares the shape.
    g = Graph()
    x = g.input("x", [1, 2, 2, 2])
    idx = g.const("i", np.array([5, 2, 13, 11, 16, 23, 24, 31], np.int64).reshape(1, 2, 2, 2))
    shape = g.const("shape", np.array([1, 2, 5, 6], np.int64))
    g.output("y", [g.node("MaxUnpool", [x, idx, shape], kernel_shape=[2, 2],
                          strides=[2, 2])], shape=[1, 2, 5, 6])
    return g.model(20)


def main():
    ap = argparse.ArgumentParser()
    kinds = {"gridsample": gridsample, "gridsample-nd": gridsample_nd,
             "roialign": roialign, "maxunpool": maxunpool,
             "maxunpool-output-shape": maxunpool_output_shape}
    ap.add_argument("kind", choices=sorted(kinds))
    ap.add_argument("out")
    args = ap.parse_args()
    onnx.save(kinds[args.kind](), args.out)


if __name__ == "__main__":
    main()
