#!/usr/bin/env bash
# Quick start, step 1: install, build, and run ptxforge on the bundled example.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${PTXFORGE_BUILD_DIR:-$ROOT/build}"
echo
echo "== ptxforge check examples/saxpy.ptx --sm 70,75,80,90   (what the module needs, which GPUs can run it)"
"$BUILD/bin/ptxforge" check "$ROOT/examples/saxpy.ptx" --sm 70,75,80,90
echo
echo "== ptxforge run --case examples/saxpy -v   (JIT-compile, launch 16384 threads, check the result)"
"$BUILD/bin/ptxforge" run --case "$ROOT/examples/saxpy" -v
