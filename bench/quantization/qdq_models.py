#!/usr/bin/env python3
"""QDQ (quantize_static) models through Kiln and ONNX Runtime on the CPU.

For each model of bench/models/export.py named in --models: quantizes it
with onnxruntime's quantize_static (QDQ format, per-channel int8 weights,
int8 activations, 4 seeded random calibration inputs), then in one run, at
each batch and with the same thread count, times

  ort-f32    ONNX Runtime on the float model
  ort-int8   ONNX Runtime on the QDQ model (its own integer kernels)
  kiln-f32   Kiln on the float model
  kiln-qdq   Kiln on the QDQ model, float between the Q/DQ pairs
             (kiln-compile --fold-qdq=false)
  kiln-int8  Kiln on the QDQ model as integer kernels (the default)
  kiln-own-int8  Kiln's own quantization of the float model
             (--precision=int8, calibrated on the same 4 inputs)

and checks each Kiln QDQ module against ONNX Runtime's QDQ output on one
seeded input: within one quantization step of the output (the last
DequantizeLinear's scale). That reference is ONNX Runtime run unfused
(GraphOptimizationLevel.ORT_DISABLE_ALL: each QDQ op as the graph writes
it), not its default session, whose fused integer kernels on CPUs without
VNNI (AVX2) multiply unsigned by signed bytes with vpmaddubsw, whose 16-bit
pair sums saturate; the script prints how far the default session's output
is from the unfused one, in steps. Latencies are medians (p50) of kiln-run
--benchmark and of as many ONNX Runtime runs; with --rounds R the six are
timed R times in turn, one after another in each round, and each figure
is the median of its rounds (this machine is shared: a disturbance then
shows in one round, not in one engine). Ratios are to kiln-f32 and to
ort-int8.

With --int8-dots=vnni,... the QDQ model is also compiled with each
--cpu-int8-dot named (rows kiln-int8-vnni, ...), checked and timed beside
the others: the default's kernels against another's in the same run.

  python3 bench/quantization/qdq_models.py [--models resnet50,mobilenet_v2]
      [--batches 1] [--threads 2] [--iterations 20] [--rounds 1]
      [--bin build/bin] [--models-dir build/bench-models] [--out build/qdq]
      [--kiln-flags="--cpu=x86-64-v3"] [--int8-dots=vnni]
"""
import argparse
import functools
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export  # noqa: E402  (bench/models/export.py: the models' inputs)


def inputs_for(name, batch, rng):
    feeds = {}
    for inp, (dtype, dims) in export.input_specs(name).items():
        shape = [batch if d is None else d for d in dims]
        if dtype == "int64":
            feeds[inp] = (np.ones(shape, np.int64) if inp == "attention_mask" else
                          rng.integers(0, export.vocab_size(name), shape).astype(np.int64))
        else:
            feeds[inp] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def calibration(name, cal_dir, rng=None):
    """The 4 seeded calibration inputs (batch 1) of model `name`, also
    written into `cal_dir` as kiln-compile --calibration-data reads them
    (one sub-folder per sample holding input_K.npy). They are the first
    draws of `rng` (default: a new generator seeded 0)."""
    if rng is None:
        rng = np.random.default_rng(0)
    samples = [inputs_for(name, 1, rng) for _ in range(4)]
    for i, sample in enumerate(samples):
        os.makedirs(os.path.join(cal_dir, "%02d" % i), exist_ok=True)
        for k, v in enumerate(sample.values()):
            np.save(os.path.join(cal_dir, "%02d" % i, "input_%d.npy" % k), v)
    return samples


