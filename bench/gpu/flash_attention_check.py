#!/usr/bin/env python3
"""Kiln's fp16 GPU modules with and without kiln-gpu-flash-attention,
run through the emulator against ONNX Runtime's f32 outputs: the largest
absolute error of each output, fused and unfused (no GPU needed).

Models: the benchmark models (build/bench-models, bench/models/export.py)
at batch 1, 128 tokens, and `sdpa`: a Linear + causal
scaled_dot_product_attention (4 heads of 32, 96 tokens, batch 2) exported
by both PyTorch exporters (dynamo=False and dynamo=True; needs torch).
Inputs are seeded: token ids default_rng(0).integers(0, 30000), BERT's
last 28 tokens and GPT-2's first 5 masked, ViT's image
default_rng(0).standard_normal.

  python3 bench/gpu/flash_attention_check.py [--models bert_1layer,gpt2,vit_b_16,sdpa]
      [--work-dir build/flash-check]

GPT-2 and ViT-B/16 take minutes each on the emulator.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "bin")


def bench_inputs(name):
    rng = np.random.default_rng(0)
    if name == "vit_b_16":
        return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
    ids = rng.integers(0, 30000, (1, 128)).astype(np.int64)
    mask = np.ones((1, 128), np.int64)
    if name.startswith("bert"):
        mask[0, 100:] = 0
    else:
        mask[0, :5] = 0
    return {"input_ids": ids, "attention_mask": mask}


def export_sdpa(work):
    import torch
    import torch.nn.functional as F

    class Attn(torch.nn.Module):
        def __init__(self, d=128, h=4):
            super().__init__()
            self.h = h
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.o = torch.nn.Linear(d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=-1)
            q, k, v = [z.view(b, t, self.h, d // self.h).transpose(1, 2)
                       for z in (q, k, v)]
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o(y.transpose(1, 2).reshape(b, t, d))

    torch.manual_seed(0)
    model = Attn().eval()
    x = torch.randn(2, 96, 128)
    paths = []
    for dynamo in (False, True):
        path = os.path.join(work, "sdpa_%s.onnx" % ("dynamo" if dynamo else "ts"))
        torch.onnx.export(model, (x,), path, dynamo=dynamo, opset_version=18,
                          input_names=["x"])
        paths.append(path)
    return paths, {"x": x.numpy()}


def check(onnx_path, feeds, work, tag):
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    args = []
    for i, inp in enumerate(session.get_inputs()):
        p = os.path.join(work, "%s_in%d.npy" % (tag, i))
        np.save(p, feeds[inp.name])
        args += ["--input", p]
    shapes = ["--input-shape=%s:%s" % (k, "x".join(map(str, v.shape)))
              for k, v in feeds.items()]
    for i, ref in enumerate(session.run(None, feeds)):
        p = os.path.join(work, "%s_out%d.npy" % (tag, i))
        np.save(p, ref)
        args += ["--expected", p]
    for variant, flags in (("fused", []), ("unfused", ["--gpu-flash-attention=false"])):
        kmod = os.path.join(work, "%s_%s.kmod" % (tag, variant))
        subprocess.run([os.path.join(BIN, "kiln-compile"), onnx_path, "--precision=fp16",
                        "--target=sm_90", "-o", kmod] + shapes + flags, check=True)
        run = subprocess.run([os.path.join(BIN, "kiln-run"), kmod, "--device=emulator",
                              "--rtol", "0", "--atol", "1"] + args,
                             capture_output=True, text=True)
        for line in run.stdout.splitlines():
            if line.startswith("output "):
                print("%s %s: %s" % (tag, variant, line), flush=True)
        if run.returncode != 0:
            print("%s %s: kiln-run failed: %s" % (tag, variant, run.stderr.strip()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="bert_1layer,gpt2,vit_b_16,sdpa")
    ap.add_argument("--bench-models", default=os.path.join(ROOT, "build", "bench-models"))
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build", "flash-check"))
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    for name in args.models.split(","):
        if name == "sdpa":
            paths, feeds = export_sdpa(args.work_dir)
            for path in paths:
                tag = os.path.splitext(os.path.basename(path))[0]
                check(path, feeds, args.work_dir, tag)
        else:
            check(os.path.join(args.bench_models, name + ".onnx"), bench_inputs(name),
                  args.work_dir, name)


if __name__ == "__main__":
    sys.exit(main())
