#!/usr/bin/env bash
# Runs an archive of bench/gpu/pack.py on a machine with an NVIDIA GPU, the
# driver, Python with PyTorch and numpy, and no MLIR: the checks of test/gpu
# (every conformance test that passes through the kernel emulator, now on
# the GPU; the two bundled models with CUDA graphs, with plain launches and
# through the emulator), one profile of each benchmark module, and the
# benchmark against PyTorch eager and torch.compile, and the GEMMs against
# torch.matmul, and the 2:4 sparse products where packed. Logs and the
# tables go to RESULTS (default ./gpu-results).
#
#   bench/gpu/run-pack.sh build/gpu-pack.tar.xz [RESULTS] [--iterations N ...]
# An archive sent in parts (build/gpu-pack.tar.xz.00, .01, ...) is joined
# first: name the first part's path without its number.
# The arguments after RESULTS go to compare_torch.py. Exits non-zero when a
# check fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
archive=$1
results=$(mkdir -p "${2:-gpu-results}" && cd "${2:-gpu-results}" && pwd)
shift $(($# > 1 ? 2 : 1))
work=$(mktemp -d)
if [ ! -f "$archive" ] && [ -f "$archive.00" ]; then
  cat "$archive".[0-9][0-9] | tar -xJ -C "$work"
else
  tar -xJf "$archive" -C "$work"
fi
pack=$work/gpu-pack
export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run=$pack/bin/kiln-run
nvidia-smi -L | tee "$results/device.txt"
chip=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['chip'])" \
  "$pack/bench/manifest.json" 2>/dev/null || echo sm_90a)
failed=0

[ -d "$pack/models" ] &&
echo "== bundled models (rtol 1e-4, atol 1e-5 against ONNX Runtime)" | tee "$results/models.txt"
for m in tiny_resnet tiny_transformer; do
  [ -f "$pack/models/$m.kmod" ] || continue
  exp=()
  for f in "$pack/models/$m"/output_*.npy; do exp+=(--expected "$f"); done
  for mode in cuda graphs-off resident emulator; do
    dev=cuda; envs=(); extra=()
    [ $mode = emulator ] && dev=emulator
    [ $mode = graphs-off ] && envs=(KILN_CUDA_GRAPHS=0)
    [ $mode = resident ] && extra=(--resident --iterations 5)
    echo "-- $m $mode" >>"$results/models.txt"
    if ! env "${envs[@]}" "$run" "$pack/models/$m.kmod" --device=$dev "${extra[@]}" \
        --input "$pack/models/$m/input_0.npy" "${exp[@]}" --rtol 1e-4 --atol 1e-5 \
        >>"$results/models.txt" 2>&1; then
      echo "FAIL $m $mode" | tee -a "$results/models.txt"; failed=1
    fi
  done
done

if [ -d "$pack/conformance" ]; then
echo "== conformance on cuda"
python3 "$root/utils/conformance.py" --bin "$pack/bin" --data "$pack/conformance/data" \
  --kmod-dir "$pack/conformance/kmods" --target "$chip" --device cuda \
  --jobs "$(nproc)" --check "$root/test/conformance/emulator-passing.txt" \
  --markdown "$results/conformance.md" >"$results/conformance.txt" 2>&1 || failed=1
grep -v '^FAIL' "$results/conformance.txt"
grep -c '^FAIL' "$results/conformance.txt" | sed 's/^/failing: /'
fi

if [ -f "$pack/bench/manifest.json" ]; then
  echo "== profiles"
  for k in "$pack"/bench/*.kmod; do
    echo "-- $(basename "$k")" >>"$results/profile.txt"
    "$run" "$k" --device=cuda --profile-runs 5 >>"$results/profile.txt" 2>&1 || failed=1
  done
  echo "== benchmark against PyTorch"
  python3 "$here/compare_torch.py" --bin "$pack/bin" --pack "$pack/bench" \
    --markdown "$results/performance-gpu.md" "$@" 2>&1 | tee "$results/bench.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
fi
if [ -f "$pack/gemm/manifest.json" ]; then
  echo "== GEMMs against torch.matmul"
  python3 "$here/compare_gemm.py" run "$pack/gemm" --bin "$pack/bin" \
    --markdown "$results/gemm.md" 2>&1 | tee "$results/gemm.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
fi
if [ -f "$pack/sparse/manifest.json" ]; then
  echo "== 2:4 sparse products against dense, cuBLAS and PyTorch's semi-structured"
  python3 "$here/compare_sparse.py" run "$pack/sparse" --bin "$pack/bin" \
    --markdown "$results/sparse.md" 2>&1 | tee "$results/sparse.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
fi
rm -rf "$work"
exit $failed
