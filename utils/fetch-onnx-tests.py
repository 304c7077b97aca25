#!/usr/bin/env python3
"""Fetches the ONNX backend node tests that an onnx release ships.

  utils/fetch-onnx-tests.py [--version 1.22.0] [--out build/onnx-tests-1.22.0]

Downloads that release's wheel from PyPI (no dependencies, nothing is
installed) and extracts its `onnx/backend/test/data/node` into OUT/node,
the layout utils/conformance.py --data reads. 1.22.0 is the newest release
whose wheel ships the test data (1765 node tests; 1.23 ships none). Does
nothing when OUT/node is already there.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PREFIX = "onnx/backend/test/data/node/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="1.22.0")
    ap.add_argument("--out")
    args = ap.parse_args()
    out = os.path.normpath(
        args.out or os.path.join("build", "onnx-tests-" + args.version))
    if os.path.isdir(os.path.join(out, "node")):
        print(out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary=:all:", "-d", tmp, "onnx==" + args.version], check=True)
        wheels = glob.glob(os.path.join(tmp, "onnx-*.whl"))
        if not wheels:
            sys.exit("fetch-onnx-tests: pip found no onnx %s wheel" % args.version)
        staging = out + ".tmp"
        shutil.rmtree(staging, ignore_errors=True)
        count = 0
        with zipfile.ZipFile(wheels[0]) as z:
            for name in z.namelist():
                if name.startswith(PREFIX) and not name.endswith("/"):
                    target = os.path.join(staging, "node", name[len(PREFIX):])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(name) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    count += name.endswith("/model.onnx")
        if not count:
            sys.exit("fetch-onnx-tests: onnx %s ships no node tests" % args.version)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        shutil.rmtree(out, ignore_errors=True)
        os.replace(staging, out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
