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
echo
echo "== ptxforge compile: the example's PTX into a multi-arch fatbin (compute_80 + compute_90), then list it"
OUT="$(mktemp -d)"
"$BUILD/bin/ptxforge" compile -gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=compute_90 \
  "$ROOT/examples/saxpy.ptx" -o "$OUT/saxpy.fatbin"
"$BUILD/bin/ptxforge" objdump -lptx "$OUT/saxpy.fatbin"
echo
echo "== ptxforge run on the fatbin: the loader picks the entry for the device (sm_90 unless PTXFORGE_DEVICE_CC)"
"$BUILD/bin/ptxforge" run "$OUT/saxpy.fatbin" --entry saxpy --grid 64 --block 256 \
  --arg buffer:65536,file="$ROOT/examples/saxpy/x.bin" --arg buffer:65536,file="$ROOT/examples/saxpy/y.init.bin",out="$OUT/y.bin" \
  --arg f32:2 --arg u32:16384
cmp "$OUT/y.bin" "$ROOT/examples/saxpy/y.expect.bin" && echo "result check: y = 2*x + y matches the expected output"
rm -rf "$OUT"
