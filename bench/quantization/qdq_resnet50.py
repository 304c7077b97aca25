#!/usr/bin/env python3
"""QDQ ResNet-50 through Kiln, folded into integer kernels and not.

Quantizes build/bench-models/resnet50.onnx with onnxruntime's
quantize_static (QDQ format, per-channel weights, 4 seeded random
calibration inputs), runs it in ONNX Runtime on one seeded input, compiles
it with kiln-compile with and without --fold-qdq, and for each prints the
folded convolution count, kiln-run's check against ONNX Runtime (within
one quantization step of the logits) and its --benchmark latency.

  python3 bench/quantization/qdq_resnet50.py [--bin build/bin] [--out build/qdq]
      [--models-dir build/bench-models] [--threads 2]
"""
import argparse
import os
import subprocess

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/qdq")
    ap.add_argument("--models-dir", default="build/bench-models")
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          quantize_static)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    cal = iter([{"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
                for _ in range(4)])

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(cal, None)

    qdq = os.path.join(args.out, "resnet50-qdq.onnx")
    quantize_static(os.path.join(args.models_dir, "resnet50.onnx"), qdq, Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=True)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    xp, yp = os.path.join(args.out, "input_0.npy"), os.path.join(args.out, "output_0.npy")
    np.save(xp, x)
    np.save(yp, ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
            .run(None, {"input": x})[0])
    model = onnx.load(qdq)
    scales = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    last = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and
            n.output[0] == model.graph.output[0].name][0]
    step = float(scales[last.input[1]])
    print("quantization step of the logits: %.4g" % step)
    for flags in ([], ["--fold-qdq"]):
        kmod = os.path.join(args.out, "resnet50-qdq%s.kmod" % ("-fold" if flags else ""))
        subprocess.run([os.path.join(args.bin, "kiln-compile"), qdq, "-o", kmod,
                        "--input-shape=input:1x3x224x224"] + flags, check=True)
        ir = subprocess.run([os.path.join(args.bin, "kiln-opt"), qdq,
                             "--input-shape=input:1x3x224x224", "--kiln-infer-shapes"] +
                            (["--kiln-fold-qdq"] if flags else []),
                            capture_output=True, text=True, check=True).stdout
        run = subprocess.run([os.path.join(args.bin, "kiln-run"), kmod, "--input", xp,
                              "--expected", yp, "--rtol", "0", "--atol", "%.6g" % (step * 1.001),
                              "--threads", args.threads, "--benchmark", "--warmup", "2",
                              "--iterations", "10"], capture_output=True, text=True)
        print("%s: %d integer convolutions, %d float ones" % (
            " ".join(flags) or "default", ir.count("kiln.qlinear_conv"), ir.count("kiln.conv(")))
        print("  " + "\n  ".join(run.stdout.strip().splitlines()[1:]))


if __name__ == "__main__":
    main()
