#!/usr/bin/env python3
"""How Kiln's compile time grows with the graph: synthetic ONNX graphs of
several sizes per family, compiled with kiln-compile --time-passes; prints
each size's wall time and peak memory, and each pass's growth exponent (the
slope of log time over log size between the smallest and the largest size;
1 is linear, 2 quadratic), for the passes that take at least 2% of the
largest compile.

Families (N = size):
  chain   N elementwise ops (Mul, Add by a scalar constant) on a 1x64 tensor
  wide    one input fanned out to N Mul branches (a constant each), summed
          back pairwise (about 2N nodes)
  layers  N transformer-style layers on a [16, 64] tensor: MatMul + Add,
          Softmax, MatMul, Add, LayerNormalization (64x64 weights)

  compile_scaling.py [--families chain,wide,layers] [--sizes 2000,4000,...]
      [--target cpu|sm_90] [--kiln-compile PATH] [--work DIR]
      [--check-ratio R]

With --check-ratio R (the suite's regression guard) it compiles the
smallest and the largest size of each family and exits 1 if the largest
took more than R times the smallest times the size ratio, that is, if the
compile grew faster than linearly by more than R.
"""
import argparse
import math
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT_SIZES = {"chain": [2000, 4000, 8000, 16000],
                 "wide": [1000, 2000, 4000, 8000],
                 "layers": [6, 12, 24, 48]}


def model(nodes, shape, inits):
    """A graph of one float input `x` and one output `y` of `shape`."""
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
          for n in ("x", "y")]
    graph = helper.make_graph(nodes, "scaling", io[:1], io[1:], inits)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


def chain(n):
    inits = [numpy_helper.from_array(np.array(1.0001, np.float32), "m"),
             numpy_helper.from_array(np.array(0.001, np.float32), "a")]
    nodes, last = [], "x"
    for i in range(n):
        op, c = ("Mul", "m") if i % 2 == 0 else ("Add", "a")
        nodes.append(helper.make_node(op, [last, c], ["v%d" % i]))
        last = "v%d" % i
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    return model(nodes, [1, 64], inits)


def wide(n):
    rng = np.random.default_rng(0)
    nodes, inits, level = [], [], []
    for i in range(n):
        inits.append(numpy_helper.from_array(
            rng.uniform(0.5, 1.5, [1, 64]).astype(np.float32), "c%d" % i))
        nodes.append(helper.make_node("Mul", ["x", "c%d" % i], ["b%d" % i]))
        level.append("b%d" % i)
    k = 0
    while len(level) > 1:
        nxt = []
        for j in range(0, len(level) - 1, 2):
            k += 1
            nodes.append(helper.make_node("Add", level[j:j + 2], ["s%d" % k]))
            nxt.append("s%d" % k)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    nodes.append(helper.make_node("Identity", [level[0]], ["y"]))
    return model(nodes, [1, 64], inits)


def layers(n):
    rng = np.random.default_rng(0)
    nodes, inits, last = [], [], "x"

    def w(name, shape, scale):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    for i in range(n):
        p = "l%d_" % i
        nodes += [
            helper.make_node("MatMul", [last, w(p + "wq", [64, 64], 0.125)],
                             [p + "q"]),
            helper.make_node("Add", [p + "q", w(p + "bq", [64], 0.1)],
                             [p + "qb"]),
            helper.make_node("Softmax", [p + "qb"], [p + "s"], axis=-1),
            helper.make_node("MatMul", [p + "s", w(p + "wo", [64, 64], 0.125)],
                             [p + "o"]),
            helper.make_node("Add", [last, p + "o"], [p + "r"]),
            helper.make_node("LayerNormalization",
                             [p + "r", w(p + "g", [64], 1.0),
                              w(p + "b", [64], 0.1)], [p + "n"], axis=-1),
        ]
        last = p + "n"
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    return model(nodes, [16, 64], inits)


FAMILIES = {"chain": chain, "wide": wide, "layers": layers}
PASS_LINE = re.compile(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*)$")


def compile_once(a, path):
    """Wall seconds, peak RSS (MiB) and {pass: seconds} of one compile."""
    cmd = [a.kiln_compile, path, "-o", path[:-5] + ".kmod", "--time-passes"]
    if a.target != "cpu":
        cmd.append("--target=" + a.target)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - start
    if p.returncode != 0:
        sys.exit("compile failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    passes = {}
    # The first report is MLIR's (wall time, one column); the LLVM ones
    # after it have four columns and are summed under their names.
    for line in p.stderr.splitlines():
        m = PASS_LINE.match(line)
        if m:
            name = m.group(2).strip()
            if name != "Total":
                passes[name] = passes.get(name, 0.0) + float(m.group(1))
    return wall, rss / 1024.0, passes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="chain,wide,layers")
    ap.add_argument("--sizes", default="",
                    help="comma-separated sizes for every family given")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--kiln-compile", default="build/bin/kiln-compile")
    ap.add_argument("--work", default="build/compile-scaling")
    ap.add_argument("--check-ratio", type=float, default=0.0)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    failed = False
    for fam in a.families.split(","):
        sizes = ([int(s) for s in a.sizes.split(",")] if a.sizes
                 else DEFAULT_SIZES[fam])
        if a.check_ratio:
            sizes = [min(sizes), max(sizes)]
        runs = {}
        for n in sizes:
            path = os.path.join(a.work, "%s_%d.onnx" % (fam, n))
            onnx.save(FAMILIES[fam](n), path)
            runs[n] = compile_once(a, path)
            print("%-6s %6d  %7.2f s  %6.0f MiB" % (fam, n, runs[n][0],
                                                    runs[n][1]), flush=True)
        lo, hi = min(sizes), max(sizes)
        growth = math.log(runs[hi][0] / runs[lo][0]) / math.log(hi / lo)
        print("%-6s wall time grows as size^%.2f (%d -> %d)" %
              (fam, growth, lo, hi))
        if a.check_ratio:
            limit = a.check_ratio * (hi / lo) * runs[lo][0]
            ok = runs[hi][0] <= limit
            failed |= not ok
            print("%-6s %s: %d nodes took %.1fx the time of %d (limit %.0fx)" %
                  (fam, "linear" if ok else "SUPERLINEAR", hi,
                   runs[hi][0] / runs[lo][0], lo, a.check_ratio * hi / lo))
            continue
        total = runs[hi][0]
        rows = []
        for name, t in runs[hi][2].items():
            t0 = runs[lo][2].get(name, 0.0)
            if t < 0.02 * total or t0 <= 0:
                continue
            rows.append((t, name, math.log(t / t0) / math.log(hi / lo)))
        for t, name, e in sorted(rows, reverse=True):
            print("  %-44s %7.2f s at %d, grows as size^%.2f" %
                  (name[:44], t, hi, e))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
