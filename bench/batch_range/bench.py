#!/usr/bin/env python3
"""A batch-range module against modules compiled for one batch each, on
the CPU, in alternating rounds in one run: for each batch of --batches,
the range module (`--input-shape=NAME:MIN..MAXx...`, specialized for
--opt) run at that batch and the module compiled for exactly that batch,
on the same random inputs (kiln-run --benchmark --batch). Prints p50
latencies (the median over rounds of each round's p50), their ratio, the
chunks the range module runs the batch as, and the module sizes, as a
markdown table. The range module's outputs are first checked against the
static module's at each batch.

  python3 bench/batch_range/bench.py MODEL.onnx --input NAME --shape 3x224x224
      [--range 1..32] [--opt 8] [--batches 1,8,13] [--threads 2]
      [--rounds 3] [--iterations 10] [--bin build/bin] [--out build/batch-range-bench]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

import numpy as np


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout + p.stderr


def p50(kiln_run, module, args, batch=None):
    cmd = [kiln_run, module, "--benchmark", "--warmup", "2", "--iterations",
           str(args.iterations), "--threads", str(args.threads)]
    if batch:
        cmd += ["--batch", str(batch)]
    return float(re.search(r"p50 ([0-9.]+) ms", run(cmd)).group(1))


def chunks_of(batch, chunks):
    used = []
    for c in chunks:
        while batch >= c:
            used.append(c)
            batch -= c
    return "+".join(map(str, used))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--input", required=True)
    ap.add_argument("--shape", required=True, help="the input's dims after the batch, DxD...")
    ap.add_argument("--range", default="1..32")
    ap.add_argument("--opt", type=int, default=8)
    ap.add_argument("--batches", default="1,8,13")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/batch-range-bench")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    compile_ = os.path.join(args.bin, "kiln-compile")
    kiln_run = os.path.join(args.bin, "kiln-run")
    lo, hi = (int(x) for x in args.range.split(".."))
    ranged = os.path.join(args.out, "range.kmod")
    report = run([compile_, args.model, "--input-shape=%s:%d..%dx%s" % (args.input, lo, hi, args.shape),
                  "--opt-batch=%d" % args.opt, "--report", "-o", ranged])
    chunks = [int(c) for c in re.search(r"chunks of ([0-9, ]+)", report).group(1).split(", ")]
    batches = [int(b) for b in args.batches.split(",")]
    static = {}
    for b in batches:
        static[b] = os.path.join(args.out, "b%d.kmod" % b)
        run([compile_, args.model, "--input-shape=%s:%dx%s" % (args.input, b, args.shape),
             "-o", static[b]])
        # The same random inputs: check the range module against the static one.
        ref = os.path.join(args.out, "b%d_ref.npy" % b)
        got = os.path.join(args.out, "b%d_got.npy" % b)
        run([kiln_run, static[b], "--output", ref])
        run([kiln_run, ranged, "--batch", str(b), "--output", got])
        err = np.abs(np.load(ref) - np.load(got)).max()
        if err > 1e-4 * max(1.0, np.abs(np.load(ref)).max()):
            sys.exit("batch %d: the range module differs from the static one by %g" % (b, err))
    times = {b: {"range": [], "static": []} for b in batches}
    for _ in range(args.rounds):
        for b in batches:
            times[b]["static"].append(p50(kiln_run, static[b], args))
            times[b]["range"].append(p50(kiln_run, ranged, args, b))
    mb = lambda p: os.path.getsize(p) / 1e6
    print("| batch | chunks run | static module (ms) | range module (ms) | range / static |")
    print("|---:|---|---:|---:|---:|")
    for b in batches:
        s = statistics.median(times[b]["static"])
        r = statistics.median(times[b]["range"])
        print("| %d | %s | %.1f | %.1f | %.2f |" % (b, chunks_of(b, chunks), s, r, r / s))
    print()
    print("module sizes: range %s (%d..%d, opt %d): %.1f MB; static: %s" % (
        os.path.basename(args.model), lo, hi, args.opt, mb(ranged),
        ", ".join("batch %d %.1f MB" % (b, mb(static[b])) for b in batches)))


if __name__ == "__main__":
    main()
