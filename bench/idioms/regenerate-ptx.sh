#!/bin/sh
# Regenerates idioms.ptx from idioms.cu with the local nvcc (the product builds without nvcc; the PTX is committed).
# Usage: bench/idioms/regenerate-ptx.sh [path/to/nvcc]
set -e
here=$(dirname "$0")
nvcc=${1:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -arch=compute_80 -ptx -O3 "$here/idioms.cu" -o "$here/idioms.ptx"
