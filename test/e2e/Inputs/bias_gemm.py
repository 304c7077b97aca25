"""Writes a Gemm with a bias (y = x w^T + b, x [6272, 1024], w [256, 1024]):
in half precision on sm_90a it takes the mma.sync 64x64x32 tile in three
stages (98 blocks of 128x128 are too few for wgmma), whose loop over K
ptxas unrolls and spills from unless told not to (--gpu-unroll-k-loop).

  bias_gemm.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

M, K, N = 6272, 1024, 256
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((N, K)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal(N).astype(np.float32), "b")
graph = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="gemm")],
    "bias_gemm",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])],
    [w, b])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          sys.argv[1])
