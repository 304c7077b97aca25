"""Writes a test model whose outputs are exact (contractions.py,
convolutions.py): the ONNX file, its inputs and its expected outputs."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def grid(rng, shape):
    """Seeded values that are multiples of 1/16 in [-2, 2]: exact in f32,
    tf32, f16 and bf16, so that their products and (bounded) sums are too."""
    return (rng.integers(-32, 33, size=shape) / 16).astype(np.float32)


def grids(seed):
    """grid() over a generator seeded with `seed`: grids(s)(2, 3)."""
    rng = np.random.default_rng(seed)
    return lambda *shape: grid(rng, shape)


def write(out, name, nodes, inputs, weights, results):
    """`inputs`, `weights`: name -> array; `results`: output name ->
    (float64 value, numpy dtype of the output). Writes OUTDIR/m.onnx,
    input_K.npy and output_K.npy, checking that each output is exact in
    its type."""

    def info(n, dtype, shape):
        t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return helper.make_tensor_value_info(n, t, list(shape))

    graph = helper.make_graph(
        nodes, name,
        [info(k, v.dtype, v.shape) for k, v in inputs.items()],
        [info(k, t, v.shape) for k, (v, t) in results.items()],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "m.onnx"))
    for i, v in enumerate(inputs.values()):
        np.save(os.path.join(out, "input_%d.npy" % i), v)
    for i, (v, t) in enumerate(results.values()):
        exact = v.astype(t)
        assert np.array_equal(exact.astype(np.float64), v), "not exact"
        np.save(os.path.join(out, "output_%d.npy" % i), exact)