def quantize_qdq(fp, qdq, cal_samples):
    """Writes `qdq`, the float model `fp` quantized by onnxruntime's
    quantize_static (QDQ, per-channel int8 weights, int8 activations) on
    the feeds `cal_samples`; returns the scale of the DequantizeLinear that
    gives the first output (one quantization step of it), or None."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    cal = iter(cal_samples)

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(cal, None)

    quantize_static(fp, qdq, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    model = onnx.load(qdq, load_external_data=False)
    scales = {i.name: i for i in model.graph.initializer}
    out0 = model.graph.output[0].name
    last = [n for n in model.graph.node
            if n.op_type == "DequantizeLinear" and n.output[0] == out0]
    return (float(onnx.numpy_helper.to_array(scales[last[0].input[1]]))
            if last else None)


def ort_p50(session, feeds, iterations):
    session.run(None, feeds)
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def kiln_run(args, kmod, feeds, files, extra):
    cmd = [os.path.join(args.bin, "kiln-run"), kmod, "--threads", str(args.threads)]
    for name in feeds:
        cmd += ["--input", files[name]]
    return subprocess.run(cmd + extra, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet50")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--models-dir", default="build/bench-models")
    ap.add_argument("--out", default="build/qdq")
    ap.add_argument("--kiln-flags", default="",
                    help="extra kiln-compile flags for every Kiln module, "
                         "space-separated (e.g. --cpu=x86-64-v3: code for "
                         "AVX2 CPUs, which runs here too)")
    ap.add_argument("--int8-dots", default="",
                    help="also compile the QDQ model with each of these "
                         "--cpu-int8-dot values (comma-separated), as rows "
                         "kiln-int8-<dot>")
    args = ap.parse_args()
    dots = [d for d in args.int8_dots.split(",") if d]
    import onnxruntime as ort
    os.makedirs(args.out, exist_ok=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    rows = []
    for name in args.models.split(","):
        fp = export.exported_path(args.models_dir, name)
        qdq = os.path.join(args.out, name + "-qdq.onnx")
        # The same samples for kiln-compile --precision=int8.
        cal_dir = os.path.join(args.out, name + "-calibration")
        # The timed inputs are the draws after the calibration samples.
        rng = np.random.default_rng(0)
        cal_samples = calibration(name, cal_dir, rng)

        step = quantize_qdq(fp, qdq, cal_samples)
        ort_f32 = ort.InferenceSession(fp, options, providers=["CPUExecutionProvider"])
        ort_q = ort.InferenceSession(qdq, options, providers=["CPUExecutionProvider"])
        unfused = ort.SessionOptions()
        unfused.intra_op_num_threads = args.threads
        unfused.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        ort_ref = ort.InferenceSession(qdq, unfused, providers=["CPUExecutionProvider"])
        for batch in [int(b) for b in args.batches.split(",")]:
            feeds = inputs_for(name, batch, rng)
            files = {}
            for k, v in feeds.items():
                files[k] = os.path.join(args.out, "%s-b%d-%s.npy" % (name, batch, k))
                np.save(files[k], v)
            expected = os.path.join(args.out, "%s-b%d-expected.npy" % (name, batch))
            reference = ort_ref.run(None, feeds)[0]
            np.save(expected, reference)
            fused_err = float(np.abs(ort_q.run(None, feeds)[0] - reference).max())
            shapes = ["--input-shape=%s:%s" % (k, "x".join(map(str, v.shape)))
                      for k, v in feeds.items()]
            row = {"model": name, "batch": batch}
            kiln = (("kiln-f32", fp, []), ("kiln-qdq", qdq, ["--fold-qdq=false"]),
                    ("kiln-int8", qdq, []),
                    ("kiln-own-int8", fp, ["--precision=int8",
                                           "--calibration-data=" + cal_dir])) + tuple(
                ("kiln-int8-" + d, qdq, ["--cpu-int8-dot=" + d]) for d in dots)
            kmods = {}
            for key, src, flags in kiln:
                kmod = os.path.join(args.out, "%s-b%d-%s.kmod" % (name, batch, key))
                kmods[key] = kmod
                subprocess.run([os.path.join(args.bin, "kiln-compile"), src, "-o", kmod] +
                               shapes + flags + args.kiln_flags.split(), check=True)
                if key in ("kiln-qdq", "kiln-int8") + tuple(
                        "kiln-int8-" + d for d in dots) and step is not None:
                    r = kiln_run(args, kmod, feeds, files,
                                 ["--expected", expected, "--rtol", "0",
                                  "--atol", "%.6g" % (step * 1.001)])
                    m = re.search(r"max abs err ([0-9.e+-]+)", r.stdout)
                    row[key + " check"] = ("%s (max abs err %s, step %.4g)" %
                                           ("ok" if r.returncode == 0 else "MISMATCH",
                                            m.group(1) if m else "?", step))

            def kiln_p50(key):
                r = kiln_run(args, kmods[key], feeds, files,
                             ["--benchmark", "--warmup", "2",
                              "--iterations", str(args.iterations)])
                m = re.search(r"p50 ([0-9.]+) ms", r.stdout)
                return float(m.group(1)) if m else float("nan")

            timers = {"ort-f32": lambda: ort_p50(ort_f32, feeds, args.iterations),
                      "ort-int8": lambda: ort_p50(ort_q, feeds, args.iterations)}
            for key, _, _ in kiln:
                timers[key] = functools.partial(kiln_p50, key)
            times = {key: [] for key in timers}
            for _ in range(args.rounds):
                for key, timer in timers.items():
                    times[key].append(timer())
            for key, ts in times.items():
                row[key] = float(np.median(ts))
            rows.append(row)
            print("%s batch %d, %d threads, p50 ms (median of %d rounds):" % (
                name, batch, args.threads, args.rounds))
            for key in ("ort-f32", "ort-int8", "kiln-f32", "kiln-qdq", "kiln-int8",
                        "kiln-own-int8") + tuple("kiln-int8-" + d for d in dots):
                print("  %-9s %9.2f   /kiln-f32 %.2f   /ort-int8 %.2f   %s" % (
                    key, row[key], row[key] / row["kiln-f32"], row[key] / row["ort-int8"],
                    row.get(key + " check", "")))
            if step is not None:
                print("  ONNX Runtime's default session against its unfused run: "
                      "max abs err %.4g (%.1f steps)" % (fused_err, fused_err / step))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
