#!/usr/bin/env bash
# The main job: install and build Kiln, generate the bundled ResNet-style
# model, import it with kiln-opt and print it as kiln IR (weights elided),
# then fix its batch to 8 and fold the graph.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/setup.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
mkdir -p "$BUILD_DIR/models"
model="$BUILD_DIR/models/tiny_resnet.onnx"
python3 bench/models/tiny_resnet.py "$model"
echo "== kiln-opt $model"
"$BUILD_DIR/bin/kiln-opt" "$model"
echo "== kiln-opt $model --input-shape=input:8x3x32x32 --kiln-infer-shapes --canonicalize"
"$BUILD_DIR/bin/kiln-opt" "$model" --input-shape=input:8x3x32x32 \
  --kiln-infer-shapes --canonicalize | grep -E "func.func|kiln.gemm|return"
