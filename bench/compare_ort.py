#!/usr/bin/env python3
"""Times a compiled .kmod with kiln-run and the same ONNX model with ONNX
Runtime (CPU) in one run, at each thread count, on the same input, and
prints the p50 latencies and their ratio.

  python3 bench/compare_ort.py MODEL.onnx MODEL.kmod INPUT.npy \
      [--kiln-run build/bin/kiln-run] [--threads 1,2] [--iterations 100]
"""
import argparse
import re
import subprocess
import time

import numpy as np
import onnxruntime as ort


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("kmod")
    p.add_argument("input")
    p.add_argument("--kiln-run", default="build/bin/kiln-run")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iterations", type=int, default=100)
    a = p.parse_args()
    x = np.load(a.input)
    print("| threads | Kiln p50 (ms) | ORT p50 (ms) | Kiln/ORT |")
    print("|---|---|---|---|")
    for threads in (int(t) for t in a.threads.split(",")):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(a.model, opts,
                                    providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: x}
        for _ in range(a.warmup):
            sess.run(None, feed)
        times = []
        for _ in range(a.iterations):
            t = time.perf_counter()
            sess.run(None, feed)
            times.append(time.perf_counter() - t)
        ort_ms = float(np.median(times)) * 1e3
        out = subprocess.run(
            [a.kiln_run, a.kmod, "--threads", str(threads), "--input",
             a.input, "--benchmark", "--warmup", str(a.warmup),
             "--iterations", str(a.iterations)],
            capture_output=True, text=True, check=True).stdout
        kiln_ms = float(re.search(r"p50 ([0-9.]+) ms", out).group(1))
        print(f"| {threads} | {kiln_ms:.3f} | {ort_ms:.3f} | "
              f"{kiln_ms / ort_ms:.2f} |")


if __name__ == "__main__":
    main()
