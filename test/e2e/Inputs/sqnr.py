#!/usr/bin/env python3
"""Signal-to-quantization-noise ratio of an output against a reference:

  sqnr.py REFERENCE.npy OUTPUT.npy MIN_DB

prints `sqnr: X dB` and exits 1 when X is below MIN_DB (or the shapes
differ): 10 log10(sum(ref^2) / sum((out - ref)^2)).
"""
import sys

import numpy as np


def main():
    ref, out, floor = np.load(sys.argv[1]), np.load(sys.argv[2]), float(sys.argv[3])
    if ref.shape != out.shape:
        print("sqnr: shapes differ: %s and %s" % (ref.shape, out.shape))
        return 1
    noise = float(((out.astype(np.float64) - ref) ** 2).sum())
    db = float("inf") if noise == 0 else 10 * np.log10(float((ref.astype(np.float64) ** 2).sum()) / noise)
    print("sqnr: %.1f dB (at least %.1f)" % (db, floor))
    return 0 if db >= floor else 1


if __name__ == "__main__":
    sys.exit(main())
