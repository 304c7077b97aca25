"""Writes small binary ONNX models for the import tests that the ONNX text
syntax of libonnx 1.12 cannot express (empty input/output names, value_info,
node names, external data).

usage: make_model.py NAME OUT_DIR

Writes OUT_DIR/model.onnx (plus any external data files the model needs).
"""

import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def model(graph, opset=13):
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)],
                        ir_version=8)


def loop_body():
    """cond_out = cond_in; y_out = y_in + 1; scan_out = y_out."""
    return h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Constant", [], ["one"],
                        value=h.make_tensor("one", T.FLOAT, [1], [1.0])),
            h.make_node("Add", ["y_in", "one"], ["y_out"]),
            h.make_node("Identity", ["y_out"], ["scan_out"]),
        ],
        "body",
        [vi("iter", T.INT64, []), vi("cond_in", T.BOOL, []),
         vi("y_in", T.FLOAT, [1])],
        [vi("cond_out", T.BOOL, []), vi("y_out", T.FLOAT, [1]),
         vi("scan_out", T.FLOAT, [1])],
    )


def loop_no_trip_count(out):
    # Loop(M = "", cond, y): no trip count. The loop's own results have no
    # declared types; Identity nodes hand them to the graph outputs.
    g = h.make_graph(
        [
            h.make_node("Loop", ["", "cond", "y"], ["ly", "ls"],
                        body=loop_body(), name="the_loop"),
            h.make_node("Identity", ["ly"], ["res_y"]),
            h.make_node("Identity", ["ls"], ["res_scan"]),
        ],
        "g",
        [vi("cond", T.BOOL, []), vi("y", T.FLOAT, [1])],
        [vi("res_y", T.FLOAT, [1]), vi("res_scan", T.FLOAT, [None, 1])],
    )
    return model(g)


def layer_norm_skip_mean(out):
    # LayerNormalization with outputs (Y, "", InvStdDev): Mean is absent.
    g = h.make_graph(
        [h.make_node("LayerNormalization", ["x", "s"], ["y", "", "inv"],
                     name="ln")],
        "g",
        [vi("x", T.FLOAT, ["N", 10]), vi("s", T.FLOAT, [10])],
        [vi("y", T.FLOAT, ["N", 10]), vi("inv", T.FLOAT, ["N", 1])],
    )
    return model(g, 17)


def value_info_mismatch(out):
    # value_info declares the named node's output float[3]; its input is
    # float[4].
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["r"], name="relu_1"),
         h.make_node("Neg", ["r"], ["y"], name="neg_1")],
        "g",
        [vi("x", T.FLOAT, [4])],
        [vi("y", T.FLOAT, [4])],
        value_info=[vi("r", T.FLOAT, [3])],
    )
    return model(g)


def _external(out, location, offset=None, length=None, dims=(4,)):
    t = T()
    t.name = "w"
    t.data_type = T.FLOAT
    t.dims.extend(dims)
    t.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            e = t.external_data.add()
            e.key = key
            e.value = str(value)
    n = 1
    for d in dims:
        n *= d
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "g",
                     [vi("x", T.FLOAT, list(dims))],
                     [vi("y", T.FLOAT, list(dims))], initializer=[t])
    return model(g)


def _floats(values):
    import struct
    return struct.pack("<%df" % len(values), *values)


def ext_inside(out):
    # weights.bin holds 2 padding floats, then w = [0, 1, 2, 3].
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        f.write(_floats([-7.0, -7.0, 0.0, 1.0, 2.0, 3.0]))
    return _external(out, "weights.bin", offset=8, length=16)


def ext_inside_large(out):
    # A 32-element external tensor: imported as a dense resource.
    with open(os.path.join(out, "big.bin"), "wb") as f:
        f.write(_floats([float(i) for i in range(32)]))
    return _external(out, "big.bin", dims=(32,))


def _outside_file(out):
    # A real file next to (not inside) the model's directory.
    path = os.path.join(os.path.dirname(os.path.abspath(out)), "outside.bin")
    with open(path, "wb") as f:
        f.write(_floats([0.0, 1.0, 2.0, 3.0]))
    return path


def ext_dotdot(out):
    _outside_file(out)
    return _external(out, "../outside.bin")


def ext_absolute(out):
    return _external(out, _outside_file(out))


def ext_symlink(out):
    target = _outside_file(out)
    link = os.path.join(out, "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)
    return _external(out, "link.bin")


def ext_range(out):
    # The file holds 4 floats; the tensor asks for 16 bytes at offset 8.
    with open(os.path.join(out, "short.bin"), "wb") as f:
        f.write(_floats([0.0, 1.0, 2.0, 3.0]))
    return _external(out, "short.bin", offset=8, length=16)


MODELS = {
    "loop-no-trip-count": loop_no_trip_count,
    "layer-norm-skip-mean": layer_norm_skip_mean,
    "value-info-mismatch": value_info_mismatch,
    "ext-inside": ext_inside,
    "ext-inside-large": ext_inside_large,
    "ext-dotdot": ext_dotdot,
    "ext-absolute": ext_absolute,
    "ext-symlink": ext_symlink,
    "ext-range": ext_range,
}


def main():
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    m = MODELS[name](out)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
