#!/usr/bin/env python3
"""Compiles each model of a folder of small zoo exports with kiln-compile,
writes seeded inputs and ONNX Runtime's outputs with ort_reference.py, and
checks Kiln's outputs against them with kiln-run --expected (rtol 1e-3,
atol 1e-4). Integer inputs take the value ranges of the folder's
manifest.json (bench/zoo/zoo.py's) where it has one. ONNX Runtime runs
with basic graph optimizations: its extended ones run a MatMul of a
dequantized int8 weight on dynamically quantized activations, 1% off the
float result. Prints `NAME: ok` per model, or `NAME: FAILED` with the
tool's output; exits non-zero if any failed.

With --target=sm_XX each model is compiled for that GPU with
--max-spill-bytes=0 (ptxas must report no spills in any kernel) and run
through the kernel emulator (kiln-run --device=emulator).

  zoo_check.py ZOO_DIR OUT_DIR [--kiln-compile PATH] [--kiln-run PATH]
      [--models a,b] [--target sm_90] [--timeout S]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, timeout=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return 1, "timed out after %d s: %s" % (timeout, " ".join(cmd))
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo")
    ap.add_argument("out")
    ap.add_argument("--kiln-compile", default="kiln-compile")
    ap.add_argument("--kiln-run", default="kiln-run")
    ap.add_argument("--models", default="")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--timeout", type=int, default=None,
                    help="seconds per compile and per run")
    a = ap.parse_args()
    gpu = a.target != "cpu"
    order = ["vad_gru_torchscript", "vad_lstm_dynamo_novi", "crnn_dynamo_novi",
             "t5_encoder_torchscript", "whisper_encoder_dynamo_novi",
             "cnn_computed", "mlp_computed"]
    present = {os.path.basename(p)[:-5]
               for p in glob.glob(os.path.join(a.zoo, "*.onnx"))}
    names = [n for n in order if n in present]
    names += sorted(present - set(order))
    if a.models:
        names = [n for n in names if n in a.models.split(",")]
    # Integer inputs' value ranges, from bench/zoo/zoo.py's manifest.
    specs = {}
    manifest = os.path.join(a.zoo, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            specs = {e["file"]: e.get("inputs", [])
                     for e in json.load(f)["files"]}
    failed = 0
    for name in names:
        model = os.path.join(a.zoo, name + ".onnx")
        work = os.path.join(a.out, name)
        os.makedirs(work, exist_ok=True)
        ranges = ["--range=%s:%d:%d" % (i["name"], i["low"], i["high"])
                  for i in specs.get(name + ".onnx", []) if "low" in i]
        rc, log = run([sys.executable, os.path.join(HERE, "ort_reference.py"),
                       model, work, "--seed", "1", "--basic-optimizations"] +
                      ranges)
        kmod = os.path.join(work, a.target + ".kmod")
        if rc == 0:
            cmd = [a.kiln_compile, model, "-o", kmod]
            if gpu:
                cmd += ["--target=" + a.target, "--max-spill-bytes=0"]
            rc, log = run(cmd, a.timeout)
        if rc == 0:
            cmd = [a.kiln_run, kmod, "--rtol", "1e-3", "--atol", "1e-4"]
            if gpu:
                cmd.append("--device=emulator")
            for f in sorted(glob.glob(os.path.join(work, "input_*.npy")),
                            key=lambda p: int(p.rsplit("_", 1)[1][:-4])):
                cmd += ["--input", f]
            for f in sorted(glob.glob(os.path.join(work, "output_*.npy")),
                            key=lambda p: int(p.rsplit("_", 1)[1][:-4])):
                cmd += ["--expected", f]
            rc, log = run(cmd, a.timeout)
        if rc == 0:
            print("%s: ok" % name, flush=True)
        else:
            failed += 1
            print("%s: FAILED\n%s" % (name, log), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
