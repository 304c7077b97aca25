#!/usr/bin/env python3
"""Kiln on an NVIDIA GPU against PyTorch eager and torch.compile.

For each model of bench/models/export.py (the same torch module, built with
the same seed, gives both the ONNX file Kiln compiles and the module PyTorch
runs) and each batch size: exports the ONNX file, compiles it with
`kiln-compile --target=CHIP`, runs it with `kiln-run --device=cuda
--resident --json` (inputs copied to the GPU once, every timed run on
device buffers, as PyTorch's are), and times the module on the GPU in eager mode and
under `torch.compile` (the default mode, and mode="reduce-overhead", which
replays CUDA graphs as kiln-run does) with CUDA events (warm-up runs first,
the same inputs for all). Kiln's outputs are checked against eager's.
Prints a table of latency (ms, mean) and the ratios Kiln/eager and
Kiln/(the faster torch.compile) (below 1: Kiln is faster); --markdown FILE
also writes it with the date and device. PyTorch runs with its defaults
(TF32 allowed in convolutions, not in matrix products); Kiln computes in
FP32, or as a pack entry's flags say (--precision=fp16/bf16 modules are
timed against PyTorch running the model in that type).

  python3 bench/gpu/compare_torch.py --bin build/bin [--models resnet50,bert_1layer]
      [--batches 1,8] [--iterations 50] [--chip sm_90a] [--markdown docs/performance-gpu.md]

With --pack DIR (the bench/ folder of an archive that bench/gpu/pack.py
wrote on a machine with MLIR), nothing is exported or compiled: each
manifest entry's module runs on its inputs and is checked against ONNX
Runtime's outputs computed there; PyTorch times a module of the same
architecture on the same inputs (its random weights are PyTorch's own, which
changes no timing).
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import export  # noqa: E402


def torch_inputs(name, batch, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    out = []
    for n, (dtype, dims) in export.input_specs(name).items():
        shape = [batch if d is None else d for d in dims]
        if dtype == "int64":
            if n == "attention_mask":
                out.append(torch.ones(shape, dtype=torch.int64))
            else:
                out.append(torch.randint(0, export.vocab_size(name), shape, generator=g))
        else:
            out.append(torch.randn(shape, generator=g))
    return out


def time_cuda(fn, args, warmup, iterations):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return float(np.mean(times)), float(np.percentile(times, 50))


def time_torch(row, module, compiled, gpu_ins, args):
    """Times eager and each torch.compile mode (default; reduce-overhead,
    which replays CUDA graphs as Kiln does) into row."""
    row["eager_ms"], _ = time_cuda(module, gpu_ins, args.warmup, args.iterations)
    for key, fn in compiled.items():
        try:
            row[key + "_ms"], _ = time_cuda(fn, gpu_ins, args.warmup, args.iterations)
        except Exception as e:  # torch.compile may fail on a model
            row[key + "_error"] = str(e).splitlines()[0][:120]


def compile_modes(module):
    import torch
    return {"compile": torch.compile(module),
            "graphs": torch.compile(module, mode="reduce-overhead")}


def first_output(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--models", default="resnet50,mobilenet_v2,vit_b_16,bert_1layer,bert_base,gpt2")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--work-dir", default="build/bench-gpu")
    ap.add_argument("--markdown")
    ap.add_argument("--pack", help="run the modules of bench/gpu/pack.py's bench/ folder")
    ap.add_argument("--kiln-only", action="store_true",
                    help="with --pack: check and time Kiln's modules only (no PyTorch runs)")
    args = ap.parse_args()
    if args.pack:
        return run_pack(args)

    import torch
    if not torch.cuda.is_available():
        sys.exit("compare_torch.py: PyTorch sees no CUDA device")
    device = torch.cuda.get_device_name(0)
    os.makedirs(args.work_dir, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        onnx_path = os.path.join(args.work_dir, name + ".onnx")
        if not os.path.exists(onnx_path):
            export.export(name, onnx_path)
        torch.manual_seed(0)
        module, _, input_names, _ = export.build(name)
        module = module.eval().cuda()
        compiled = compile_modes(module)
        for batch in [int(b) for b in args.batches.split(",")]:
            row = {"model": name, "batch": batch}
            ins = torch_inputs(name, batch, seed=1)
            gpu_ins = [t.cuda() for t in ins]
            time_torch(row, module, compiled, gpu_ins, args)
            with torch.no_grad():
                want = first_output(module(*gpu_ins)).float().cpu().numpy()
            with tempfile.TemporaryDirectory() as tmp:
                kmod = os.path.join(tmp, "m.kmod")
                shapes = ["--input-shape=%s:%s" % (n, "x".join(str(d) for d in t.shape))
                          for n, t in zip(input_names, ins)]
                p = subprocess.run([os.path.join(args.bin, "kiln-compile"), onnx_path,
                                    "--target=" + args.chip, "-o", kmod] + shapes,
                                   capture_output=True, text=True)
                if p.returncode:
                    row["kiln_error"] = "compile: " + p.stderr.strip().splitlines()[-1][:160]
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    continue
                inputs = []
                for k, t in enumerate(ins):
                    inputs.append(os.path.join(tmp, "in%d.npy" % k))
                    np.save(inputs[-1], t.numpy())
                np.save(os.path.join(tmp, "want.npy"), want)
                row.update(kiln_run(args, kmod, inputs, [os.path.join(tmp, "want.npy")], tmp))
            rows.append(row)
            print(json.dumps(row), flush=True)

    write_table(rows, device, args, "compiled on this machine; Kiln's first output checked "
                "against eager's")


def kiln_run(args, kmod, inputs, expected, tmp, flags="", atol=None):
    """Runs kiln-run --benchmark; returns {kiln_ms, check} or {kiln_error}.

    Outputs must agree within rtol 1e-2, atol 1e-3; a module whose products
    take tf32 inputs (--gpu-tf32: 10 mantissa bits) within rtol 1e-2 and an
    atol of 1e-3 of the output's largest magnitude, as the rounding error of a
    deep network grows with its outputs' scale (ResNet-50's logits, up to
    111, move by up to 0.06 with tf32 operands, in PyTorch on the CPU too).
    An int8 (QDQ) module is compared with Kiln's CPU output of that QDQ
    model within `atol`, one quantization step of the output (rtol 0); an
    fp8 one with its CPU output within `atol`, 10% of its largest output.
    """
    fixed = atol is not None
    atol = atol if fixed else 1e-3
    # Rounded products or values lose accuracy in proportion to the outputs'
    # scale: tf32 and fp16 have 11 significant bits, bf16 8.
    scale = {"--gpu-tf32": 1e-3, "--precision=tf32": 1e-3, "--precision=fp16": 1e-3,
             "--precision=bf16": 1e-2}
    for f in flags.split():
        if f in scale and not fixed:
            atol = max([1e-3] + [scale[f] * float(np.abs(np.load(x)).max()) for x in expected])
    # Device-resident, as PyTorch is timed: inputs copied to the GPU once,
    # each run on device buffers (kiln-run --resident, Session::runOnDevice).
    cmd = [os.path.join(args.bin, "kiln-run"), kmod, "--device=cuda", "--resident",
           "--warmup", str(args.warmup), "--iterations", str(args.iterations),
           "--json", os.path.join(tmp, "r.json"), "--rtol", "0" if fixed else "1e-2",
           "--atol", "%g" % atol]
    for f in inputs:
        cmd += ["--input", f]
    for f in expected:
        cmd += ["--expected", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not os.path.exists(os.path.join(tmp, "r.json")):
        return {"kiln_error": "run: " + (r.stderr.strip() or r.stdout.strip())[-160:]}
    res = json.load(open(os.path.join(tmp, "r.json")))
    out = {"kiln_ms": res["benchmark"]["mean_ms"], "check": res.get("check")}
    if r.returncode:  # timed, but an output is off: say by how much
        out["check"] = "mismatch: " + " ".join(
            l for l in r.stdout.splitlines() if "MISMATCH" in l)[-200:]
    elif atol != 1e-3:
        out["check"] += " (atol %.3g)" % atol
    return out


def run_pack(args):
    import torch
    if not torch.cuda.is_available():
        sys.exit("compare_torch.py: PyTorch sees no CUDA device")
    device = torch.cuda.get_device_name(0)
    manifest = json.load(open(os.path.join(args.pack, "manifest.json")))
    rows, built, timed = [], {}, {}
    for e in manifest["entries"]:
        name, batch = e["model"], e["batch"]
        flags = e.get("flags", "")
        row = {"model": name, "batch": batch, "variant": flags or e.get("variant", "")}
        # A module compiled with --precision=fp16/bf16 is timed against
        # PyTorch running the model in that type (weights and float inputs).
        # An int8 module (the model quantized by quantize_static) is timed
        # against PyTorch in fp16 (its "torch_dtype").
        dtype = getattr(torch, e.get("torch_dtype", "float32"))
        for f in flags.split():
            if f in ("--precision=fp16", "--precision=bf16"):
                dtype = torch.float16 if f.endswith("fp16") else torch.bfloat16
        row["torch_dtype"] = str(dtype).replace("torch.", "")
        if not args.kiln_only and (name, dtype) not in built:
            torch.manual_seed(0)
            module = export.build(name)[0].eval().cuda().to(dtype)
            built[(name, dtype)] = (module, compile_modes(module))
        if not args.kiln_only and (name, batch, dtype) not in timed:  # once per type
            gpu_ins = [torch.from_numpy(np.load(os.path.join(args.pack, f))).cuda()
                       for f in e["inputs"]]
            gpu_ins = [t.to(dtype) if t.is_floating_point() else t for t in gpu_ins]
            timed[(name, batch, dtype)] = {}
            module, compiled = built[(name, dtype)]
            time_torch(timed[(name, batch, dtype)], module, compiled, gpu_ins, args)
        row.update(timed.get((name, batch, dtype), {}))
        with tempfile.TemporaryDirectory() as tmp:
            row.update(kiln_run(args, os.path.join(args.pack, e["module"]),
                                [os.path.join(args.pack, f) for f in e["inputs"]],
                                [os.path.join(args.pack, f) for f in e["expected"]], tmp,
                                e.get("flags", ""), e.get("atol")))
        rows.append(row)
        print(json.dumps(row), flush=True)
    write_table(rows, device, args,
                "modules compiled for %s elsewhere (bench/gpu/pack.py), checked against "
                "ONNX Runtime's CPU outputs" % manifest["chip"])


def write_table(rows, device, args, how):
    def f(v):
        return "-" if v is None else "%.3f" % v
    lines = ["| model | batch | PyTorch type | eager ms | torch.compile ms | torch.compile reduce-overhead ms "
             "| Kiln ms | Kiln/eager | Kiln/best torch.compile | Kiln's output |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        k, e = r.get("kiln_ms"), r.get("eager_ms")
        best = min([r[c] for c in ("compile_ms", "graphs_ms") if r.get(c)] or [None],
                   key=lambda v: v or 0)
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"] + (" (%s)" % r["variant"] if r.get("variant") else ""),
            r["batch"], r.get("torch_dtype", "float32"), f(e),
            f(r["compile_ms"]) if r.get("compile_ms") else r.get("compile_error", "-"),
            f(r["graphs_ms"]) if r.get("graphs_ms") else r.get("graphs_error", "-"),
            f(k) if k else r.get("kiln_error", "-"),
            f(k / e) if k and e else "-", f(k / best) if k and best else "-",
            r.get("check", "-")))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write("# Kiln on the GPU against PyTorch\n\n"
                      "Generated by `bench/gpu/compare_torch.py` on %s on %s (%s): mean "
                      "latency of %d runs after %d warm-ups; ratios below 1 mean Kiln is "
                      "faster; outputs compared with rtol 1e-2, atol 1e-3 (tf32 modules: atol 1e-3 of "
                      "the output's largest magnitude).\n\n%s\n"
                      % (datetime.date.today(), device, how, args.iterations, args.warmup,
                         table))


if __name__ == "__main__":
    main()
