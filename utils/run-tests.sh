#!/usr/bin/env bash
# The whole test suite: install and build Kiln, then run every lit test
# (dialect, passes, importer, bundled models, the ONNX test-data sweep),
# then the sanitized half (utils/run-sanitized-tests.sh: a build with
# AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/ and the
# tests that run under it; KILN_SANITIZED_TESTS=0 skips it locally).
set -euo pipefail
cd "$(dirname "$0")/.."
utils/setup.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" 2>&1 | tee "$log" || status=$?
count() { { grep -E "^ *($1) *: *[0-9]+" "$log" || true; } | awk -F: '{s += $2} END {print s + 0}'; }
passed=$(count "Passed|Expectedly Failed")
failed=$(count "Failed|Unexpectedly Passed|Unresolved|Timed Out")
skipped=$(count "Unsupported|Skipped|Excluded")
rm -f "$log"
echo "lit: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
if [ "${KILN_SANITIZED_TESTS:-1}" != 0 ]; then
  bash utils/run-sanitized-tests.sh || status=1
fi
exit $status
