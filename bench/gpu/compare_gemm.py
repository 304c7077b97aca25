#!/usr/bin/env python3
"""Kiln's GEMM kernels against torch.matmul (cuBLAS) on an NVIDIA GPU.

Two steps, as the rest of the GPU kit (bench/gpu/pack.py):

  python3 bench/gpu/compare_gemm.py pack --bin build/bin --out DIR \\
      [--chip sm_90a] [--shapes 4096x4096x4096,...] [--dtypes f16,bf16]
      [--layouts nn,nt] [--variant NAME=KILN-COMPILE-FLAGS ...]

compiles, here (compiling needs MLIR), one module per shape MxNxK, type,
layout and variant: an ONNX MatMul of two inputs A[M,K] and B[K,N] of that
type (layout nn), or a Gemm transB=1 of A and B[N,K] (nt, PyTorch's Linear
layout), with no weights, so the modules are small; with a manifest. On the GPU machine,

  python3 bench/gpu/compare_gemm.py run DIR --bin PACK/bin [--iterations 50]

draws seeded inputs, takes torch.matmul's product on the GPU (cuBLAS, f32
accumulation) as the reference, runs each module with `kiln-run
--device=cuda --resident` (inputs on the GPU, every run on device buffers)
checking its output against that reference, times torch.matmul the same
way (CUDA events, mean over the runs after the warm-ups), and prints a
Markdown table of milliseconds, TFLOP/s and Kiln's share of cuBLAS's
throughput.

The check: |kiln - ref| <= 1e-2 * |ref| + 2e-3 * max|ref| per element. Both
accumulate in f32 and round once to the output type, so they differ by the
summation order's rounding and one rounding of the output (f16: 2^-11,
bf16: 2^-8 relative); 2e-3 of the largest magnitude covers f32 summation of
K products of that scale.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {"f16": (10, "float16"), "bf16": (16, "bfloat16")}  # ONNX type, torch


def matmul_model(path, m, n, k, elem, layout="nn"):
    """C = A B with B as [K,N] (layout nn: MatMul) or [N,K] (nt: Gemm
    transB=1, as PyTorch's Linear keeps its weight)."""
    from onnx import helper
    a = helper.make_tensor_value_info("a", elem, [m, k])
    b = helper.make_tensor_value_info("b", elem, [k, n] if layout == "nn" else [n, k])
    c = helper.make_tensor_value_info("c", elem, [m, n])
    node = (helper.make_node("MatMul", ["a", "b"], ["c"], name="gemm") if layout == "nn" else
            helper.make_node("Gemm", ["a", "b"], ["c"], name="gemm", transB=1))
    save_model(helper.make_graph([node], "gemm", [a, b], [c]), path)


def save_model(graph, path):
    """`graph` as an opset 17 model at `path`."""
    import onnx
    from onnx import helper
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def pack(args):
    os.makedirs(args.out, exist_ok=True)
    entries = []
    variants = [(v.split("=", 1)[0], v.split("=", 1)[1]) for v in args.variant] or [("", "")]
    for dtype in args.dtypes.split(","):
        elem = DTYPES[dtype][0]
        for layout in args.layouts.split(","):
            for shape in args.shapes.split(","):
                m, n, k = (int(v) for v in shape.split("x"))
                name = "gemm-%s-%s-%dx%dx%d" % (dtype, layout, m, n, k)
                onnx_path = os.path.join(args.out, name + ".onnx")
                matmul_model(onnx_path, m, n, k, elem, layout)
                for variant, flags in variants:
                    kmod = name + ("-" + variant if variant else "") + ".kmod"
                    cmd = [os.path.join(args.bin, "kiln-compile"), onnx_path,
                           "--target=" + args.chip, "-o", os.path.join(args.out, kmod)] + flags.split()
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    if p.returncode:
                        sys.exit("compare_gemm.py: %s failed:\n%s" % (" ".join(cmd), p.stderr))
                    entries.append({"dtype": dtype, "layout": layout, "m": m, "n": n, "k": k,
                                    "module": kmod, "variant": variant, "flags": flags})
                    print("compare_gemm.py: %s compiled for %s" % (kmod, args.chip), flush=True)
                os.remove(onnx_path)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"chip": args.chip, "entries": entries}, f, indent=1)


def time_cuda(fn, warmup, iterations):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iterations):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.mean(times))


def save_npy(path, t):
    """A tensor as .npy; bfloat16 as its uint16 bits, as kiln-run reads it."""
    import torch
    if t.dtype == torch.bfloat16:
        np.save(path, t.cpu().view(torch.int16).numpy().view(np.uint16))
    else:
        np.save(path, t.cpu().numpy())


