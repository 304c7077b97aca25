#!/usr/bin/env python3
"""2:4-sparse against dense on the CPU, in alternating rounds in one run:
Kiln dense (`--sparsity=off`), Kiln sparse (`--sparsity=on`) and ONNX
Runtime (dense: it has no sparse CPU kernels) on the same model and
inputs. Prints p50 latencies (the median over rounds of each round's p50)
and ratios as a markdown table. Both Kiln modules are first checked
against ONNX Runtime's outputs.

Without --model: the MLP stack of mlp_stack.py (GPT-2's 768 -> 3072 ->
768 blocks, weights pruned to 2:4) at each of --rows, the sparse module
compiled with --cpu-sparse-max-rows above every row count so the sparse
kernel runs at each (the crossover that sets its default).

With --model M.onnx: that model (its 2:4 weights pruned already, e.g. by
prune_model.py) on --input NAME=FILE.npy inputs, compiled for their
shapes.

With --qdq: the MLP stack quantized by onnxruntime's quantize_static
(mlp_stack.py --qdq: per-channel int8 weights, still 2:4), its products
Kiln's int8 kernels (dense: VNNI; sparse: vpexpandb + VNNI) and ONNX
Runtime's int8 ones; both Kiln modules are checked against ONNX Runtime's
output within one quantization step of it.

  python3 bench/sparsity/bench.py [--rows 1,2,4,8,16] [--layers 4] [--qdq]
      [--threads 2] [--rounds 3] [--iterations 100] [--bin build/bin]
      [--out build/sparsity-bench]
  python3 bench/sparsity/bench.py --model M.onnx --input NAME=X.npy ...
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HEADER = ["| model | Kiln dense (ms) | Kiln 2:4 sparse (ms) | ONNX Runtime (ms) "
          "| sparse / dense | sparse / ORT | sparse layers | weights dense -> sparse (MB) |",
          "|---|---:|---:|---:|---:|---:|---|---|"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("bench.py: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout + p.stderr


def compare(a, label, model, inputs, expected, work, extra=(), atol=1e-4,
            rtol=1e-4):
    """One table row: `inputs` maps input names to .npy paths (in input
    order), `expected` is ONNX Runtime's first output's .npy path."""
    import onnxruntime as ort
    os.makedirs(work, exist_ok=True)
    feeds = {n: np.load(p) for n, p in inputs.items()}
    shapes = ["--input-shape=%s:%s" % (n, "x".join(map(str, v.shape)))
              for n, v in feeds.items()]
    kmods = {"dense": os.path.join(work, "dense.kmod"),
             "sparse": os.path.join(work, "sparse.kmod")}
    run([os.path.join(a.bin, "kiln-compile"), model, "-o", kmods["dense"]] + shapes)
    report = run([os.path.join(a.bin, "kiln-compile"), model, "-o", kmods["sparse"],
                  "--sparsity=on", "--report"] + shapes + list(extra))
    m = re.search(r"sparsity: (\d+) of (\d+) contractions run 2:4 sparse"
                  r"(?:, their weights (\d+) -> (\d+) bytes)?", report)
    args = []
    for p in inputs.values():
        args += ["--input", p]
    for kmod in kmods.values():
        run([os.path.join(a.bin, "kiln-run"), kmod, "--expected", expected, "--rtol",
             str(rtol), "--atol", str(atol)] + args)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    times = {"dense": [], "sparse": [], "ort": []}
    for _ in range(a.rounds):
        for name, kmod in kmods.items():
            out = run([os.path.join(a.bin, "kiln-run"), kmod, "--threads", str(a.threads),
                       "--benchmark", "--warmup", "10", "--iterations",
                       str(a.iterations)] + args)
            times[name].append(float(re.search(r"p50 ([0-9.]+) ms", out).group(1)))
        for _ in range(10):
            sess.run(None, feeds)
        t = []
        for _ in range(a.iterations):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            t.append(time.perf_counter() - t0)
        times["ort"].append(1e3 * statistics.median(t))
    med = {k: statistics.median(v) for k, v in times.items()}
    weights = ("%.1f -> %.1f" % (int(m.group(3)) / 1e6, int(m.group(4)) / 1e6)
               if m and m.group(3) else "-")
    row = "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %s | %s |" % (
        label, med["dense"], med["sparse"], med["ort"], med["sparse"] / med["dense"],
        med["sparse"] / med["ort"], "%s of %s" % m.group(1, 2) if m else "-", weights)
    print(row, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1,2,4,8,16")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--ffn", type=int, default=3072)
    ap.add_argument("--model")
    ap.add_argument("--input", action="append", default=[],
                    help="with --model: NAME=FILE.npy, in input order")
    ap.add_argument("--qdq", action="store_true",
                    help="the MLP stack quantized to int8 (QDQ)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/sparsity-bench")
    a = ap.parse_args()
    rows = []
    if a.model:
        import onnxruntime as ort
        inputs = dict(s.split("=", 1) for s in a.input)
        work = os.path.join(a.out, os.path.splitext(os.path.basename(a.model))[0])
        os.makedirs(work, exist_ok=True)
        sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
        expected = os.path.join(work, "expected.npy")
        np.save(expected, sess.run(None, {n: np.load(p) for n, p in inputs.items()})[0])
        rows.append(compare(a, os.path.basename(a.model), a.model, inputs, expected, work))
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        for r in (int(r) for r in a.rows.split(",")):
            d = os.path.join(a.out, "rows%d" % r)
            run([sys.executable, os.path.join(here, "mlp_stack.py"), d, "--layers",
                 str(a.layers), "--hidden", str(a.hidden), "--ffn", str(a.ffn),
                 "--rows", str(r)] + (["--qdq"] if a.qdq else []))
            label = "MLP stack%s, %d row%s" % (" int8" if a.qdq else "", r,
                                               "s" if r > 1 else "")
            tol = {}
            if a.qdq:
                with open(os.path.join(d, "qdq_step.txt")) as f:
                    tol = {"atol": float(f.read()) * 1.001, "rtol": 0}
            rows.append(compare(a, label,
                                os.path.join(d, "mlp_stack_qdq.onnx" if a.qdq
                                             else "mlp_stack.onnx"),
                                {"x": os.path.join(d, "x.npy")},
                                os.path.join(d, "expected_qdq.npy" if a.qdq
                                             else "expected.npy"), d,
                                ["--cpu-sparse-max-rows=100000"], **tol))
    print("\n".join(HEADER + rows))


if __name__ == "__main__":
    main()
