#!/usr/bin/env bash
# The sanitized half of the test suite (utils/run-tests.sh runs it after the
# main one): Kiln built with AddressSanitizer and UndefinedBehaviorSanitizer
# (KILN_SANITIZE=inputs: the importer, the dialect's shape functions and
# folders, the module format, the runtime, the tools and the unit tests
# instrumented; see docs/reliability.md) in build-asan/, then under it:
# the unit tests, the importer's tests, the end-to-end tests (the bundled
# models among them) that run on the CPU, and every 8th test of the
# conformance lists on the CPU (run) and for sm_90 (compiled). Any
# sanitizer finding fails the run.
#   utils/run-sanitized-tests.sh            build and test
#   KILN_ASAN_BUILD_DIR=dir utils/run-sanitized-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
utils/setup.sh >/dev/null
BUILD_DIR=${KILN_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "== configuring $BUILD_DIR (KILN_SANITIZE=inputs)"
  # -O1: the sanitizers' usual level (fast enough to test, readable traces).
  # The pass libraries, uninstrumented under `inputs`, are linked from the
  # main build (setup.sh above built it) rather than compiled again.
  cmake -G Ninja -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DKILN_SANITIZE=inputs \
    -DKILN_PREBUILT="$(cd "${KILN_BUILD_DIR:-build}" && pwd)" \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1 -DNDEBUG" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
fi
echo "== building $BUILD_DIR"
ninja -C "$BUILD_DIR" kiln-opt kiln-compile kiln-run KilnUnitTests | grep -v '^\[' || true

# Findings are fatal (the build makes UBSan's so too); leaks are findings.
# LeakSanitizer's scan of thread-local storage fails on the OpenMP worker
# threads of a module's code ("Tracer caught signal 11"): use_tls=0.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-use_tls=0:suppressions=$PWD/utils/lsan.supp:print_suppressions=0}

# Not run here: the tests that load the runtime library into Python (not
# built with the sanitizers' runtime; the module fuzzer covers the loader
# under ASan, test/fuzz), and those that run GPU modules on the kernel
# emulator, whose threads are ucontext fibers: AddressSanitizer does not
# support swapcontext ("may produce false positives") and, under it,
# kernels with barriers give wrong sums. GPU modules are compiled here;
# they run in the main suite. Nor load-memory.test, which bounds kiln-run's
# peak resident set: the sanitizers' shadow memory and quarantine add to it.
e2e=()
for t in test/e2e/*.test; do
  case "$(basename "$t")" in gpu-pack.test|module-integrity.test|load-memory.test) continue ;; esac
  grep -q -- "device=emulator" "$t" && continue
  e2e+=("$BUILD_DIR/$t")
done

status=0
echo "== lit under the sanitizers: unit, Import, ${#e2e[@]} e2e tests"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test/unit" "$BUILD_DIR/test/Import" "${e2e[@]}" || status=$?
log=$(mktemp)
for target in cpu sm_90; do
  list=test/conformance/cpu-passing.txt
  flags=()
  if [ "$target" = sm_90 ]; then
    list=test/conformance/emulator-passing.txt
    flags=(--compile-only)
  fi
  echo "== every 8th test of $list under the sanitizers ($target${flags:+, compiled only})"
  python3 utils/conformance.py --bin "$BUILD_DIR/bin" --target "$target" "${flags[@]}" \
    --check "$list" --sample 8 --jobs 2 | tee "$log" || status=$?
  if grep -q "^FAIL\|^MISSING" "$log"; then status=1; fi
done
rm -f "$log"
echo "sanitized tests: $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
