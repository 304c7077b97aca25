#!/usr/bin/env bash
# Builds Kiln's libFuzzer harnesses with clang (Debian's clang-22 and
# libclang-rt-22-dev) against a Kiln build tree (for its generated headers
# and its kiln dialect library), with AddressSanitizer and
# UndefinedBehaviorSanitizer:
#   fuzz/build.sh BUILD_DIR OUT_DIR
# writes OUT_DIR/module-fuzzer (the .kmod reader: lib/Target) and
# OUT_DIR/onnx-import-fuzzer (the ONNX importer: lib/Import). The code under
# test is compiled here with coverage instrumentation; MLIR, libonnx,
# protobuf and the kiln dialect are linked as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"
CXX=${CXX:-/usr/lib/llvm-22/bin/clang++}
FLAGS=(-g -O1 -std=c++17 -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined -fno-sanitize=vptr
  -I include -I "$B/include" -I "$B/lib/Target" -isystem /usr/lib/llvm-22/include
  -DONNX_ML=1 -DONNX_NAMESPACE=onnx -D_GLIBCXX_USE_CXX11_ABI=1 -w)
"$CXX" "${FLAGS[@]}" fuzz/ModuleFuzzer.cpp lib/Target/ModuleFormat.cpp \
  "$B/lib/Target/kmod.pb.cc" -lprotobuf -lcrypto -o "$OUT/module-fuzzer"
"$CXX" "${FLAGS[@]}" fuzz/OnnxImportFuzzer.cpp lib/Import/OnnxImporter.cpp \
  "$B/lib/libKilnDialect.a" -L/usr/lib/llvm-22/lib -Wl,-rpath,/usr/lib/llvm-22/lib \
  -lMLIR -lLLVM -lonnx -lonnx_proto -lprotobuf -o "$OUT/onnx-import-fuzzer"