def run(args):
    import torch
    if not torch.cuda.is_available():
        sys.exit("compare_gemm.py: PyTorch sees no CUDA device")
    device = torch.cuda.get_device_name(0)
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    rows, failed = [], False
    tmp = tempfile.mkdtemp()
    product = None  # (key, torch ms, atol) of the inputs now in tmp
    for e in manifest["entries"]:
        m, n, k = e["m"], e["n"], e["k"]
        layout = e.get("layout", "nn")
        key = (e["dtype"], layout, m, n, k)
        if product is None or product[0] != key:
            # Once per product (pack writes a product's variants one after
            # another): seeded inputs, cuBLAS's product and time, the files.
            dt = getattr(torch, DTYPES[e["dtype"]][1])
            g = torch.Generator(device="cuda").manual_seed(1)
            a = torch.randn(m, k, device="cuda", generator=g).to(dt)
            b = torch.randn(*((k, n) if layout == "nn" else (n, k)), device="cuda",
                            generator=g).to(dt)
            bm = b if layout == "nn" else b.t()  # cuBLAS reads the transposed view in place
            ref = torch.matmul(a, bm)
            torch_ms = time_cuda(lambda: torch.matmul(a, bm), args.warmup, args.iterations)
            for x, f in ((a, "a.npy"), (b, "b.npy"), (ref, "ref.npy")):
                save_npy(os.path.join(tmp, f), x)
            product = (key, torch_ms, 2e-3 * float(ref.float().abs().max()))
            del a, b, bm, ref
        row = {"dtype": e["dtype"], "layout": layout, "m": m, "n": n, "k": k,
               "variant": e.get("variant", ""), "flags": e.get("flags", ""),
               "torch_ms": product[1]}
        result = os.path.join(tmp, "r.json")
        if os.path.exists(result):
            os.remove(result)
        cmd = [os.path.join(args.bin, "kiln-run"), os.path.join(args.dir, e["module"]),
               "--device=cuda", "--resident", "--warmup", str(args.warmup),
               "--iterations", str(args.iterations), "--json", result,
               "--input", os.path.join(tmp, "a.npy"), "--input", os.path.join(tmp, "b.npy"),
               "--expected", os.path.join(tmp, "ref.npy"), "--rtol", "1e-2",
               "--atol", "%g" % product[2]]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            p = subprocess.CompletedProcess(cmd, 124, "", "timed out after %d s" % args.timeout)
        if os.path.exists(result):
            res = json.load(open(result))
            row["kiln_ms"] = res["benchmark"]["mean_ms"]
            row["check"] = "ok" if p.returncode == 0 else "MISMATCH"
        else:
            row["check"] = "error: " + (p.stderr.strip() or p.stdout.strip())[-200:]
        if p.returncode:
            failed = True
            print(p.stdout[-2000:], p.stderr[-2000:], file=sys.stderr)
        rows.append(row)
        print(json.dumps(row), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    lines = ["| type | B | M | N | K | Kiln flags | torch.matmul ms | TFLOP/s | Kiln ms | TFLOP/s "
             "| Kiln/cuBLAS throughput | check |",
             "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        flop = 2.0 * r["m"] * r["n"] * r["k"]
        tt = flop / r["torch_ms"] / 1e9
        km = r.get("kiln_ms")
        kt = flop / km / 1e9 if km else None
        lines.append("| %s | %s | %d | %d | %d | %s | %.3f | %.0f | %s | %s | %s | %s |" % (
            r["dtype"], "[K,N]" if r["layout"] == "nn" else "[N,K]", r["m"], r["n"], r["k"],
            "`%s`" % r["flags"] if r["flags"] else "(defaults)", r["torch_ms"], tt,
            "%.3f" % km if km else "-", "%.0f" % kt if kt else "-",
            "%.2f" % (kt / tt) if kt else "-", r["check"]))
    print_table(args, "GEMMs", device, manifest["chip"], "\n".join(lines))
    return 1 if failed else 0


def add_steps(ap, what):
    """The pack and run subcommands with the options both GEMM scripts
    share; returns their parsers for the script's own options."""
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("pack", help="compile the %s modules (needs MLIR)" % what)
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--out", required=True)
    p.add_argument("--chip", default="sm_90a")
    r = sub.add_parser("run", help="check and time them (a GPU)")
    r.add_argument("dir")
    r.add_argument("--bin", default="build/bin")
    r.add_argument("--iterations", type=int, default=50)
    r.add_argument("--warmup", type=int, default=10)
    r.add_argument("--markdown")
    r.add_argument("--timeout", type=int, default=120, help="seconds per kiln-run")
    return p, r


def print_table(args, title, device, chip, table):
    print("%s on %s, %s (mean of %d runs after %d warm-ups; modules for %s)\n\n%s" % (
        title, device, datetime.date.today(), args.iterations, args.warmup, chip, table))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p, r = add_steps(ap, "GEMM")
    p.add_argument("--shapes", default="1024x1024x1024,2048x2048x2048,4096x4096x4096,"
                   "4096x3072x768,128x768x3072")
    p.add_argument("--dtypes", default="f16")
    p.add_argument("--layouts", default="nn",
                   help="nn: B as [K,N] (MatMul); nt: B as [N,K] (Gemm transB=1)")
    p.add_argument("--variant", action="append", default=[],
                   help="NAME=FLAGS: also compile each product with these kiln-compile "
                        "flags (repeatable; without any, the defaults alone)")
    args = ap.parse_args()
    sys.exit(pack(args) if args.step == "pack" else run(args))


if __name__ == "__main__":
    main()
