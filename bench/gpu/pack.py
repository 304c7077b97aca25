#!/usr/bin/env python3
"""Cross-compiles Kiln's GPU checks and benchmarks for a machine without MLIR.

A machine with an NVIDIA GPU often has the driver, CUDA and PyTorch but no
LLVM/MLIR to build Kiln with. This script compiles everything here, with
`kiln-compile --target=CHIP`, and writes one archive that holds what
running needs there:

  bin/kiln-run, lib/       kiln-run and the shared libraries it loads that
                           are not part of the C/C++ runtime (the Kiln
                           runtime, libonnx_proto, libprotobuf)
  conformance/             every ONNX backend test of
                           test/conformance/emulator-passing.txt: its
                           module (kmods/SET/TEST.kmod) and data
  models/                  test/gpu/models.test's two models, each with
                           seeded inputs and ONNX Runtime's outputs
  bench/                   the benchmark models of bench/models/export.py
                           that --models names, per batch size: module,
                           inputs, ONNX Runtime's outputs, manifest.json
                           (with --int8 also each model quantized by
                           quantize_static, with ONNX Runtime's outputs of
                           that QDQ model; with --fp8 each model with
                           --precision=fp8, with Kiln's CPU outputs of it)
  gemm/                    bench/gpu/compare_gemm.py's MatMul modules
                           (--gemm-shapes, --gemm-dtypes), timed there
                           against torch.matmul
  sparse/                  bench/gpu/compare_sparse.py's 2:4 Linear
                           products and convolutions, dense and sparse
                           (--sparse-shapes, --sparse-convs;
                           only when --parts names it: their weights are
                           about 20 MB), timed there against cuBLAS and
                           PyTorch's semi-structured sparse products

bench/gpu/run-pack.sh runs it all there (the test/gpu checks, the
benchmark against PyTorch eager and torch.compile, one profile).

  python3 bench/gpu/pack.py [--bin build/bin] [--out build/gpu-pack.tar.xz]
      [--chip sm_90a] [--models mobilenet_v2] [--batches 1,8]
      [--bench-models build/bench-models] [--variant fp32= --variant tf32=--gpu-tf32]
      [--int8] [--fp8]
      [--parts conformance,models,bench,gemm] [--gemm-shapes 4096x4096x4096]

A GPU machine takes 64 MiB of files per call: the big models' weights
(ResNet-50 98 MB, BERT-base 418 MB; half that in fp16) do not fit, so the
default benchmark set is MobileNetV2 alone. A larger archive is also
written in parts (OUT.00, OUT.01, ... of --part-mib, default 59: the
64 MiB hold the repository's own files too): send one per call, in a row
while the machine is held (its files stay between calls), and
run-pack.sh joins them.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "models"))

# Libraries every Linux machine with a C++ runtime has.
SYSTEM_LIBS = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libstdc++", "libgcc_s",
               "libpthread", "libdl.so", "librt.so", "libz.so")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("pack.py: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def copy_runtime(bin_dir, out):
    os.makedirs(os.path.join(out, "bin"))
    os.makedirs(os.path.join(out, "lib"))
    kiln_run = os.path.join(bin_dir, "kiln-run")
    shutil.copy2(kiln_run, os.path.join(out, "bin"))
    for line in run(["ldd", kiln_run]).splitlines():
        parts = line.split()
        if "=>" not in parts or any(parts[0].startswith(s) for s in SYSTEM_LIBS):
            continue
        path = parts[parts.index("=>") + 1]
        if path == "not":
            sys.exit("pack.py: kiln-run cannot find %s" % parts[0])
        shutil.copy2(os.path.realpath(path), os.path.join(out, "lib", parts[0]))


def pack_conformance(bin_dir, out, chip, data):
    listing = os.path.join(ROOT, "test", "conformance", "emulator-passing.txt")
    kmods = os.path.join(out, "conformance", "kmods")
    subprocess.run([sys.executable, os.path.join(ROOT, "utils", "conformance.py"),
                    "--bin", bin_dir, "--data", data, "--target", chip, "--compile-only",
                    "--kmod-dir", kmods, "--check", listing], check=False)
    for line in open(listing):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        src = os.path.join(data, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(out, "conformance", "data", name))


def ort_reference(onnx_path, feeds, outdir, inputs=True):
    import onnxruntime as ort
    os.makedirs(outdir, exist_ok=True)
    for k, x in enumerate(feeds.values() if inputs else ()):
        np.save(os.path.join(outdir, "input_%d.npy" % k), x)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    for k, y in enumerate(sess.run(None, feeds)):
        np.save(os.path.join(outdir, "output_%d.npy" % k), y)


def compile_module(bin_dir, onnx_path, kmod, chip, shapes, flags=()):
    run([os.path.join(bin_dir, "kiln-compile"), onnx_path, "--target=" + chip, "-o", kmod] +
        list(flags) + ["--input-shape=%s:%s" % (n, "x".join(str(d) for d in s)) for n, s in shapes.items()])


def pack_models(bin_dir, out, chip, tmp):
    d = os.path.join(out, "models")
    os.makedirs(d)
    rng = np.random.default_rng(0)
    for name, script, extra, shapes in (
            ("tiny_resnet", "tiny_resnet.py", [], {"input": (2, 3, 32, 32)}),
            ("tiny_transformer", "tiny_transformer.py", ["--opset", "21"],
             {"hidden_states": (2, 16, 32)})):
        onnx_path = os.path.join(tmp, name + ".onnx")
        run([sys.executable, os.path.join(HERE, "..", "models", script), onnx_path] + extra)
        feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
        ort_reference(onnx_path, feeds, os.path.join(d, name))
        compile_module(bin_dir, onnx_path, os.path.join(d, name + ".kmod"), chip, shapes)


def cpu_reference(bin_dir, model, cpu_kmod, flags, shapes, d, key, ref, n_inputs):
    """Compiles `model` with `flags` for this CPU and runs it on the pack's
    inputs of `key`, writing its outputs into the pack's folder `ref`;
    returns their paths."""
    os.makedirs(os.path.join(d, ref))
    compile_module(bin_dir, model, cpu_kmod, "cpu", shapes, flags)
    cmd = [os.path.join(bin_dir, "kiln-run"), cpu_kmod]
    for k in range(n_inputs):
        cmd += ["--input", os.path.join(d, key, "input_%d.npy" % k)]
    outs = [os.path.join(d, ref, "output_%d.npy" % k)
            for k in range(len(os.listdir(os.path.join(d, key))) - n_inputs)]
    for o in outs:
        cmd += ["--output", o]
    run(cmd)
    return outs


def pack_bench(bin_dir, out, chip, models, batches, models_dir, variants, int8, fp8, tmp):
    import export
    from compare_torch import torch_inputs
    sys.path.insert(0, os.path.join(HERE, "..", "quantization"))
    import qdq_models
    d = os.path.join(out, "bench")
    os.makedirs(d)
    manifest = []

    def entry(name, batch, key, variant, flags, kmod, ref, **extra):
        e = {"model": name, "batch": batch, "variant": variant,
             "flags": " ".join(flags), "module": kmod,
             "inputs": ["%s/input_%d.npy" % (key, k)
                        for k in range(len(export.input_specs(name)))],
             "expected": sorted("%s/%s" % (ref, f) for f in
                                os.listdir(os.path.join(d, ref))
                                if f.startswith("output_"))}
        e.update(extra)
        manifest.append(e)
        print("pack.py: %s compiled for %s" % (kmod, chip), flush=True)

    for name in models:
        onnx_path = export.exported_path(models_dir, name)
        # 4 seeded calibration inputs of batch 1 (as qdq_models.py): for the
        # model quantize_static writes (--int8) and for --precision=fp8.
        cal_dir = os.path.join(tmp, name + "-calibration")
        cal = qdq_models.calibration(name, cal_dir)
        qdq, step = None, None
        if int8:
            qdq = os.path.join(tmp, name + "-qdq.onnx")
            step = qdq_models.quantize_qdq(onnx_path, qdq, cal)
        for batch in batches:
            key = "%s-b%d" % (name, batch)
            ins = torch_inputs(name, batch, seed=1)
            names = list(export.input_specs(name))
            feeds = {n: t.numpy() for n, t in zip(names, ins)}
            shapes = {n: x.shape for n, x in feeds.items()}
            ort_reference(onnx_path, feeds, os.path.join(d, key))
            for variant, flags in variants:
                kmod = "%s-%s.kmod" % (key, variant)
                compile_module(bin_dir, onnx_path, os.path.join(d, kmod), chip, shapes, flags)
                entry(name, batch, key, variant, flags, kmod, key)
            if qdq:
                # Checked against the same QDQ model run here on Kiln's CPU
                # code within one quantization step of its first output (the
                # integer products are exact on both; the float ops between
                # the Q/DQ pairs may round a value near a step boundary the
                # other way), and timed against PyTorch in fp16. (The CPU's
                # own outputs are compared with ONNX Runtime's by
                # bench/quantization/qdq_models.py: ResNet-50 within one
                # step, BERT-base 8-9 steps away through its 12 layers.)
                ref = key + "-int8"
                kmod = "%s-int8.kmod" % key
                cpu_reference(bin_dir, qdq, os.path.join(tmp, kmod + ".cpu"), [],
                              shapes, d, key, ref, len(ins))
                compile_module(bin_dir, qdq, os.path.join(d, kmod), chip, shapes)
                entry(name, batch, key, "int8", [], kmod, ref, torch_dtype="float16",
                      atol=step * 1.001 if step else None)
            if fp8:
                # --precision=fp8 (the fp8 tensor cores), checked against the
                # same quantized model run here on Kiln's CPU code (f32
                # between the quantizations) within 10% of its largest
                # output: a sanity check for the timing (a value near a
                # float8 rounding boundary rounds the other way where the
                # GPU sums in another order, and over MobileNetV2's 52
                # layers that reaches 7% through the emulator;
                # test/e2e/gpu-fp8.test checks the tiles exactly). Timed
                # against PyTorch in fp16.
                flags = ["--precision=fp8", "--calibration-data=" + cal_dir]
                ref = key + "-fp8"
                outs = cpu_reference(bin_dir, onnx_path, os.path.join(tmp, key + "-fp8-cpu.kmod"),
                                     flags, shapes, d, key, ref, len(ins))
                largest = max(float(np.abs(np.load(o)).max()) for o in outs)
                kmod = "%s-fp8.kmod" % key
                compile_module(bin_dir, onnx_path, os.path.join(d, kmod), chip, shapes, flags)
                entry(name, batch, key, "fp8", [], kmod, ref, torch_dtype="float16",
                      atol=0.1 * largest)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"chip": chip, "entries": manifest}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--out", default="build/gpu-pack.tar.xz")
    ap.add_argument("--max-mib", type=float, default=64,
                    help="what one call to the GPU machine takes; a larger archive is "
                         "also written in parts OUT.00, OUT.01, ... of --part-mib")
    ap.add_argument("--part-mib", type=float, default=59)
    ap.add_argument("--chip", default="sm_90a",
                    help="sm_90a (H100, H200: wgmma tiles), sm_90, sm_80, ...")
    ap.add_argument("--models", default="mobilenet_v2",
                    help="benchmark models (bench/models/export.py names; '' for none)")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--bench-models", default="build/bench-models",
                    help="where bench/models/export.py wrote the models")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=FLAGS: also compile each benchmark model with these "
                         "kiln-compile flags (e.g. tf32=--gpu-tf32); repeatable. "
                         "Without any, one variant 'fp32' with no flags; 'NAME=' "
                         "names the default flags")
    ap.add_argument("--int8", action="store_true",
                    help="also pack each benchmark model quantized by onnxruntime's "
                         "quantize_static (QDQ, int8; Kiln runs its Conv and MatMul on "
                         "the int8 tensor cores), checked against Kiln's CPU output of "
                         "that model within one quantization step and timed against "
                         "PyTorch in fp16")
    ap.add_argument("--fp8", action="store_true",
                    help="also pack each benchmark model compiled with --precision=fp8 "
                         "(calibrated on 4 seeded inputs; the fp8 tensor cores on "
                         "sm_89 and later), checked against the same quantized model on "
                         "Kiln's CPU code and timed against PyTorch in fp16")
    ap.add_argument("--parts", default="conformance,models,bench,gemm",
                    help="what to pack besides kiln-run (comma-separated): "
                         "conformance, models, bench, gemm, sparse")
    ap.add_argument("--gemm-shapes", default="1024x1024x1024,2048x2048x2048,4096x4096x4096,"
                    "4096x3072x768,128x768x3072", help="the gemm part's MxNxK products")
    ap.add_argument("--gemm-dtypes", default="f16")
    ap.add_argument("--gemm-layouts", default="nn,nt")
    ap.add_argument("--gemm-variant", action="append", default=[],
                    help="NAME=FLAGS: kiln-compile flags for the gemm part (repeatable)")
    ap.add_argument("--sparse-convs", default="32x256x14x14:256x3x3,32x128x28x28:128x3x3",
                    help="with --parts ...,sparse: compare_sparse.py's convolutions "
                         "BxCxHxW:FxKHxKW (default: ResNet-50's layer3 and layer2 3x3 "
                         "convolutions at batch 32)")
    ap.add_argument("--sparse-shapes", default="4096x3072x768,4096x768x3072,128x3072x768",
                    help="the sparse part's MxNxK Linear products (x [M,K], W [N,K])")
    ap.add_argument("--sparse-precision", default="fp16",
                    help="fp16, bf16 or int8 (compare_sparse.py's --precision)")
    args = ap.parse_args()
    parts = args.parts.split(",")
    stage = args.out + ".d"
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    copy_runtime(args.bin, stage)
    if "conformance" in parts:
        pack_conformance(args.bin, stage, args.chip, args.data)
    if "models" in parts:
        os.makedirs(args.out + ".tmp", exist_ok=True)
        pack_models(args.bin, stage, args.chip, args.out + ".tmp")
    models = [m for m in args.models.split(",") if m]
    if models and "bench" in parts:
        variants = [(v.split("=", 1)[0], v.split("=", 1)[1].split())
                    for v in args.variant] or [("fp32", [])]
        os.makedirs(args.out + ".tmp", exist_ok=True)
        pack_bench(args.bin, stage, args.chip, models,
                   [int(b) for b in args.batches.split(",")], args.bench_models, variants,
                   args.int8, args.fp8, args.out + ".tmp")
    if "gemm" in parts:
        run([sys.executable, os.path.join(HERE, "compare_gemm.py"), "pack", "--bin", args.bin,
             "--out", os.path.join(stage, "gemm"), "--chip", args.chip,
             "--shapes", args.gemm_shapes, "--dtypes", args.gemm_dtypes,
             "--layouts", args.gemm_layouts] +
            ["--variant=" + v for v in args.gemm_variant])
    if "sparse" in parts:
        run([sys.executable, os.path.join(HERE, "compare_sparse.py"), "pack", "--bin", args.bin,
             "--out", os.path.join(stage, "sparse"), "--chip", args.chip,
             "--shapes", args.sparse_shapes, "--convs", args.sparse_convs,
             "--precision", args.sparse_precision])
    # Weights (random or trained floats) hardly compress: the fastest preset.
    with tarfile.open(args.out, "w:xz", preset=0) as t:
        t.add(stage, arcname="gpu-pack")
    shutil.rmtree(args.out + ".tmp", ignore_errors=True)
    size = os.path.getsize(args.out)
    print("pack.py: wrote %s (%.1f MiB)" % (args.out, size / 2**20), flush=True)
    for old in glob.glob(glob.escape(args.out) + ".[0-9][0-9]"):
        os.remove(old)
    if size > args.max_mib * 2**20:
        # Parts the GPU machine takes one per call; its files stay there
        # between calls while it is held, and run-pack.sh joins them.
        part = max(1, int(args.part_mib * 2**20))
        names = []
        with open(args.out, "rb") as f:
            while True:
                chunk = f.read(part)
                if not chunk:
                    break
                names.append("%s.%02d" % (args.out, len(names)))
                with open(names[-1], "wb") as o:
                    o.write(chunk)
        print("pack.py: over %g MiB: also wrote %d parts (%s); send one per call, "
              "in a row, then run run-pack.sh on %s there" %
              (args.max_mib, len(names), ", ".join(os.path.basename(n) for n in names),
               args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
