#!/usr/bin/env bash
# Quick start, step 2: install and build if needed, fuzz the front end, the fatbin reader and the driver's module
# loader for a bounded time, then run every test (CTest: doctest units, lit file tests, the conformance corpus).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${PTXFORGE_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
status=0
if [[ "${PTXFORGE_SKIP_FUZZ:-0}" != 1 ]]; then
  "$ROOT/scripts/fuzz.sh" "${PTXFORGE_FUZZ_SECONDS:-60}" || status=1
fi
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" || status=1
exit $status
