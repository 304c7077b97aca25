#!/usr/bin/env python3
"""Half precision on the CPU: Kiln's --precision=bf16 and fp16 against its f32, side by side.

For each model and batch, compiles the f32 model four ways (f32; bf16 with
the target CPU's bf16 products, --cpu-bf16-dot=auto: AMX's tile multiply
where it has AMX-BF16, else vdpbf16ps where it has AVX-512 BF16; bf16 with
--cpu-bf16-dot=generic, each value widened to f32; fp16, widened), plus
bf16 with each --bf16-dots form (avx512bf16: vdpbf16ps on a CPU whose
default is amx), and times them in turns (--rounds R: each module R times, the median of
the p50s of `kiln-run --benchmark`), on the same seeded inputs. Also prints
each half module's largest output difference from ONNX Runtime's f32 (the
accuracy cost of rounding weights and activations to 8 or 11 significant
bits).

  python3 bench/quantization/half_cpu.py --models resnet50,bert_base --batches 1,8
  python3 bench/quantization/half_cpu.py --models bert_base --bf16-dots=avx512bf16
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export  # noqa: E402  (bench/models/export.py: the models and their inputs)
from qdq_models import inputs_for  # noqa: E402  (the same seeded inputs)

KINDS = (("f32", []), ("bf16", ["--precision=bf16"]),
         ("bf16-generic", ["--precision=bf16", "--cpu-bf16-dot=generic"]),
         ("fp16", ["--precision=fp16"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet50,bert_base")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--models-dir", default="build/bench-models")
    ap.add_argument("--out", default="build/half-cpu")
    ap.add_argument("--bf16-dots", default="",
                    help="comma-separated --cpu-bf16-dot forms (amx, avx512bf16) to time "
                         "beside the default, each a column of its own")
    ap.add_argument("--kiln-flags", default="",
                    help="extra kiln-compile flags for every module, space-separated")
    args = ap.parse_args()
    dots = [d for d in args.bf16_dots.split(",") if d]
    kinds = KINDS + tuple(("bf16-" + d, ["--precision=bf16", "--cpu-bf16-dot=" + d])
                          for d in dots)
    import onnxruntime as ort
    os.makedirs(args.out, exist_ok=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    rows = []
    for name in args.models.split(","):
        fp = export.exported_path(args.models_dir, name)
        session = ort.InferenceSession(fp, options, providers=["CPUExecutionProvider"])
        for batch in [int(b) for b in args.batches.split(",")]:
            feeds = inputs_for(name, batch, np.random.default_rng(0))
            files = []
            for k, v in feeds.items():
                files += ["--input", os.path.join(args.out, "%s-b%d-%s.npy" % (name, batch, k))]
                np.save(files[-1], v)
            reference = session.run(None, feeds)[0]
            shapes = ["--input-shape=%s:%s" % (k, "x".join(map(str, v.shape)))
                      for k, v in feeds.items()]
            kmods, errors = {}, {}
            for kind, flags in kinds:
                kmod = os.path.join(args.out, "%s-b%d-%s.kmod" % (name, batch, kind))
                subprocess.run([os.path.join(args.bin, "kiln-compile"), fp, "-o", kmod] +
                               shapes + flags + args.kiln_flags.split(), check=True)
                kmods[kind] = kmod
                out = os.path.join(args.out, "%s-b%d-%s-out.npy" % (name, batch, kind))
                subprocess.run([os.path.join(args.bin, "kiln-run"), kmod, "--threads",
                                str(args.threads), "--output", out] + files,
                               check=True, capture_output=True)
                errors[kind] = float(np.max(np.abs(np.load(out) - reference)))
            times = {kind: [] for kind in kmods}
            for _ in range(args.rounds):
                for kind, kmod in kmods.items():
                    r = subprocess.run([os.path.join(args.bin, "kiln-run"), kmod, "--threads",
                                        str(args.threads), "--benchmark", "--warmup", "2",
                                        "--iterations", str(args.iterations)] + files,
                                       capture_output=True, text=True)
                    m = re.search(r"p50 ([0-9.]+) ms", r.stdout)
                    times[kind].append(float(m.group(1)) if m else float("nan"))
            row = {"model": name, "batch": batch,
                   "range": float(np.max(np.abs(reference)))}
            for kind in kmods:
                row[kind] = float(np.median(times[kind]))
                row[kind + " err"] = errors[kind]
            rows.append(row)
            print("%s batch %d: %s" % (name, batch, ", ".join(
                "%s %.1f ms (max abs err %.3g)" % (k, row[k], row[k + " err"]) for k, _ in kinds)),
                flush=True)
    print()
    extra = "".join(" bf16 %s ms | bf16 / %s |" % (d, d) for d in dots)
    print("| model | batch | f32 ms | bf16 ms | bf16 generic ms | fp16 ms |" + extra +
          " bf16 / f32 | bf16 max abs err | fp16 max abs err | largest output |")
    print("|---|---:|---:|---:|---:|---:|" + "---:|---:|" * len(dots) + "---:|---:|---:|---:|")
    for r in rows:
        cells = "".join(" %.1f | %.2f |" % (r["bf16-" + d], r["bf16"] / r["bf16-" + d])
                        for d in dots)
        print(("| %s | %d | %.1f | %.1f | %.1f | %.1f |" % (
            r["model"], r["batch"], r["f32"], r["bf16"], r["bf16-generic"], r["fp16"])) +
            cells + (" %.2f | %.3g | %.3g | %.3g |" % (
                r["bf16"] / r["f32"], r["bf16 err"], r["fp16 err"], r["range"])))


if __name__ == "__main__":
    main()
