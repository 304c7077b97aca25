#!/usr/bin/env python3
"""Writes a uint8 x int8 product in linalg (extui activations, constant
weights in [-127, 127]) as a kiln-compile .mlir input, its input and its
exact output. The ONNX lowering turns uint8 activations into int8 ones
before the CPU's 8-bit kernels see them; this reaches those kernels'
unsigned-activation form (kiln-cpu-int8-gemm) directly.

  uint8_matmul.py OUTDIR   (writes OUTDIR/m.mlir, x.npy, y.npy)
"""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, size=(16, 64)).astype(np.uint8)
    w = rng.integers(-127, 128, size=(64, 32)).astype(np.int8)
    # kiln-run reads the input as the function's i8 tensor: the same bytes.
    np.save(os.path.join(out, "x.npy"), x.view(np.int8))
    np.save(os.path.join(out, "y.npy"),
            (x.astype(np.int64) @ w.astype(np.int64)).astype(np.int32))
    rows = ",".join("[" + ",".join(str(v) for v in r) + "]" for r in w)
    with open(os.path.join(out, "m.mlir"), "w") as f:
        f.write(f"""#a = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @main(%x: tensor<16x64xi8> {{kiln.name = "x"}}) -> (tensor<16x32xi32> {{kiln.name = "y"}}) {{
  %w = arith.constant dense<[{rows}]> : tensor<64x32xi8>
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x32xi32>
  %acc = linalg.fill ins(%z : i32) outs(%e : tensor<16x32xi32>) -> tensor<16x32xi32>
  %0 = linalg.generic {{indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]}} ins(%x, %w : tensor<16x64xi8>, tensor<64x32xi8>) outs(%acc : tensor<16x32xi32>) {{
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extui %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  }} -> tensor<16x32xi32>
  return %0 : tensor<16x32xi32>
}}
""")


if __name__ == "__main__":
    main()
