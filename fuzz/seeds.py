#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora.

  fuzz/seeds.py OUT --modules A.kmod ... --onnx FILE_OR_DIR ... [--max-onnx N]

OUT/module: each module whole (first byte 0) and its payload alone (first
byte 1: module-fuzzer prepends the right digest), the forms ModuleFuzzer.cpp
reads. OUT/onnx: the .onnx files given, and up to N (default 300) found
under the directories given (ONNX's test data: model.onnx per test),
sorted by path. Inputs under fuzz/regressions/ (crashes found before, one
directory per harness) are added to both.
"""
import argparse
import hashlib
import os


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--modules", nargs="*", default=[])
    ap.add_argument("--onnx", nargs="*", default=[])
    ap.add_argument("--max-onnx", type=int, default=300)
    a = ap.parse_args()
    mod_dir, onnx_dir = os.path.join(a.out, "module"), os.path.join(a.out, "onnx")
    os.makedirs(mod_dir, exist_ok=True)
    os.makedirs(onnx_dir, exist_ok=True)

    def put(d, data):
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)

    for path in a.modules:
        data = open(path, "rb").read()
        put(mod_dir, b"\x00" + data)
        put(mod_dir, b"\x01" + data[8 + 4 + 32:])
    found = []
    for p in a.onnx:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                found += [os.path.join(root, f) for f in files if f.endswith(".onnx")]
        else:
            put(onnx_dir, open(p, "rb").read())
    for path in sorted(found)[:a.max_onnx]:
        put(onnx_dir, open(path, "rb").read())
    here = os.path.dirname(os.path.abspath(__file__))
    for harness, d in (("module", mod_dir), ("onnx", onnx_dir)):
        reg = os.path.join(here, "regressions", harness)
        if os.path.isdir(reg):
            for f in sorted(os.listdir(reg)):
                put(d, open(os.path.join(reg, f), "rb").read())
    print("%d module seeds, %d onnx seeds" % (len(os.listdir(mod_dir)), len(os.listdir(onnx_dir))))


if __name__ == "__main__":
    main()
