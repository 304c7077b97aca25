#!/usr/bin/env bash
# Installs what Kiln needs (Debian packages and Python packages), then
# configures and builds it in build/. Idempotent: what is present is kept.
#   utils/setup.sh            install + build
#   KILN_BUILD_DIR=dir utils/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  ninja-build cmake g++ python3 libgtest-dev libomp-dev libssl-dev
  clang-22 libclang-rt-22-dev)
# pip names, and the modules that show each is there (nanobind,
# scikit-build-core and pytest build and test the Python package, python/).
PY_PACKAGES=(onnx numpy onnxruntime nanobind scikit-build-core pytest)
PY_MODULES=(onnx numpy onnxruntime nanobind scikit_build_core pytest)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
for p in "${PY_MODULES[@]}"; do
  if ! "$PYTHON" -c "import $p" 2>/dev/null; then
    echo "== installing Python packages: ${PY_PACKAGES[*]}"
    "$PYTHON" -m pip install -q "${PY_PACKAGES[@]}"
    break
  fi
done

BUILD_DIR=${KILN_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "== configuring $BUILD_DIR"
  cmake -G Ninja -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$(command -v "$PYTHON")" >/dev/null
fi
echo "== building $BUILD_DIR"
ninja -C "$BUILD_DIR" ${KILN_NINJA_FLAGS:-} all | grep -v '^\[' || true
test -x "$BUILD_DIR/bin/kiln-opt"
