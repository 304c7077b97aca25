#!/usr/bin/env python3
"""2:4-sparse against dense on the CPU: the MLP stack of mlp_stack.py
(GPT-2's 768 -> 3072 -> 768 blocks, weights pruned to 2:4) at each row
count, compiled by Kiln dense (`--sparsity=off`) and sparse
(`--sparsity=on`, with --cpu-sparse-max-rows above every row count so the
sparse kernel runs at each), and run by ONNX Runtime (dense: it has no
sparse CPU kernels), in alternating rounds in one run. Prints p50
latencies (the median over rounds of each round's p50) and ratios as a
markdown table.

  python3 bench/sparsity/bench.py [--rows 1,2,4,8,16] [--layers 4]
      [--threads 2] [--rounds 3] [--iterations 100] [--bin build/bin]
      [--out build/sparsity-bench]
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
        sys.exit("bench.py: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1,2,4,8,16")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--ffn", type=int, default=3072)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/sparsity-bench")
    a = ap.parse_args()
    import onnxruntime as ort
    here = os.path.dirname(os.path.abspath(__file__))
    table = ["| rows | Kiln dense (ms) | Kiln 2:4 sparse (ms) | ONNX Runtime (ms) "
             "| sparse / dense | sparse / ORT | weights dense -> sparse (MB) |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for rows in (int(r) for r in a.rows.split(",")):
        d = os.path.join(a.out, "rows%d" % rows)
        run([sys.executable, os.path.join(here, "mlp_stack.py"), d, "--layers",
             str(a.layers), "--hidden", str(a.hidden), "--ffn", str(a.ffn),
             "--rows", str(rows)])
        model = os.path.join(d, "mlp_stack.onnx")
        kmods = {"dense": os.path.join(d, "dense.kmod"),
                 "sparse": os.path.join(d, "sparse.kmod")}
        run([os.path.join(a.bin, "kiln-compile"), model, "-o", kmods["dense"]])
        report = run([os.path.join(a.bin, "kiln-compile"), model, "-o", kmods["sparse"],
                      "--sparsity=on", "--report", "--cpu-sparse-max-rows=100000"])
        m = re.search(r"their weights (\d+) -> (\d+) bytes", report)
        x = np.load(os.path.join(d, "x.npy"))
        for name, kmod in kmods.items():  # check against ONNX Runtime
            run([os.path.join(a.bin, "kiln-run"), kmod, "--input", os.path.join(d, "x.npy"),
                 "--expected", os.path.join(d, "expected.npy"), "--rtol", "1e-4",
                 "--atol", "1e-4"])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = a.threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        times = {"dense": [], "sparse": [], "ort": []}
        for _ in range(a.rounds):
            for name, kmod in kmods.items():
                out = run([os.path.join(a.bin, "kiln-run"), kmod, "--input",
                           os.path.join(d, "x.npy"), "--threads", str(a.threads),
                           "--benchmark", "--warmup", "10", "--iterations",
                           str(a.iterations)])
                times[name].append(float(re.search(r"p50 ([0-9.]+) ms", out).group(1)))
            for _ in range(10):
                sess.run(None, {"x": x})
            t = []
            for _ in range(a.iterations):
                t0 = time.perf_counter()
                sess.run(None, {"x": x})
                t.append(time.perf_counter() - t0)
            times["ort"].append(1e3 * statistics.median(t))
        med = {k: statistics.median(v) for k, v in times.items()}
        table.append("| %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f -> %.1f |" % (
            rows, med["dense"], med["sparse"], med["ort"], med["sparse"] / med["dense"],
            med["sparse"] / med["ort"], int(m.group(1)) / 1e6, int(m.group(2)) / 1e6))
        print(table[-1], flush=True)
    print("\n".join(table))


if __name__ == "__main__":
    main()
