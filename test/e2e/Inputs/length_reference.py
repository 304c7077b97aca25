#!/usr/bin/env python3
"""Writes inputs of Inputs/length_models.py's encoder at one batch and length
(input_ids in [0, 50), an attention_mask of ones with the last keys of
every other sample hidden) and ONNX Runtime's outputs for them:
OUTDIR/input_0.npy, input_1.npy, output_0.npy, output_1.npy.

  length_reference.py MODEL.onnx OUTDIR BATCH LENGTH [--seed N]
"""
import argparse

import numpy as np
import onnxruntime as ort

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("outdir")
ap.add_argument("batch", type=int)
ap.add_argument("length", type=int)
ap.add_argument("--seed", type=int, default=0)
a = ap.parse_args()
rng = np.random.default_rng(a.seed)
ids = rng.integers(0, 50, (a.batch, a.length)).astype(np.int64)
mask = np.ones((a.batch, a.length), np.int64)
for b in range(1, a.batch, 2):
    mask[b, a.length - a.length // 3:] = 0
sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
outs = sess.run(None, {"input_ids": ids, "attention_mask": mask})
for k, x in enumerate([ids, mask]):
    np.save("%s/input_%d.npy" % (a.outdir, k), x)
for k, x in enumerate(outs):
    np.save("%s/output_%d.npy" % (a.outdir, k), x)
