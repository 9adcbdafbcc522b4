#!/usr/bin/env bash
# Benchmarks: installs PoCL and the OpenCL headers/ICD loader when missing (Debian 12 packages), builds the
# benchmark targets in Release into build-bench/ (PTXFORGE_BENCH_BUILD_DIR), and runs the kernel benchmark:
# the nine kernels of ../shared/bench through ptxforge, their native C++ twins and PoCL, alternating, every
# output verified, at 1 thread and at all threads. Arguments go to bench_kernels (--help lists them; --quick is
# a small smoke run). With PTXFORGE_BENCH_PARSE=1 it also runs bench_parse (front-end throughput).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${PTXFORGE_BENCH_BUILD_DIR:-$ROOT/build-bench}"
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# The toolchain ptxforge itself needs (scripts/setup.sh installs it, and builds build/ on the way).
if ! installed llvm-22-dev || ! installed libantlr4-runtime-dev; then
  "$ROOT/scripts/setup.sh"
fi

missing=()
for p in pocl-opencl-icd ocl-icd-opencl-dev opencl-headers; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bench: installing ${missing[*]}"
  if ! { $SUDO apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "bench: could not install ${missing[*]}: PoCL will be reported as not available" >&2
  fi
fi

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target bench_kernels bench_parse

status=0
if [[ "${PTXFORGE_BENCH_PARSE:-0}" == 1 ]]; then
  "$BUILD/bin/bench_parse" || status=1
  echo
fi
"$BUILD/bin/bench_kernels" "$@" || status=1
exit $status
