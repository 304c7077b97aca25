#!/usr/bin/env python3
"""Kiln's 2:4 sparse tensor-core products (mma.sp) against its dense ones
and PyTorch's (cuBLAS dense; cuSPARSELt or CUTLASS semi-structured sparse)
on an NVIDIA GPU.

Two steps, as the rest of the GPU kit (bench/gpu/pack.py):

  python3 bench/gpu/compare_sparse.py pack --bin build/bin --out DIR \\
      [--chip sm_90a] [--shapes 4096x3072x768,...] [--precision fp16]
      [--convs 32x256x14x14:256x3x3,...]

compiles, here, for each product MxNxK a float32 ONNX Gemm
y[M,N] = x[M,K] W[N,K]^T (transB=1: a Linear layer) whose constant W is
2:4 along K (seeded, pruned by magnitude), and for each convolution
BxCxHxW:FxKHxKW a float32 ONNX Conv (stride 1, padded to keep the plane)
whose constant W [F, C, KH, KW] is 2:4 along its input channels at each
output channel and tap (as NVIDIA's ASP prunes convolutions), twice with
`--precision=fp16` (or bf16): dense, and with `--sparsity=on`. The
weights travel in the modules (dense: 2 bytes a value; sparse: 56%), not
as files: the run step draws W again from its seed and checks its hash.
On the GPU machine,

  python3 bench/gpu/compare_sparse.py run DIR --bin PACK/bin

draws x, takes F.linear(x, W) (F.conv2d for a convolution: cuDNN) in
half precision on the GPU (cuBLAS) as the reference, checks and times both Kiln modules with `kiln-run
--device=cuda --resident` (each also converts x to half precision and y
back to float32: two small kernels more than the product), times cuBLAS,
and where PyTorch can, the same product with W as
`torch.sparse.to_sparse_semi_structured` (cuSPARSELt, or CUTLASS), and
prints a Markdown table. `run --device emulator` goes through the same
steps without a GPU (PyTorch on the CPU, `kiln-run --device=emulator`,
wall-clock times that mean nothing): a check of the script and the
modules on small shapes.

The check is compare_gemm.py's: |kiln - ref| <= 1e-2 |ref| + 2e-3 max|ref|.

With `--precision int8` the models are integer ones instead: MatMulInteger
y[M,N] = x[M,K] W[K,N] and ConvInteger, int8 x (drawn from a seed in
[-127, 127]) and a constant int8 W 2:4 along K (the float weight above,
scaled to [-127, 127]), int32 outputs. Kiln runs them on the int8 tensor
cores (mma.sync s8, and mma.sp m16n8k64 s8 sparse); the reference is
exact (the product in float64 on the GPU, rounded; every partial sum is an
integer far below 2^53) and every Kiln module must equal it. cuBLAS's
time is torch._int_mm's (int8 into int32), a convolution's cuDNN time is
its fp16 F.conv2d (PyTorch has no int8 convolution on the GPU), and
PyTorch's 2:4 time, where it runs int8, to_sparse_semi_structured's.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_gemm import (add_steps, print_table, save_model, save_npy,  # noqa: E402
                          time_cuda)

TORCH_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "int8": "int8"}


def int8_weight(w):
    """A float 2:4 weight as int8 in [-127, 127] (zeros stay zeros)."""
    return np.round(w * (127.0 / np.abs(w).max())).astype(np.int8)


def weight(n, k, seed):
    """W [N, K], float32, at most two non-zeros in each group of four
    along K (the two of largest magnitude kept)."""
    w = np.random.default_rng(seed).standard_normal((n, k)).astype(np.float32)
    w *= np.float32(1.0 / np.sqrt(k))
    return keep_two_of_four(w.reshape(n, k // 4, 4)).reshape(n, k)


def keep_two_of_four(g):
    """`g` with only the two largest magnitudes (the first on ties) of
    each group of four along its axis 2."""
    order = np.argsort(-np.abs(g), axis=2, kind="stable")
    mask = np.zeros_like(g, dtype=bool)
    np.put_along_axis(mask, order[:, :, :2], True, axis=2)
    return g * mask


def conv_weight(f, c, kh, kw, seed):
    """W [F, C, KH, KW], float32, at most two non-zeros in each group of
    four input channels at each (f, kh, kw) (the two of largest magnitude
    kept)."""
    w = np.random.default_rng(seed).standard_normal((f, c, kh, kw)).astype(np.float32)
    w *= np.float32(1.0 / np.sqrt(c * kh * kw))
    return keep_two_of_four(w.reshape(f, c // 4, 4, kh, kw)).reshape(f, c, kh, kw)


def digest(w):
    return hashlib.sha256(w.tobytes()).hexdigest()


def gemm_model(path, m, n, k, w):
    from onnx import TensorProto, helper, numpy_helper
    if w.dtype == np.int8:
        # x[M,K] (int8) times W^T [K,N]: the product of the float model.
        save_model(helper.make_graph(
            [helper.make_node("MatMulInteger", ["x", "w"], ["y"], name="linear")],
            "sparse_gemm_int8",
            [helper.make_tensor_value_info("x", TensorProto.INT8, [m, k])],
            [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])],
            [numpy_helper.from_array(np.ascontiguousarray(w.T), "w")]), path)
        return
    save_model(helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="linear", transB=1)],
        "sparse_gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w")]), path)


def conv_model(path, b, c, h, wd, f, kh, kw, w):
    from onnx import TensorProto, helper, numpy_helper
    integer = w.dtype == np.int8
    save_model(helper.make_graph(
        [helper.make_node("ConvInteger" if integer else "Conv", ["x", "w"], ["y"],
                          name="conv", kernel_shape=[kh, kw],
                          pads=[kh // 2, kw // 2, kh // 2, kw // 2])],
        "sparse_conv",
        [helper.make_tensor_value_info("x", TensorProto.INT8 if integer else TensorProto.FLOAT,
                                       [b, c, h, wd])],
        [helper.make_tensor_value_info("y", TensorProto.INT32 if integer else TensorProto.FLOAT,
                                       [b, f, h, wd])],
        [numpy_helper.from_array(w, "w")]), path)


def parse_conv(spec):
    """BxCxHxW:FxKHxKW (odd KH, KW) as (b, c, h, w, f, kh, kw)."""
    x, k = spec.split(":")
    b, c, h, wd = (int(v) for v in x.split("x"))
    f, kh, kw = (int(v) for v in k.split("x"))
    if c % 4 or kh % 2 == 0 or kw % 2 == 0:
        sys.exit("compare_sparse.py: %s: C must be a multiple of 4, KH and KW odd" % spec)
    return b, c, h, wd, f, kh, kw


def pack(args):
    os.makedirs(args.out, exist_ok=True)
    entries = []
    jobs = [("gemm", s) for s in args.shapes.split(",") if s] + \
        [("conv", s) for s in args.convs.split(",") if s]
    for i, (op, shape) in enumerate(jobs):
        seed = 100 + i
        if op == "gemm":
            m, n, k = (int(v) for v in shape.split("x"))
            if k % 4:
                sys.exit("compare_sparse.py: K = %d is not a multiple of 4" % k)
            w = weight(n, k, seed)
            if args.precision == "int8":
                w = int8_weight(w)
            name = "sparse-%s-%dx%dx%d" % (args.precision, m, n, k)
            entry = {"op": "gemm", "m": m, "n": n, "k": k}
        else:
            b, c, h, wd, f, kh, kw = parse_conv(shape)
            w = conv_weight(f, c, kh, kw, seed)
            if args.precision == "int8":
                w = int8_weight(w)
            name = "sparse-%s-conv-%dx%dx%dx%d-%dx%dx%d" % (args.precision, b, c, h, wd, f,
                                                           kh, kw)
            # The implicit GEMM: M output channels, N positions, K = (kh, kw, c).
            entry = {"op": "conv", "b": b, "c": c, "h": h, "w": wd, "f": f, "kh": kh,
                     "kw": kw, "m": f, "n": b * h * wd, "k": c * kh * kw}
        onnx_path = os.path.join(args.out, name + ".onnx")
        if op == "gemm":
            gemm_model(onnx_path, m, n, k, w)
        else:
            conv_model(onnx_path, b, c, h, wd, f, kh, kw, w)
        modules = {}
        for kind, flags in (("dense", []), ("sparse", ["--sparsity=on", "--report"])):
            kmod = "%s-%s.kmod" % (name, kind)
            # An integer model runs its int8 products as they are.
            precision = [] if args.precision == "int8" else ["--precision=" + args.precision]
            cmd = [os.path.join(args.bin, "kiln-compile"), onnx_path, "--target=" + args.chip,
                   "-o", os.path.join(args.out, kmod)] + precision + flags
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                sys.exit("compare_sparse.py: %s failed:\n%s" % (" ".join(cmd), p.stderr))
            if kind == "sparse" and ("1 of 1 contractions run 2:4 sparse" not in p.stderr or
                                     "is read dense" in p.stderr):
                sys.exit("compare_sparse.py: %s does not run its product sparse:\n%s" %
                         (kmod, p.stderr))
            modules[kind] = kmod
            print("compare_sparse.py: %s compiled for %s" % (kmod, args.chip), flush=True)
        os.remove(onnx_path)
        entry.update({"seed": seed, "sha256": digest(w), "precision": args.precision,
                      "modules": modules})
        entries.append(entry)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"chip": args.chip, "entries": entries}, f, indent=1)


def time_cpu(fn, warmup, iterations):
    import time
    for _ in range(warmup):
        fn()
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    return (time.perf_counter() - start) * 1e3 / iterations


def kiln_time(args, module, x_path, ref_path, atol, tmp):
    """Kiln's mean time of `module` and its check against the reference
    (within 1e-2 relative and `atol`; exact where `atol` is 0)."""
    result = os.path.join(tmp, "r.json")
    if os.path.exists(result):
        os.remove(result)
    device = (["--device=cuda", "--resident"] if args.device == "cuda" else
              ["--device=emulator", "--benchmark"])
    cmd = [os.path.join(args.bin, "kiln-run"), os.path.join(args.dir, module)] + device + [
           "--warmup", str(args.warmup), "--iterations", str(args.iterations),
           "--json", result, "--input", x_path, "--expected", ref_path,
           "--rtol", "1e-2" if atol else "0", "--atol", "%g" % atol]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, "error: timed out after %d s" % args.timeout
    if not os.path.exists(result):
        return None, "error: " + (p.stderr.strip() or p.stdout.strip())[-200:]
    ms = json.load(open(result))["benchmark"]["mean_ms"]
    return ms, "ok" if p.returncode == 0 else "MISMATCH"


def run(args):
    import torch
    import torch.nn.functional as F
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("compare_sparse.py: PyTorch sees no CUDA device")
        device, dev, timer = torch.cuda.get_device_name(0), "cuda", time_cuda
    else:
        device, dev, timer = "the kernel emulator (times mean nothing)", "cpu", time_cpu
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    rows, failed = [], False
    tmp = tempfile.mkdtemp()
    for e in manifest["entries"]:
        m, n, k = e["m"], e["n"], e["k"]
        conv = e.get("op") == "conv"
        w = conv_weight(e["f"], e["c"], e["kh"], e["kw"], e["seed"]) if conv else \
            weight(n, k, e["seed"])
        integer = e["precision"] == "int8"
        if integer:
            w = int8_weight(w)
        if digest(w) != e["sha256"]:
            sys.exit("compare_sparse.py: this numpy draws another W for seed %d than the "
                     "packing machine's; the references would be wrong" % e["seed"])
        dt = getattr(torch, TORCH_DTYPE[e["precision"]])
        g = torch.Generator(device=dev).manual_seed(1)
        shape = (e["b"], e["c"], e["h"], e["w"]) if conv else (m, k)
        pad = (e["kh"] // 2, e["kw"] // 2) if conv else None
        if integer:
            # Exact: int8 values, float64 sums of integers below 2^53.
            x = torch.randint(-127, 128, shape, device=dev, generator=g, dtype=torch.int8)
            wi = torch.from_numpy(w).to(dev)
            ref = (F.conv2d(x.double(), wi.double(), padding=pad) if conv else
                   x.double() @ wi.double().t()).round().to(torch.int32)
            xh, wh = x, wi
            if conv:
                # Timed: cuDNN's fp16 convolution of the same shape.
                xf, wf = x.half(), wi.half()

                def product():
                    return F.conv2d(xf, wf, padding=pad)
            else:
                wt = wi.t()  # [K, N], column-major (a view of W [N, K])

                def product():
                    return torch._int_mm(x, wt)
            atol = 0.0
        else:
            x = torch.randn(*shape, device=dev, generator=g)
            xh, wh = x.to(dt), torch.from_numpy(w).to(dev).to(dt)
            if conv:
                def product():
                    return F.conv2d(xh, wh, padding=pad)
            else:
                def product():
                    return F.linear(xh, wh)
            ref = product().float()
            atol = 2e-3 * float(ref.abs().max())
        save_npy(os.path.join(tmp, "x.npy"), x)
        save_npy(os.path.join(tmp, "ref.npy"), ref)
        row = {"precision": e["precision"] + (" conv %dx%d" % (e["kh"], e["kw"]) if conv else ""),
               "m": m, "n": n, "k": k}
        try:
            row["torch_ms"] = timer(product, args.warmup, args.iterations)
        except RuntimeError as ex:  # torch._int_mm refuses some shapes
            print("compare_sparse.py: PyTorch's product: %s" % str(ex).splitlines()[0][:120])
        try:
            if conv:
                raise ValueError("PyTorch has no semi-structured sparse convolution")
            from torch.sparse import to_sparse_semi_structured
            ws = to_sparse_semi_structured(wh)
            err = float((F.linear(xh, ws).double() - ref.double()).abs().max())
            row["torch_sparse_ms"] = timer(lambda: F.linear(xh, ws), args.warmup,
                                           args.iterations)
            row["torch_sparse_check"] = "ok" if err <= atol else "max err %.3g" % err
        except Exception as ex:  # not built with cuSPARSELt/CUTLASS, or a shape it refuses
            row["torch_sparse_check"] = "n/a: %s" % str(ex).splitlines()[0][:120]
        for kind in ("dense", "sparse"):
            ms, check = kiln_time(args, e["modules"][kind], os.path.join(tmp, "x.npy"),
                                  os.path.join(tmp, "ref.npy"), atol, tmp)
            row["kiln_%s_ms" % kind], row["kiln_%s_check" % kind] = ms, check
            failed |= check != "ok"
        rows.append(row)
        print(json.dumps(row), flush=True)
        del x, xh, wh, ref
    shutil.rmtree(tmp, ignore_errors=True)

    def ms(v):
        return "%.3f" % v if v else "-"
    lines = ["| type | M | N | K | cuBLAS/cuDNN ms | PyTorch 2:4 ms | Kiln dense ms | Kiln 2:4 ms "
             "| Kiln 2:4 / dense | Kiln 2:4 / PyTorch 2:4 | checks (Kiln dense, 2:4; PyTorch 2:4) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        kd, ks, ts = r.get("kiln_dense_ms"), r.get("kiln_sparse_ms"), r.get("torch_sparse_ms")
        lines.append("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s, %s; %s |" % (
            r["precision"], r["m"], r["n"], r["k"], ms(r.get("torch_ms")), ms(ts), ms(kd), ms(ks),
            "%.2f" % (ks / kd) if ks and kd else "-", "%.2f" % (ks / ts) if ks and ts else "-",
            r["kiln_dense_check"], r["kiln_sparse_check"], r["torch_sparse_check"]))
    print_table(args, "2:4 sparse products", device, manifest["chip"], "\n".join(lines))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p, r = add_steps(ap, "2:4 sparse and dense")
    p.add_argument("--shapes", default="4096x3072x768,4096x768x3072,128x3072x768",
                   help="MxNxK products: M rows of x, N and K of the weight")
    p.add_argument("--convs", default="",
                   help="BxCxHxW:FxKHxKW convolutions (stride 1, same padding), e.g. "
                        "32x256x14x14:256x3x3 (ResNet-50's layer3 at batch 32); their "
                        "M N K in the table are the implicit GEMM's: F, B*H*W, C*KH*KW")
    p.add_argument("--precision", choices=sorted(TORCH_DTYPE), default="fp16",
                   help="fp16 or bf16 (float models compiled with --precision), or int8 "
                        "(MatMulInteger and ConvInteger models)")
    r.add_argument("--device", choices=["cuda", "emulator"], default="cuda",
                   help="emulator: check the script and modules without a GPU")
    args = ap.parse_args()
    sys.exit(pack(args) if args.step == "pack" else run(args))


if __name__ == "__main__":
    main()
