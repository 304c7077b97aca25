#!/usr/bin/env python3
"""Differential graph fuzzing: random valid ONNX graphs (gen.py) compiled by
Kiln for each target and compared with ONNX Runtime.

Graphs are drawn in batches: one model holds --batch independent graphs
(their own inputs and outputs), so one compile covers many. Each target
compiles the batch (kiln-compile [--target=sm_XX]) and runs it (kiln-run, on
the CPU or, for GPU targets, through the kernel emulator); every output is
checked against ONNX Runtime's with |got - want| <= atol + rtol * |want|,
atol = --atol * max(1, max |want|) per output (range-relative, so large
outputs are not held to 1e-4 absolute). When a batch fails, each of its
graphs is compiled and run alone, and each failing graph is a finding,
written to OUT/findings/SEED-INDEX-TARGET/ (model.onnx, input_N.npy,
output_N.npy, log.txt) with a command that reproduces it. Compile errors
are findings too, and the summary says whether the error names the node.

  run.py OUT [--seed S] [--count N] [--first I] [--batch K]
         [--targets cpu,sm_90] [--kiln-compile PATH] [--kiln-run PATH]

Prints one line per finding and a summary; exits 1 when there is any.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def merge(graphs):
    """One model holding the graphs (model, feeds, outputs) side by side."""
    nodes, inits, inputs, outputs, feeds, expected = [], [], [], [], [], []
    for model, f, outs in graphs:
        g = model.graph
        nodes += g.node
        inits += g.initializer
        inputs += g.input
        outputs += g.output
        feeds += [f[i.name] for i in g.input]
        expected += outs
    graph = helper.make_graph(nodes, "fuzz", inputs, outputs, inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", gen.OPSET)])
    return model, feeds, expected


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return -999, "timed out after %d s: %s" % (timeout, " ".join(cmd))


def crashed(rc, log):
    return rc < 0 or rc >= 128 or "Stack dump" in log or \
        "PLEASE submit" in log


def check(a, work, model, feeds, expected, target):
    """Compiles and runs `model` for `target` in `work`; returns None when
    every output matches, else (kind, log)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    ins = []
    for j, x in enumerate(feeds):
        ins += ["--input", os.path.join(work, "input_%d.npy" % j)]
        np.save(os.path.join(work, "input_%d.npy" % j), x)
    for j, y in enumerate(expected):
        np.save(os.path.join(work, "output_%d.npy" % j), y)
    kmod = os.path.join(work, "%s.kmod" % target)
    cmd = [a.kiln_compile, path, "-o", kmod]
    if target != "cpu":
        cmd.append("--target=" + target)
    rc, log = run(cmd, a.timeout)
    if rc != 0:
        return ("crash" if crashed(rc, log) else "compile error",
                " ".join(cmd) + "\n" + log)
    outs = [os.path.join(work, "got_%s_%d.npy" % (target, j))
            for j in range(len(expected))]
    cmd = [a.kiln_run, kmod] + ins
    if target != "cpu":
        cmd.append("--device=emulator")
    for o in outs:
        cmd += ["--output", o]
    rc, log = run(cmd, a.timeout)
    if rc != 0:
        return ("crash" if crashed(rc, log) else "run error",
                " ".join(cmd) + "\n" + log)
    bad = []
    for j, (o, want) in enumerate(zip(outs, expected)):
        got = np.load(o)
        if got.shape != want.shape:
            bad.append("output %d: shape %s, expected %s" %
                       (j, got.shape, want.shape))
            continue
        atol = a.atol * max(1.0, float(np.abs(want).max()))
        err = np.abs(got.astype(np.float64) - want)
        over = err > atol + a.rtol * np.abs(want)
        if over.any():
            k = int(np.argmax(err))
            bad.append("output %d: %d of %d outside rtol %g atol %g, max abs "
                       "err %g (got %r, expected %r at flat index %d)" %
                       (j, int(over.sum()), want.size, a.rtol, atol,
                        float(err.max()), float(got.flat[k]),
                        float(want.flat[k]), k))
    if bad:
        return "wrong", " ".join(cmd) + "\n" + "\n".join(bad)
    return None


