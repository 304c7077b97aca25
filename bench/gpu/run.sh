#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU: installs and builds Kiln (the
# README's setup), runs the GPU tests (test/gpu: the bundled models and every
# conformance test that passes through the emulator, now on the GPU), then
# compares Kiln with PyTorch eager and torch.compile on the benchmark models
# and writes docs/performance-gpu.md. Arguments go to compare_torch.py.
#
#   bench/gpu/run.sh [--models resnet50,bert_1layer] [--batches 1,8] [--chip sm_90]
set -euo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi -L || { echo "bench/gpu/run.sh: no NVIDIA GPU here" >&2; exit 1; }
utils/setup.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test/gpu" "$BUILD_DIR/test/e2e"
python3 bench/gpu/compare_torch.py --bin "$BUILD_DIR/bin" --markdown docs/performance-gpu.md "$@"
