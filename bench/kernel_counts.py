#!/usr/bin/env python3
"""Kiln's GPU kernel count per model beside ONNX Runtime's optimized graph.

For each benchmark model (build/bench-models/NAME.onnx, from
bench/models/export.py) at batch 1:

- Kiln: `kiln-compile --target=sm_90 --emulator-code=false --report`, the
  number of kernels the module launches (no GPU needed);
- ONNX Runtime: the node count of the graph its CPU execution provider runs
  after `ORT_ENABLE_ALL` optimizations (the session option
  `optimized_model_filepath` writes it out), and for BERT and GPT-2 also the
  graph of `onnxruntime.transformers.optimizer.optimize_model` (its fused
  Attention, SkipLayerNormalization, BiasGelu ops: what its CUDA provider
  runs), the smaller of the two counting;
- the ONNX graph's own node count, for scale.

One ORT node is at least one kernel, so Kiln's count at or below ORT's
means as few launches as ONNX Runtime's fused graph.

With --also "FLAGS", each model is compiled a second time with those
kiln-compile flags added, in a column of its own (e.g. --also
--gpu-split-k-last-block: the split products' sums in their split
kernels).

  python3 bench/kernel_counts.py [--models resnet50,...] [--also FLAGS] [--markdown FILE]
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
import export  # noqa: E402  (model list and input shapes)

MODELS = ["resnet50", "mobilenet_v2", "bert_base", "gpt2", "vit_b_16"]
TRANSFORMERS = {"bert_base": "bert", "bert_1layer": "bert", "gpt2": "gpt2"}


def shapes(name, batch):
    return ["--input-shape=%s:%s" % (n, "x".join(
        str(batch if d is None else d) for d in dims))
        for n, (_, dims) in export.input_specs(name).items()]


def kiln_kernels(bin_dir, path, name, batch, out_dir, flags=()):
    cmd = [os.path.join(bin_dir, "kiln-compile"), path, "--target=sm_90",
           "--emulator-code=false", "--report",
           "-o", os.path.join(out_dir, name + ".kmod")] + shapes(name, batch) + list(flags)
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"gpu: (\d+) kernels", p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        lines = (p.stdout + p.stderr).strip().splitlines()
        return None, lines[-1] if lines else "kiln-compile failed"
    return int(m.group(1)), ""


def ort_nodes(path, out_dir, name, batch):
    import onnx
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    optimized = os.path.join(out_dir, name + ".ort.onnx")
    opts.optimized_model_filepath = optimized
    # The symbolic batch fixed as Kiln's is, so shape-dependent fusions fire.
    for n, (_, dims) in export.input_specs(name).items():
        if None in dims:
            opts.add_free_dimension_override_by_name("batch", batch)
    ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    counts = {"ort": len(onnx.load(optimized, load_external_data=False).graph.node)}
    if name in TRANSFORMERS:
        from onnxruntime.transformers import optimizer
        m = optimizer.optimize_model(path, model_type=TRANSFORMERS[name],
                                     num_heads=12, hidden_size=768)
        counts["transformers"] = len(m.model.graph.node)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "bench-models"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--also", default="",
                    help="kiln-compile flags of a second Kiln column")
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args()
    import onnx
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            path = export.exported_path(args.models_dir, name)
            onnx_nodes = len(onnx.load(path, load_external_data=False).graph.node)
            kiln, error = kiln_kernels(args.bin, path, name, args.batch, tmp)
            also = None
            if args.also:
                also, also_error = kiln_kernels(args.bin, path, name, args.batch, tmp,
                                                args.also.split())
                error = error or also_error
            ort = ort_nodes(path, tmp, name, args.batch)
            peer = min(ort.values())
            row = dict(model=name, onnx=onnx_nodes, kiln=kiln, also=also, error=error,
                       ort=ort["ort"], transformers=ort.get("transformers"),
                       ratio=(kiln / peer) if kiln else None)
            rows.append(row)
            print("%-13s onnx %4d nodes  kiln sm_90 %s kernels%s  ort %4d nodes%s"
                  "  kiln/ort %s" % (
                      name, onnx_nodes, kiln if kiln else "FAILED (%s)" % error,
                      " (%s with %s)" % (also, args.also) if args.also else "",
                      ort["ort"],
                      "  (transformers optimizer %d)" % ort["transformers"]
                      if "transformers" in ort else "",
                      "%.2f" % row["ratio"] if row["ratio"] else "-"),
                  flush=True)
    if args.markdown:
        extra = " Kiln with `%s` |" % args.also if args.also else ""
        lines = [
            "| model | ONNX nodes | Kiln sm_90 kernels |" + extra + " ORT nodes (ORT_ENABLE_ALL) "
            "| ORT transformers optimizer | Kiln / ORT |",
            "|---|---:|---:|" + ("---:|" if args.also else "") + "---:|---:|---:|",
        ]
        for r in rows:
            lines.append("| %s | %d | %s |%s %d | %s | %s |" % (
                r["model"], r["onnx"], r["kiln"] or "failed",
                (" %s |" % (r["also"] or "failed")) if args.also else "", r["ort"],
                r["transformers"] if r["transformers"] else "-",
                "%.2f" % r["ratio"] if r["ratio"] else "-"))
        with open(args.markdown, "w") as f:
            f.write("Generated by `python3 bench/kernel_counts.py%s` on %s "
                    "(batch %d).\n\n" % (" --also=" + args.also if args.also else "",
                                          datetime.date.today(), args.batch))
            f.write("\n".join(lines) + "\n")
    sys.exit(0 if all(r["kiln"] and (r["also"] or not args.also) for r in rows) else 1)


if __name__ == "__main__":
    main()
