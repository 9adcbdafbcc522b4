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
echo "== ptxforge compile: the example's PTX into a multi-arch fatbin: PTX for compute_80 and compute_90, and"
echo "   host-native x86-64 code for sm_80 and sm_90 (x86-64-v2, and the best ISA level of this CPU), then list it"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$BUILD/bin/ptxforge" compile -arch=sm_80 -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
  --host-native=x86-64-v2,native "$ROOT/examples/saxpy.ptx" -o "$OUT/saxpy.fatbin"
"$BUILD/bin/ptxforge" objdump -lptx --list-host "$OUT/saxpy.fatbin"
echo
echo "== examples/driver/saxpy_driver.c, a plain CUDA driver-API program linked to ptxforge's libcuda.so.1: it loads the"
echo "   fatbin (the loader picks the host code for the device, sm_90, and this CPU), runs saxpy, checks it, times it"
LD_LIBRARY_PATH="$BUILD/lib" "$BUILD/examples/saxpy_driver" "$OUT/saxpy.fatbin" 4194304 -v
echo
echo "== the same with CUDA_FORCE_PTX_JIT=1: host code skipped, the compute_90 PTX JIT-compiled at load"
CUDA_FORCE_PTX_JIT=1 CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH="$BUILD/lib" \
  "$BUILD/examples/saxpy_driver" "$OUT/saxpy.fatbin" 4194304 -v
