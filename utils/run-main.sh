#!/usr/bin/env bash
# The main job: install and build Kiln, generate the bundled ResNet-style
# model, show it as kiln IR, compile it for the CPU into a .kmod (with the
# compile report), and run it with kiln-run against ONNX Runtime's outputs
# for the same seeded input, then time it.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/setup.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
BIN="$BUILD_DIR/bin"
work="$BUILD_DIR/main-job"
mkdir -p "$work"
model="$work/tiny_resnet.onnx"
python3 bench/models/tiny_resnet.py "$model"

echo "== kiln-opt $model   (the imported graph; weights elided)"
"$BIN/kiln-opt" "$model" | grep -v "kiln.constant"

echo "== kiln-compile $model --input-shape=input:8x3x32x32 -o $work/tiny_resnet.kmod --report"
"$BIN/kiln-compile" "$model" --input-shape=input:8x3x32x32 \
  -o "$work/tiny_resnet.kmod" --report

echo "== reference outputs from ONNX Runtime"
python3 test/e2e/Inputs/ort_reference.py "$model" "$work" --shape input:8x3x32x32

echo "== kiln-run $work/tiny_resnet.kmod (checked against ONNX Runtime, then timed)"
"$BIN/kiln-run" "$work/tiny_resnet.kmod" --input "$work/input_0.npy" \
  --expected "$work/output_0.npy" --rtol 1e-4 --atol 1e-5 \
  --benchmark --warmup 5 --iterations 50
