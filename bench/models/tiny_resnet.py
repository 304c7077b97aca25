#!/usr/bin/env python3
"""Builds the small ResNet-style CNN of Kiln's README main job.

A stem (Conv-BatchNorm-Relu), two basic residual blocks (the second
downsampling with a strided 1x1 projection shortcut), global average
pooling, Flatten and a Gemm classifier, at opset 18 with a symbolic batch
dim, as `torch.onnx.export` writes such a network. Weights are random from a
fixed seed. Only the `onnx` package and numpy are needed.

  bench/models/tiny_resnet.py OUT.onnx [--classes 10] [--width 16]
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def weight(self, base, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        scale = scale if scale is not None else np.sqrt(2.0 / fan_in)
        w = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(w, n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv_bn(self, x, cin, cout, k, stride, relu=True):
        w = self.weight("conv.weight", [cout, cin, k, k])
        y = self.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4)
        gamma = self.weight("bn.weight", [cout], 0.1)
        beta = self.weight("bn.bias", [cout], 0.1)
        mean = self.weight("bn.running_mean", [cout], 0.1)
        var = self.name("bn.running_var")
        self.inits.append(numpy_helper.from_array(
            (1.0 + 0.1 * np.abs(self.rng.standard_normal(cout))).astype(np.float32), var))
        # Tie gamma near 1 so activations keep their scale through the net.
        self.inits[-4] = numpy_helper.from_array(
            (1.0 + numpy_helper.to_array(self.inits[-4])).astype(np.float32), gamma)
        y = self.node("BatchNormalization", [y, gamma, beta, mean, var], epsilon=1e-5)
        return self.node("Relu", [y]) if relu else y

    def basic_block(self, x, cin, cout, stride):
        y = self.conv_bn(x, cin, cout, 3, stride)
        y = self.conv_bn(y, cout, cout, 3, 1, relu=False)
        shortcut = x if stride == 1 and cin == cout else self.conv_bn(x, cin, cout, 1, stride, relu=False)
        return self.node("Relu", [self.node("Add", [y, shortcut])])


def build(classes=10, width=16, seed=0):
    b = Builder(seed)
    x = "input"
    y = b.conv_bn(x, 3, width, 3, 1)
    y = b.basic_block(y, width, width, 1)
    y = b.basic_block(y, width, 2 * width, 2)
    y = b.node("GlobalAveragePool", [y])
    y = b.node("Flatten", [y], axis=1)
    w = b.weight("fc.weight", [classes, 2 * width])
    bias = b.weight("fc.bias", [classes], 0.01)
    y = b.node("Gemm", [y, w, bias], transB=1)
    b.nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        b.nodes, "tiny_resnet",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", classes])],
        initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="kiln-bench")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--width", type=int, default=16)
    args = ap.parse_args()
    onnx.save(build(args.classes, args.width), args.out)


if __name__ == "__main__":
    main()
