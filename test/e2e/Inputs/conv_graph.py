"""Builds test models of convolutions with seeded random weights (each
scaled by 1/sqrt of its fan-in), for depthwise_convs.py and
packed_convs.py."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class ConvGraph:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.inits, self.nodes = [], []

    def weight(self, name, shape):
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:])))
            .astype(np.float32), name))
        return name

    def scalar(self, name, v):
        self.inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
        return name

    def conv(self, name, x, cin, cout, k, group=1, bias=True, out=None, **attrs):
        """A k x k Conv `name` of `x` (weights, then bias, drawn in that
        order); returns its output, `out` or NAME_conv."""
        ins = [x, self.weight(name + "_w", [cout, cin // group, k, k])]
        if bias:
            ins.append(self.weight(name + "_b", [cout]))
        out = out or name + "_conv"
        attrs.setdefault("kernel_shape", [k, k])
        if group != 1:
            attrs["group"] = group
        self.nodes.append(helper.make_node("Conv", ins, [out], name=name, **attrs))
        return out

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out + "_" + op.lower(),
                                           **attrs))
        return out

    def save(self, path, name, inputs, outputs):
        """`inputs`, `outputs`: (name, shape) pairs, all float."""
        f = TensorProto.FLOAT
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, f, s) for n, s in outputs],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                  ir_version=8)
        onnx.checker.check_model(model)
        onnx.save(model, path)
