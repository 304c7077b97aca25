#!/usr/bin/env python3
"""Pruning-aware 2:4 sparsity end to end on real data: scikit-learn's
`digits` (1797 handwritten 8x8 digits shipped inside the scikit-learn
wheel; nothing is downloaded).

Trains an MLP (64 -> 256 -> 256 -> 10, ReLU) with PyTorch (fixed seeds,
the training of bench/quantization/digits.py), then prunes every Linear
weight to 2:4 along its input features K (in each group of four
consecutive inputs of an output, the two largest magnitudes stay) and
fine-tunes it with those masks held. Both models are exported with both
PyTorch exporters (TorchScript, `dynamo=False`, and `torch.export`,
`dynamo=True`) and compiled by Kiln for the 540 held-out test images:

  - the 2:4-trained model dense (`--sparsity=off`) and sparse
    (`--sparsity=on`): the same accuracy, outputs within f32 rounding;
  - the dense-trained model dense and with `--sparsity=force` (pruned at
    compile time, no fine-tuning): its accuracy drop.

The batch of 540 is far over the rows where the CPU's sparse kernel is
faster, so the sparse modules are compiled with --cpu-sparse-max-rows
above it to run the sparse kernel anyway (what is checked here is its
output; bench/sparsity/mlp_stack.py measures speed).

With `--target sm_90` (or sm_80) the modules are compiled for the GPU in
half precision (`--precision`, fp16 by default: the sparse tensor cores'
mma.sp) and run through the kernel emulator (`kiln-run
--device=emulator`), no GPU needed.

  python3 bench/sparsity/digits_2to4.py [--bin build/bin] [--out build/digits-2to4]
      [--markdown FILE] [--target sm_90 [--precision fp16|bf16]]

Needs torch, onnx, onnxruntime and scikit-learn (bench/requirements.txt).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "quantization"))
from digits import export, load, reset, run, train  # noqa: E402


def mlp():
    import torch.nn as nn
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256),
                         nn.ReLU(), nn.Linear(256, 10))


def masks_2of4(model):
    """Per Linear layer, the mask keeping the two largest |w| of every four
    consecutive input features of each output."""
    import torch
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Linear):
            w = m.weight.detach()
            g = w.abs().reshape(w.shape[0], -1, 4)
            keep = torch.zeros_like(g, dtype=torch.bool)
            keep.scatter_(2, g.topk(2, dim=2).indices, True)
            out[name] = keep.reshape(w.shape)
    return out


def fine_tune(model, masks, x, y, epochs=20):
    """Training with the 2:4 masks re-applied after every step."""
    import torch
    mods = dict(model.named_modules())

    def apply():
        with torch.no_grad():
            for name, keep in masks.items():
                mods[name].weight.mul_(keep)

    apply()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    g = torch.Generator().manual_seed(1)
    for _ in range(epochs):
        for idx in torch.randperm(len(xs), generator=g).split(64):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xs[idx]), ys[idx]).backward()
            opt.step()
            apply()
    return model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/digits-2to4")
    ap.add_argument("--markdown")
    ap.add_argument("--target", default="cpu", help="cpu, or a GPU chip (sm_80, sm_90)")
    ap.add_argument("--precision", default="fp16",
                    help="GPU targets: fp16 or bf16 (the CPU runs float32)")
    args = ap.parse_args()
    gpu = args.target != "cpu"
    import torch
    import onnxruntime as ort

    os.makedirs(args.out, exist_ok=True)
    xtr, xte, ytr, yte = load()
    x_test = os.path.join(args.out, "x_test.npy")
    np.save(x_test, xte)
    dense = train(reset(mlp()), xtr, ytr)
    sparse = mlp()
    sparse.load_state_dict(dense.state_dict())
    fine_tune(sparse, masks_2of4(sparse), xtr, ytr)

    def acc(logits):
        return float((logits.argmax(1) == yte).mean())

    rows = []
    for trained, model in (("dense", dense), ("2:4", sparse)):
        with torch.no_grad():
            torch_acc = acc(model(torch.from_numpy(xte)).numpy())
        for exporter in ("torchscript", "dynamo"):
            tag = "%s-%s" % ("sparse" if trained == "2:4" else "dense", exporter)
            if gpu:
                tag += "-%s-%s" % (args.target, args.precision)
            onnx_path = os.path.join(args.out, tag + ".onnx")
            export(model, onnx_path, exporter, xte[:2])
            sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            in_name = sess.get_inputs()[0].name
            ort_acc = acc(sess.run(None, {in_name: xte})[0])
            modes = ["off", "on"] if trained == "2:4" else ["off", "force"]
            ref = None
            for mode in modes:
                kmod = os.path.join(args.out, "%s-%s.kmod" % (tag, mode))
                logits = os.path.join(args.out, "%s-%s.npy" % (tag, mode))
                cmd = [os.path.join(args.bin, "kiln-compile"), onnx_path, "-o", kmod,
                       "--sparsity=" + mode, "--report",
                       "--input-shape=%s:%dx1x8x8" % (in_name, len(xte))]
                if gpu:
                    cmd += ["--target=" + args.target, "--precision=" + args.precision]
                elif mode != "off":
                    cmd.append("--cpu-sparse-max-rows=%d" % len(xte))
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode:
                    sys.exit("digits_2to4.py: %s failed:\n%s" % (" ".join(cmd), p.stderr))
                report = p.stderr
                run([os.path.join(args.bin, "kiln-run"), kmod, "--input", x_test,
                     "--output", logits] + (["--device=emulator"] if gpu else []))
                out = np.load(logits)
                if ref is None:
                    ref = out
                m = re.search(r"sparsity: (\d+) of (\d+) contractions run 2:4 sparse", report)
                row = {"trained": trained, "exporter": exporter, "sparsity": mode,
                       "torch": torch_acc, "ort": ort_acc, "kiln": acc(out),
                       "sparse_layers": "%s of %s" % m.groups() if m else "-",
                       "rel_diff": float(np.abs(out - ref).max() / np.abs(ref).max()),
                       "kmod_bytes": os.path.getsize(kmod)}
                rows.append(row)
                print(row, flush=True)
                if mode != "off":
                    print(report[report.find("  sparsity:"):], flush=True)
    lines = ["| trained | exporter | --sparsity | PyTorch | ONNX Runtime | Kiln "
             "| sparse layers | max logit diff from Kiln dense (relative to the largest logit) "
             "| .kmod bytes |",
             "|---|---|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        lines.append("| %s | %s | %s | %.2f%% | %.2f%% | %.2f%% | %s | %.1e | %d |" % (
            r["trained"], r["exporter"], r["sparsity"], 100 * r["torch"], 100 * r["ort"],
            100 * r["kiln"], r["sparse_layers"], r["rel_diff"], r["kmod_bytes"]))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
