#!/usr/bin/env python3
"""Accuracy of Kiln's reduced precisions on real data: scikit-learn's
`digits` (1797 handwritten 8x8 digits, shipped inside the scikit-learn
wheel; nothing is downloaded).

Trains two small models with PyTorch (fixed seeds, well under a minute on
one CPU core), exports each to ONNX with both exporters (TorchScript,
`dynamo=False`, and `torch.export`, `dynamo=True`), compiles each with
`kiln-compile --precision=P` and reports top-1 accuracy on the held-out
test split (540 images) for PyTorch, ONNX Runtime and each Kiln precision,
and for INT8: onnxruntime's quantize_static (QDQ, per-channel int8
weights, int8 activations, calibrated on 300 training images) run by ONNX
Runtime and by Kiln (integer kernels, the default), and Kiln's own INT8
and FP8 (`--precision=int8|fp8`, calibrated on the same 300 images with
each `--calibration-method`; fp8 with minmax and percentile), each with
the largest logit difference from Kiln's own f32 module:

  mlp   64 -> 128 -> 64 -> 10, ReLU
  cnn   Conv 3x3 (1->16) ReLU, Conv 3x3 (16->32) ReLU, MaxPool 2,
        Gemm 128 -> 10

  python3 bench/quantization/digits.py [--bin build/bin] [--out build/digits]
      [--precisions fp32,fp16,bf16] [--target cpu] [--markdown FILE]

GPU targets run through the kernel emulator (`--target=sm_90`), which
executes the same kernels a GPU would.
Needs torch, onnx, onnxruntime and scikit-learn (bench/requirements.txt).
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def load():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8] in [0, 1]
    return train_test_split(x, d.target.astype(np.int64), test_size=540,
                            random_state=0, stratify=d.target)


def models():
    import torch.nn as nn
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64),
                        nn.ReLU(), nn.Linear(64, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(32 * 16, 10))
    return {"mlp": mlp, "cnn": cnn}


def train(model, x, y, epochs=40):
    import torch
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    g = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        for idx in torch.randperm(len(xs), generator=g).split(64):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xs[idx]), ys[idx]).backward()
            opt.step()
    return model.eval()


def reset(model):
    """Seeded initial weights (kaiming-uniform matrices, small biases)."""
    import torch
    torch.manual_seed(0)
    for p in model.parameters():
        if p.dim() > 1:
            torch.nn.init.kaiming_uniform_(p, a=5 ** 0.5)
        else:
            torch.nn.init.uniform_(p, -0.05, 0.05)
    return model


def export(model, path, exporter, sample):
    """`model` as ONNX at `path` with a symbolic batch, by the TorchScript
    exporter (`exporter` "torchscript") or torch.export ("dynamo")."""
    import torch
    torch.onnx.export(model, (torch.from_numpy(sample),), path,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}
                      if exporter == "torchscript" else None,
                      dynamic_shapes=({0: torch.export.Dim("batch")},)
                      if exporter == "dynamo" else None,
                      dynamo=exporter == "dynamo")


def quantize_qdq(onnx_path, qdq_path, in_name, calibration):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{in_name: calibration[i:i + 1]} for i in range(len(calibration))])

        def get_next(self):
            return next(self.data, None)

    quantize_static(onnx_path, qdq_path, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("digits.py: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/digits")
    ap.add_argument("--precisions", default="fp32,fp16,bf16")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    import torch
    import onnxruntime as ort

    os.makedirs(args.out, exist_ok=True)
    xtr, xte, ytr, yte = load()
    np.save(os.path.join(args.out, "x_test.npy"), xte)
    # Calibration samples for kiln-compile --precision=int8: the first 300
    # training images (those quantize_static calibrates on), one per folder.
    cal_dir = os.path.join(args.out, "calibration")
    for i in range(300):
        os.makedirs(os.path.join(cal_dir, "%03d" % i), exist_ok=True)
        np.save(os.path.join(cal_dir, "%03d" % i, "input_0.npy"), xtr[i:i + 1])
    device = "cpu" if args.target == "cpu" else "emulator"
    rows = []
    for name, model in models().items():
        train(reset(model), xtr, ytr)
        with torch.no_grad():
            torch_acc = float((model(torch.from_numpy(xte)).argmax(1).numpy() == yte).mean())
        for exporter in ("torchscript", "dynamo"):
            onnx_path = os.path.join(args.out, "%s-%s.onnx" % (name, exporter))
            export(model, onnx_path, exporter, xte[:2])
            sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            in_name = sess.get_inputs()[0].name
            ort_acc = float((sess.run(None, {in_name: xte})[0].argmax(1) == yte).mean())
            ref = None
            for prec in args.precisions.split(","):
                kmod = os.path.join(args.out, "%s-%s-%s.kmod" % (name, exporter, prec))
                logits = os.path.join(args.out, "%s-%s-%s.npy" % (name, exporter, prec))
                run([os.path.join(args.bin, "kiln-compile"), onnx_path, "-o", kmod,
                     "--target=" + args.target, "--precision=" + prec,
                     "--input-shape=%s:%dx1x8x8" % (in_name, len(xte))])
                run([os.path.join(args.bin, "kiln-run"), kmod, "--device=" + device,
                     "--input", os.path.join(args.out, "x_test.npy"), "--output", logits])
                out = np.load(logits)
                if prec == "fp32":
                    ref = out
                row = {"model": name, "exporter": exporter, "precision": prec,
                       "torch": torch_acc, "ort": ort_acc,
                       "kiln": float((out.argmax(1) == yte).mean()),
                       "max_diff": float(np.abs(out - ref).max()) if ref is not None else None,
                       "logit_scale": float(np.abs(out).max())}
                rows.append(row)
                print(row, flush=True)
            # INT8: onnxruntime's quantize_static (QDQ, per-channel int8
            # weights, int8 activations) calibrated on 300 training images;
            # ONNX Runtime and Kiln (kiln-fold-qdq: integer kernels) run
            # the same QDQ model.
            qdq_path = os.path.join(args.out, "%s-%s-qdq.onnx" % (name, exporter))
            quantize_qdq(onnx_path, qdq_path, in_name, xtr[:300])
            qsess = ort.InferenceSession(qdq_path, providers=["CPUExecutionProvider"])
            ort_logits = qsess.run(None, {in_name: xte})[0]
            ort_q = float((ort_logits.argmax(1) == yte).mean())
            kmod = os.path.join(args.out, "%s-%s-qdq.kmod" % (name, exporter))
            logits = os.path.join(args.out, "%s-%s-qdq.npy" % (name, exporter))
            run([os.path.join(args.bin, "kiln-compile"), qdq_path, "-o", kmod,
                 "--target=" + args.target,
                 "--input-shape=%s:%dx1x8x8" % (in_name, len(xte))])
            run([os.path.join(args.bin, "kiln-run"), kmod, "--device=" + device,
                 "--input", os.path.join(args.out, "x_test.npy"), "--output", logits])
            out = np.load(logits)
            row = {"model": name, "exporter": exporter, "precision": "int8 (QDQ)",
                   "torch": torch_acc, "ort": ort_acc, "ort_int8": ort_q,
                   "kiln": float((out.argmax(1) == yte).mean()),
                   "max_diff": float(np.abs(out - ref).max()),
                   "logit_scale": float(np.abs(out).max()),
                   "ort_int8_diff": float(np.abs(out - ort_logits).max())}
            rows.append(row)
            print(row, flush=True)
            # Kiln's own INT8 and FP8 (kiln-compile --precision=int8|fp8),
            # calibrated on the same 300 training images, one sample each,
            # with each calibration method.
            for prec, method in (("int8", "entropy"), ("int8", "percentile"),
                                 ("int8", "minmax"), ("fp8", "minmax"),
                                 ("fp8", "percentile")):
                kmod = os.path.join(args.out, "%s-%s-%s-%s.kmod" % (name, exporter, prec, method))
                logits = os.path.join(args.out, "%s-%s-%s-%s.npy" % (name, exporter, prec, method))
                run([os.path.join(args.bin, "kiln-compile"), onnx_path, "-o", kmod,
                     "--target=" + args.target, "--precision=" + prec,
                     "--calibration-data=" + cal_dir, "--calibration-method=" + method,
                     "--input-shape=%s:%dx1x8x8" % (in_name, len(xte))])
                run([os.path.join(args.bin, "kiln-run"), kmod, "--device=" + device,
                     "--input", os.path.join(args.out, "x_test.npy"), "--output", logits])
                out = np.load(logits)
                row = {"model": name, "exporter": exporter,
                       "precision": "%s (Kiln, %s)" % (prec, method),
                       "torch": torch_acc, "ort": ort_acc, "ort_int8": ort_q,
                       "kiln": float((out.argmax(1) == yte).mean()),
                       "max_diff": float(np.abs(out - ref).max()),
                       "logit_scale": float(np.abs(out).max())}
                rows.append(row)
                print(row, flush=True)
    lines = ["| model | exporter | Kiln precision | PyTorch f32 | ONNX Runtime f32 "
             "| ONNX Runtime int8 | Kiln | max logit diff from Kiln f32 (largest logit) "
             "|",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        diff = "-" if r["max_diff"] is None else "%.2g (%.1f)" % (r["max_diff"], r["logit_scale"])
        if "ort_int8_diff" in r:
            diff += "; from ONNX Runtime int8: %.2g" % r["ort_int8_diff"]
        lines.append("| %s | %s | %s | %.2f%% | %.2f%% | %s | %.2f%% | %s |" % (
            r["model"], r["exporter"], r["precision"], 100 * r["torch"], 100 * r["ort"],
            "%.2f%%" % (100 * r["ort_int8"]) if "ort_int8" in r else "-",
            100 * r["kiln"], diff))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
