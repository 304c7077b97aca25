#!/usr/bin/env python3
"""How far fp16 alone moves a benchmark model's outputs: runs the model of
bench/models/export.py in PyTorch on the CPU in fp16 (`model.half()`) on
the inputs bench/gpu/pack.py packs, and compares its first output with
ONNX Runtime's f32 one with the check compare_torch.py applies to
--precision=fp16 modules (rtol 1e-2, atol 1e-3 of the largest magnitude).
What a GPU module under --precision=fp16 may differ by.

  python3 bench/gpu/fp16_reference.py bert_base EXPECTED.npy INPUT.npy [INPUT.npy ...]
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export  # noqa: E402
from compare_torch import first_output  # noqa: E402


def main():
    name, want_path, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    torch.manual_seed(0)
    model = export.build(name)[0].eval().half()
    args = [torch.from_numpy(np.load(p)) for p in inputs]
    args = [a.half() if a.is_floating_point() else a for a in args]
    want = np.load(want_path)
    with torch.no_grad():
        got = model(*args)
    got = first_output(got).float().numpy()
    atol = max(1e-3, 1e-3 * float(np.abs(want).max()))
    err = np.abs(got - want)
    bad = ~(err <= atol + 1e-2 * np.abs(want))
    print("fp16 %s: max abs err %.3g, %d of %d outside rtol 1e-2 atol %.3g"
          % (name, err.max(), bad.sum(), want.size, atol))


if __name__ == "__main__":
    main()
