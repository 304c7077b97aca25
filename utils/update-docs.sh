#!/usr/bin/env bash
# Regenerates the docs that come from the build or from tools:
#   docs/reference/*.md      op and pass reference (from the .td files)
#   docs/import-coverage.md  the import sweep over the ONNX test data
# (docs/conformance.md comes from utils/conformance.py --markdown.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
ninja -C "$BUILD_DIR" kiln-doc kiln-opt >/dev/null
mkdir -p docs/reference
cp "$BUILD_DIR/docs/Dialects/KilnDialect.md" docs/reference/KilnDialect.md
for f in KilnPasses KilnConversionPasses KilnCodegenPasses; do
  cp "$BUILD_DIR/docs/Passes/$f.md" "docs/reference/$f.md"
done
python3 utils/import-sweep.py --kiln-opt "$BUILD_DIR/bin/kiln-opt" \
  --markdown docs/import-coverage.md
