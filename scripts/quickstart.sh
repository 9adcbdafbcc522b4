#!/usr/bin/env bash
# Quick start, step 1: install, build, and run ptxforge on the bundled example.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD="${PTXFORGE_BUILD_DIR:-$ROOT/build}"
echo
echo "== ptxforge check examples/saxpy.ptx --sm 70,75,80,90"
"$BUILD/bin/ptxforge" check "$ROOT/examples/saxpy.ptx" --sm 70,75,80,90
