#!/usr/bin/env python3
"""How far tf32 rounding alone moves a benchmark model's outputs: runs the
model of bench/models/export.py in PyTorch on the CPU with every
convolution's and linear layer's operands rounded to tf32 (10 mantissa
bits, to nearest), and compares with ONNX Runtime's f32 outputs, as
bench/gpu/pack.py writes them, with the check compare_torch.py applies
(rtol 1e-2, atol 1e-3). What a GPU module under --gpu-tf32 may differ by.

  python3 bench/gpu/tf32_reference.py resnet50 INPUT.npy EXPECTED.npy
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export  # noqa: E402


def tf32(t):
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def main():
    name, x_path, want_path = sys.argv[1:4]
    torch.manual_seed(0)
    model = export.build(name)[0].eval()
    x = torch.from_numpy(np.load(x_path))
    want = np.load(want_path)
    conv, linear = F.conv2d, F.linear
    with torch.no_grad():
        torch.nn.modules.conv.F.conv2d = lambda i, w, b=None, *a, **k: conv(tf32(i), tf32(w), b, *a, **k)
        torch.nn.modules.linear.F.linear = lambda i, w, b=None: linear(tf32(i), tf32(w), b)
        got = model(x).numpy()
    err = np.abs(got - want)
    bad = ~(err <= 1e-3 + 1e-2 * np.abs(want))
    print("tf32-rounded %s: max abs err %.3g, %d of %d outside rtol 1e-2 atol 1e-3, "
          "max rel err %.3g" % (name, err.max(), bad.sum(), want.size,
                                (err / np.abs(want)).max()))


if __name__ == "__main__":
    main()
