#!/usr/bin/env python3
"""The per-computation roofline of benchmark models on the CPU.

For each model: compiles it with `kiln-compile --profile`, profiles a few
runs with `kiln-run --profile-runs N --json` (each computation's median
time) on the same seeded inputs bench/run.py uses, and prints, as Markdown, where the time goes by ONNX op type and the
most expensive computations, each with the GFLOP/s and GB/s it achieved and
its share of the roofline (the machine's measured peaks, see
`kiln-run --help`).

  python3 bench/models/export.py           # build/bench-models/*.onnx
  python3 bench/roofline.py --models resnet50,mobilenet_v2 --batch 1 \\
      --threads 2 --top 8
  python3 bench/roofline.py --models mobilenet_v2 --ort   # and ORT's, per op type

With --ort it also profiles ONNX Runtime (its own per-node profiler, the
same inputs and threads, each node's median over --runs runs) and prints
the two side by side per ONNX op type; ORT's fused nodes count as the op
they start from (FusedConv as Conv, FusedMatMul as MatMul, ...), as
Kiln's fused regions are named after their first node.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "models"))

import run as bench_run  # noqa: E402  (make_inputs: bench/run.py's inputs)


def op_type(region):
    """The ONNX op type of a region name such as
    '/layer1/layer1.0/conv1/Conv (scf.forall)' or 'Conv_3 (linalg.generic)',
    or the fused op of 'Attention(/enc/layer.0/MatMul) (scf.forall #2)'."""
    node, _, op = region.partition(" (")
    if not op:  # no ONNX node: an op of the lowering's own (a copy)
        return region
    fused = re.match(r"([A-Za-z]\w*)\(", node)
    if fused:  # a fused op named after its chain's first node
        return fused.group(1)
    last = node.rstrip("/").split("/")[-1]
    return re.sub(r"_\d+$", "", last) or node


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def profile(a, model):
    wd = os.path.join(a.work_dir, model)
    os.makedirs(wd, exist_ok=True)
    inputs, shapes = bench_run.make_inputs(model, a.batch, wd, 0)
    kmod = os.path.join(wd, "%s_b%d.kmod" % (model, a.batch))
    onnx_path = os.path.join(a.models_dir, model + ".onnx")
    subprocess.run([os.path.join(a.bin, "kiln-compile"), onnx_path, *shapes,
                    "--profile", "-o", kmod], check=True)
    out = os.path.join(wd, "profile_b%d.json" % a.batch)
    argv = [os.path.join(a.bin, "kiln-run"), kmod, "--threads",
            str(a.threads), "--profile-runs", str(a.runs), "--json", out]
    for f in inputs:
        argv += ["--input", f]
    if a.peaks:
        argv += ["--peaks", a.peaks]
    # The machine is shared: wait for other load to settle, then record how
    # much of the cores others used while the profiled runs went on.
    bench_run.wait_for_quiet(a.quiet_wait, 0.1,
                             lambda m: print(m, file=sys.stderr))
    b0 = bench_run.machine_busy_seconds()
    c0 = bench_run.cpu_seconds(bench_run.resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    share = bench_run.others_share(
        b0, time.perf_counter() - t0,
        bench_run.cpu_seconds(bench_run.resource.RUSAGE_CHILDREN) - c0)
    with open(out) as f:
        prof = json.load(f)["profile"]
    prof["others_share"] = share
    return prof


# ORT's fused kernels, counted as the ONNX op they start from.
ORT_FUSED = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul",
             "NhwcFusedConv": "Conv", "QLinearConv": "Conv",
             "BiasGelu": "Gelu", "FastGelu": "Gelu", "SkipLayerNormalization":
             "LayerNormalization", "SimplifiedLayerNormalization":
             "RMSNormalization", "SkipSimplifiedLayerNormalization":
             "RMSNormalization"}


def ort_profile(a, model):
    """Each ORT node's median kernel time (ms) over a.runs profiled runs,
    with its op type: {node name: (op type, ms)}."""
    import numpy as np
    import onnxruntime as ort
    wd = os.path.join(a.work_dir, model)
    os.makedirs(wd, exist_ok=True)
    inputs, _ = bench_run.make_inputs(model, a.batch, wd, 0)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(wd, "ort_profile_b%d" % a.batch)
    sess = ort.InferenceSession(os.path.join(a.models_dir, model + ".onnx"),
                                opts, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(f) for i, f in zip(sess.get_inputs(), inputs)}
    for _ in range(2):
        sess.run(None, feed)
    bench_run.wait_for_quiet(a.quiet_wait, 0.1,
                             lambda m: print(m, file=sys.stderr))
    for _ in range(a.runs):
        sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    times = collections.defaultdict(list)
    kinds = {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        node = e["name"][:-len("_kernel_time")]
        times[node].append(e["dur"] / 1000.0)
        kinds[node] = e.get("args", {}).get("op_name", node)
    # The last a.runs runs (the two warm-up runs come first).
    return {n: (kinds[n], sorted(t[-a.runs:])[len(t[-a.runs:]) // 2])
            for n, t in times.items()}


def report_side_by_side(model, prof, ort_nodes):
    kiln = collections.Counter()
    for r in prof["kernels"]:
        kiln[op_type(r["name"])] += r["ms"]
    ort_by = collections.Counter()
    ort_n = collections.Counter()
    for op, ms in ort_nodes.values():
        op = ORT_FUSED.get(op, op)
        ort_by[op] += ms
        ort_n[op] += 1
    kt, ot = sum(kiln.values()), sum(ort_by.values())
    print("Kiln's profiled regions against ONNX Runtime's nodes (median "
          "kernel times), per op type: %.2f ms and %.2f ms in all (%.2f)\n"
          % (kt, ot, kt / ot if ot else float("nan")))
    print("| op type | Kiln ms | ORT nodes | ORT ms | Kiln/ORT |")
    print("|---|---|---|---|---|")
    for op in sorted(set(kiln) | set(ort_by),
                     key=lambda o: -max(kiln[o], ort_by[o])):
        if max(kiln[op], ort_by[op]) < 0.01 * max(kt, ot):
            continue
        print("| %s | %.2f | %d | %.2f | %s |" % (
            op, kiln[op], ort_n[op], ort_by[op],
            fmt(kiln[op] / ort_by[op] if ort_by[op] else None, ".2f")))
    print()


def report(model, prof, top):
    peaks = prof.get("peaks", {})
    pf, pb = peaks.get("gflops_per_s"), peaks.get("gb_per_s")
    rows = prof["kernels"]
    total = sum(r["ms"] for r in rows)

    def roof(flops, nbytes, ms):
        if not pf or ms <= 0 or flops is None:
            return None
        if flops > 0:
            bound = pf if nbytes <= 0 else min(pf, flops / nbytes * pb)
            return flops / (ms * 1e6) / bound
        return nbytes / (ms * 1e6) / pb if nbytes > 0 else None

    known = [r for r in rows if "flops" in r]
    flops = sum(r["flops"] for r in known)
    print("### %s\n" % model)
    share = prof.get("others_share")
    print("%d regions, %.1f ms; %.2f GFLOP counted, %.1f GFLOP/s overall "
          "(%s of the %s GFLOP/s peak); other processes used %s of the "
          "cores meanwhile\n" % (
              len(rows), total, flops / 1e9, flops / (total * 1e6),
              fmt(100 * flops / (total * 1e6) / pf if pf else None, ".0f") + "%",
              fmt(pf, ".0f"),
              fmt(100 * share if share is not None else None, ".0f") + "%"))
    by = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: -r["ms"]):
        t = by.setdefault(op_type(r["name"]),
                          {"ms": 0.0, "flops": 0, "bytes": 0, "n": 0,
                           "known": True})
        t["ms"] += r["ms"]
        t["n"] += 1
        if "flops" in r:
            t["flops"] += r["flops"]
            t["bytes"] += r["bytes"]
        else:
            t["known"] = False
    print("| op type | regions | ms | share | GFLOP/s | GB/s | % of roofline |")
    print("|---|---|---|---|---|---|---|")
    for name, t in sorted(by.items(), key=lambda kv: -kv[1]["ms"]):
        if t["ms"] < 0.01 * total:
            continue
        ok = t["known"] and t["ms"] > 0
        print("| %s | %d | %.2f | %.1f%% | %s | %s | %s |" % (
            name, t["n"], t["ms"], 100 * t["ms"] / total,
            fmt(t["flops"] / (t["ms"] * 1e6) if ok else None, ".1f"),
            fmt(t["bytes"] / (t["ms"] * 1e6) if ok else None, ".1f"),
            fmt(100 * roof(t["flops"], t["bytes"], t["ms"])
                if ok and roof(t["flops"], t["bytes"], t["ms"]) is not None
                else None, ".0f")))
    print("\nThe %d most expensive computations:\n" % top)
    print("| computation | ms | GFLOP/s | GB/s | FLOP/B | % of roofline | bound |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["ms"])[:top]:
        f, b = r.get("flops"), r.get("bytes")
        ai = f / b if f is not None and b else None
        bound = None
        if pf and f is not None:
            bound = "compute" if f > 0 and (not b or f / b >= pf / pb) else "memory"
        print("| `%s` | %.2f | %s | %s | %s | %s | %s |" % (
            r["name"], r["ms"], fmt(r.get("gflops_per_s"), ".1f"),
            fmt(r.get("gb_per_s"), ".1f"), fmt(ai, ".1f"),
            fmt(100 * r["roofline_fraction"] if "roofline_fraction" in r
                else None, ".0f"), bound or "-"))
    print()
    return peaks


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="resnet50,mobilenet_v2,bert_1layer")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=8)
    p.add_argument("--runs", type=int, default=5,
                   help="profiled runs; each computation's median time")
    p.add_argument("--ort", action="store_true",
                   help="also profile ONNX Runtime; print both per op type")
    p.add_argument("--peaks", help="GFLOPS,GBPS instead of measured ceilings")
    p.add_argument("--quiet-wait", type=float, default=60,
                   help="seconds to wait at most for other load to settle")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--models-dir",
                   default=os.path.join(ROOT, "build", "bench-models"))
    p.add_argument("--work-dir",
                   default=os.path.join(ROOT, "build", "bench-roofline"))
    a = p.parse_args()
    for model in a.models.split(","):
        prof = profile(a, model)
        peaks = report(model, prof, a.top)
        if a.ort:
            report_side_by_side(model, prof, ort_profile(a, model))
    if peaks:
        print("Ceilings: %.1f GFLOP/s, %.1f GB/s (%s)." % (
            peaks["gflops_per_s"], peaks["gb_per_s"], peaks["how"]))


if __name__ == "__main__":
    main()
