#!/usr/bin/env python3
"""A quantized benchmark model's GPU module through the kernel emulator
against its CPU module, output by output and row by row (no GPU needed).

For each model of bench/models/export.py named in --models, compiles
  int8   the model quantized by onnxruntime's quantize_static (QDQ, the
         calibration of qdq_models.py: 4 seeded inputs of batch 1)
  fp8    the float model with --precision=fp8, calibrated on the same 4
for the CPU and for --target (default sm_90a, its wgmma tiles included),
runs both on one seeded input of --batch (the CPU module natively, the GPU
module with --device=emulator, which runs each PTX instruction's exact
semantics), and prints for every output its largest magnitude, the largest
and mean difference, and how many rows (the last dim) differ by more than
1% of the largest magnitude. The integer products are exact on both; what
differs is the order of float sums, so a value near a quantization step
may round to the other neighbour: a few rows then differ, not all of them.

  python3 bench/quantization/emulator_check.py [--models bert_1layer]
      [--batch 1] [--precisions int8,fp8] [--target sm_90a]
      [--bin build/bin] [--models-dir build/bench-models] [--out build/emu-check]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import export  # noqa: E402
import qdq_models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bert_1layer")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--precisions", default="int8,fp8")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--models-dir", default="build/bench-models")
    ap.add_argument("--out", default="build/emu-check")
    args = ap.parse_args()
    failed = False
    for name in args.models.split(","):
        work = os.path.join(args.out, name)
        os.makedirs(work, exist_ok=True)
        onnx_path = export.exported_path(args.models_dir, name)
        outputs = len(onnx.load(onnx_path, load_external_data=False).graph.output)
        cal_dir = os.path.join(work, "calibration")
        cal = qdq_models.calibration(name, cal_dir)
        feeds = qdq_models.inputs_for(name, args.batch, np.random.default_rng(1))
        shapes = ["--input-shape=%s:%s" % (n, "x".join(map(str, v.shape)))
                  for n, v in feeds.items()]
        inputs = []
        for k, v in enumerate(feeds.values()):
            path = os.path.join(work, "input_%d.npy" % k)
            np.save(path, v)
            inputs += ["--input", path]
        for precision in args.precisions.split(","):
            if precision == "int8":
                model, flags = os.path.join(work, "qdq.onnx"), []
                if not os.path.exists(model):
                    qdq_models.quantize_qdq(onnx_path, model, cal)
            elif precision == "fp8":
                model = onnx_path
                flags = ["--precision=fp8", "--calibration-data=" + cal_dir]
            else:
                sys.exit("emulator_check.py: unknown precision '%s'" % precision)
            results = {}
            for target, device in (("cpu", "cpu"), (args.target, "emulator")):
                kmod = os.path.join(work, "%s-%s.kmod" % (precision, target))
                subprocess.run([os.path.join(args.bin, "kiln-compile"), model, "-o", kmod,
                                "--target=" + target] + shapes + flags, check=True)
                outs = [os.path.join(work, "%s-%s-output_%d.npy" % (precision, target, k))
                        for k in range(outputs)]
                cmd = [os.path.join(args.bin, "kiln-run"), kmod, "--device=" + device] + inputs
                for o in outs:
                    cmd += ["--output", o]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                results[device] = [np.load(o) for o in outs]
            for k, (cpu, emu) in enumerate(zip(results["cpu"], results["emulator"])):
                diff = np.abs(cpu.astype(np.float64) - emu)
                largest = float(np.abs(cpu).max())
                rows = diff.reshape(-1, diff.shape[-1]).max(axis=1)
                print("%s %s output %d: largest %.4g, max diff %.4g, mean diff %.3g, "
                      "%d of %d rows differ by more than 1%% of the largest"
                      % (name, precision, k, largest, diff.max(), diff.mean(),
                         int((rows > 0.01 * largest).sum()), rows.size), flush=True)
                failed |= not np.isfinite(emu).all()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
