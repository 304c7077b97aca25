#!/usr/bin/env python3
"""Writes the inputs of data-dependent.mlir and numpy's outputs for them, as
.npy files in DIR: input_0 (x, with zeros and repeated values), input_1
(c), output_0 to output_5 (NonZero, Compress along axis 1, sorted Unique's
four outputs).

  data_dependent.py DIR
"""

import os
import sys

import numpy as np

out = sys.argv[1]
x = np.array([[0, 2, 2, 0], [1.5, 0, 2, 7], [0, 0, 1.5, -3]], dtype=np.float32)
c = np.array([True, False, True, True])
y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                      return_counts=True)
arrays = [x, c, np.array(np.nonzero(x), dtype=np.int64), np.compress(c, x, axis=1),
          y, first.astype(np.int64), inverse.reshape(-1).astype(np.int64),
          counts.astype(np.int64)]
names = ["input_0", "input_1"] + ["output_%d" % i for i in range(6)]
for name, a in zip(names, arrays):
    np.save(os.path.join(out, name + ".npy"), a)
