#!/usr/bin/env python3
"""Loading a module holds its weights once (test/e2e/load-memory.test).

  load_memory.py model OUT.onnx   writes a MatMul with a 32 MiB weight
  load_memory.py check KILN_RUN MODULE
      runs `KILN_RUN MODULE` (random inputs, one run) and checks that its
      peak resident set is at most the module's size plus 32 MiB (the
      process itself, its libraries, the arena): a loader that kept a
      second copy of the weights while loading (a stream, a string, a
      parsed protobuf) would be at least twice the module.
"""
import os
import resource
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((2048, 4096)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "load_memory",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2048])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


def check(kiln_run, module):
    size = os.path.getsize(module)
    subprocess.run([kiln_run, module, "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    mib = 1 << 20
    limit = size + 32 * mib
    print("module %.1f MiB, kiln-run peak RSS %.1f MiB, limit %.1f MiB" % (
        size / mib, peak / mib, limit / mib))
    if size < 30 * mib:
        sys.exit("the module is too small (%d bytes) for the check to mean anything" % size)
    if peak > limit:
        sys.exit("FAIL: kiln-run's peak RSS is %.1f MiB, over the module's size plus 32 MiB"
                 % (peak / mib))
    print("PASS")


if __name__ == "__main__":
    if sys.argv[1] == "model":
        model(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
