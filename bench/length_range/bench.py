#!/usr/bin/env python3
"""A module compiled for a batch and length range (a transformer's
input_ids and attention_mask: `--input-shape=NAME:1..8x16..128`) against
ONNX Runtime and against modules compiled for one shape each, on the CPU,
in one run:

1. accuracy: at each shape of --check, random token ids (below --vocab) and
   an attention mask with the last third of every other sample's keys
   hidden, the range module's outputs against ONNX Runtime's (max abs
   error per output);
2. speed: at each shape of --time, the range module and the module
   compiled for exactly that shape, on the same inputs (their outputs
   first checked equal), alternating, p50 of --iterations runs
   (kiln-run --benchmark), median of --rounds rounds.

Prints both as markdown tables. Modules are kept in --out and reused when
there (delete them to recompile).

  python3 bench/length_range/bench.py build/bench-models/bert_base_dynseq.onnx
      [--batch-range 1..8] [--length-range 16..128] [--opt-batch 8] [--opt-length 128]
      [--check 1x16,3x50,8x128] [--time 8x128,1x128,1x77] [--threads 2]
      [--rounds 3] [--iterations 5] [--bin build/bin] [--out build/length-range-bench]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout + p.stderr


def shapes(spec):
    return [tuple(int(d) for d in s.split("x")) for s in spec.split(",") if s]


def inputs(out, b, l, vocab, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (b, l)).astype(np.int64)
    mask = np.ones((b, l), np.int64)
    for s in range(1, b, 2):
        mask[s, l - l // 3:] = 0
    paths = [os.path.join(out, "%s_%dx%d.npy" % (n, b, l)) for n in ("ids", "mask")]
    np.save(paths[0], ids)
    np.save(paths[1], mask)
    return {"input_ids": ids, "attention_mask": mask}, paths


def outputs_of(kiln_run, module, paths, out, tag, n):
    files = [os.path.join(out, "%s_out%d.npy" % (tag, k)) for k in range(n)]
    cmd = [kiln_run, module]
    for p in paths:
        cmd += ["--input", p]
    for f in files:
        cmd += ["--output", f]
    run(cmd)
    return [np.load(f) for f in files]


def p50(kiln_run, module, paths, args):
    cmd = [kiln_run, module, "--benchmark", "--warmup", "1", "--iterations",
           str(args.iterations), "--threads", str(args.threads)]
    for p in paths:
        cmd += ["--input", p]
    return float(re.search(r"p50 ([0-9.]+) ms", run(cmd)).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--batch-range", default="1..8")
    ap.add_argument("--length-range", default="16..128")
    ap.add_argument("--opt-batch", type=int, default=8)
    ap.add_argument("--opt-length", type=int, default=128)
    ap.add_argument("--check", default="1x16,1x77,3x50,5x100,8x128")
    ap.add_argument("--time", default="8x128,1x128,1x77")
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/length-range-bench")
    args = ap.parse_args()
    import onnxruntime as ort

    os.makedirs(args.out, exist_ok=True)
    compile_ = os.path.join(args.bin, "kiln-compile")
    kiln_run = os.path.join(args.bin, "kiln-run")
    ranged = os.path.join(args.out, "range.kmod")
    if not os.path.exists(ranged):
        spec = "%sx%s" % (args.batch_range, args.length_range)
        t = time.perf_counter()
        report = run([compile_, args.model, "--input-shape=input_ids:" + spec,
                      "--input-shape=attention_mask:" + spec,
                      "--opt-batch=%d" % args.opt_batch, "--opt-length=%d" % args.opt_length,
                      "--report", "-o", ranged])
        print("compiled the range module in %.0f s" % (time.perf_counter() - t))
        print("".join(l + "\n" for l in report.splitlines() if "range" in l or "arena per" in l))
    sess = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    n_out = len(sess.get_outputs())
    print("| batch x length | " + " | ".join(
        "%s max abs err (largest)" % o.name for o in sess.get_outputs()) + " |")
    print("|---|" + "---:|" * n_out)
    for k, (b, l) in enumerate(shapes(args.check)):
        feeds, paths = inputs(args.out, b, l, args.vocab, k)
        ref = sess.run(None, feeds)
        got = outputs_of(kiln_run, ranged, paths, args.out, "check", n_out)
        cells = []
        for r, g in zip(ref, got):
            if r.shape != g.shape:
                sys.exit("%dx%d: output shape %s, ONNX Runtime's %s" % (b, l, g.shape, r.shape))
            cells.append("%.2g (%.3g)" % (np.abs(r - g).max(), np.abs(r).max()))
        print("| %dx%d | %s |" % (b, l, " | ".join(cells)))
    print()
    static, feeds = {}, {}
    for b, l in shapes(args.time):
        static[b, l] = os.path.join(args.out, "static_%dx%d.kmod" % (b, l))
        if not os.path.exists(static[b, l]):
            run([compile_, args.model, "--input-shape=input_ids:%dx%d" % (b, l),
                 "--input-shape=attention_mask:%dx%d" % (b, l), "-o", static[b, l]])
        _, feeds[b, l] = inputs(args.out, b, l, args.vocab, 100 + b * 1000 + l)
        want = outputs_of(kiln_run, static[b, l], feeds[b, l], args.out, "static", n_out)
        got = outputs_of(kiln_run, ranged, feeds[b, l], args.out, "range", n_out)
        for w, g in zip(want, got):
            err = np.abs(w - g).max()
            if err > 1e-4 * max(1.0, np.abs(w).max()):
                sys.exit("%dx%d: the range module differs from the static one by %g" % (b, l, err))
    times = {s: {"range": [], "static": []} for s in static}
    for _ in range(args.rounds):
        for s in static:
            times[s]["static"].append(p50(kiln_run, static[s], feeds[s], args))
            times[s]["range"].append(p50(kiln_run, ranged, feeds[s], args))
    print("| batch x length | static module (ms) | range module (ms) | range / static |")
    print("|---|---:|---:|---:|")
    for (b, l), t in times.items():
        s, r = statistics.median(t["static"]), statistics.median(t["range"])
        print("| %dx%d | %.1f | %.1f | %.2f |" % (b, l, s, r, r / s))
    print()
    mb = lambda p: os.path.getsize(p) / 1e6
    print("module sizes: range %.1f MB; %s" % (mb(ranged), ", ".join(
        "%dx%d %.1f MB" % (b, l, mb(p)) for (b, l), p in static.items())))


if __name__ == "__main__":
    main()