def localize(a, work, graph, target):
    """The first node, in graph order, whose own output is already wrong
    (each node output made the only graph output, against ONNX Runtime's
    value of it): 'NAME (OP)', or '' when none is wrong alone."""
    model, feeds, _ = graph
    for node in model.graph.node:
        for out in node.output:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            del m.graph.output[:]
            m.graph.output.append(helper.make_tensor_value_info(
                out, onnx.TensorProto.FLOAT, None))
            ref = gen.reference(m, feeds)
            if not gen.usable(ref) or ref[0].dtype != np.float32:
                continue
            m.graph.output[0].CopyFrom(helper.make_tensor_value_info(
                out, onnx.TensorProto.FLOAT, ref[0].shape))
            res = check(a, work, m, [feeds[i.name] for i in m.graph.input],
                        ref, target)
            if res is not None and res[0] == "wrong":
                shutil.rmtree(work, ignore_errors=True)
                return "%s (%s)" % (node.name, node.op_type)
    shutil.rmtree(work, ignore_errors=True)
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--targets", default="cpu,sm_90")
    ap.add_argument("--kiln-compile", default="kiln-compile")
    ap.add_argument("--kiln-run", default="kiln-run")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--keep", action="store_true",
                    help="keep the batches' files (default: findings only)")
    a = ap.parse_args()
    targets = a.targets.split(",")
    findings, named, start = [], 0, time.time()
    indices = list(range(a.first, a.first + a.count))
    for b in range(0, len(indices), a.batch):
        batch = [(i, gen.graph(a.seed, i, "g%d_" % i))
                 for i in indices[b:b + a.batch]]
        merged = merge([g for _, g in batch])
        for target in targets:
            work = os.path.join(a.out, "batch%d" % indices[b])
            if check(a, work, *merged, target) is None:
                continue
            for i, g in batch:  # which graphs fail, alone
                one = os.path.join(a.out, "findings",
                                   "%d-%d-%s" % (a.seed, i, target))
                res = check(a, one, *merge([g]), target)
                if res is None:
                    shutil.rmtree(one)
                    continue
                kind, log = res
                nodes = [n.name for n in g[0].graph.node]
                names = kind == "compile error" and any(
                    re.search(r"\b%s\b" % re.escape(n), log) for n in nodes)
                named += names
                with open(os.path.join(one, "log.txt"), "w") as f:
                    f.write("%s\nreproduce: fuzz/graphs/gen.py model.onnx "
                            "--seed %d --index %d\n%s\n" %
                            (kind, a.seed, i, log))
                findings.append((i, target, kind))
                first = log.strip().splitlines()[1:4]
                if kind == "wrong":
                    at = localize(a, one + "-localize", g, target)
                    if at:
                        first.append("first wrong value: " + at)
                print("graph %d/%d on %s: %s%s\n  %s" % (
                    a.seed, i, target, kind,
                    " (names the node)" if names else "",
                    "\n  ".join(first)), flush=True)
        if not a.keep:
            shutil.rmtree(os.path.join(a.out, "batch%d" % indices[b]),
                          ignore_errors=True)
    kinds = {}
    for _, _, k in findings:
        kinds[k] = kinds.get(k, 0) + 1
    print("graphs %d (seed %d, %d..%d), targets %s: %d findings%s; %.0f s" %
          (len(indices), a.seed, indices[0], indices[-1], ",".join(targets),
           len(findings),
           "".join(", %s %d" % kv for kv in sorted(kinds.items())),
           time.time() - start))
    if kinds.get("compile error"):
        print("compile errors naming the node: %d of %d" %
              (named, kinds["compile error"]))
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
