#!/usr/bin/env bash
# Builds NVIDIA cuda-samples programs PTX-only with nvcc and runs each against ptxforge's libraries
# (LD_LIBRARY_PATH=<build>/lib), printing one line per sample and a total:
#
#   scripts/samples.sh [options] CUDA_SAMPLES_DIR [SAMPLE...]
#
#   --rdc           build with separate compilation (-rdc=true), as the samples' own CMakeLists do
#   --both          run every sample twice: without and with -rdc=true
#   --gencode FLAGS the nvcc target flags (default: -gencode arch=compute_80,code=compute_80)
#   --multi-arch    the target flags of a multi-arch build: sm_80 SASS and compute_90 PTX (the loader must
#                   pick the PTX); its binaries go to WORK/multi[-rdc]
#   --only A,B,...  run only these samples (as SAMPLE arguments do)
#   --skip A,B,...  leave these samples out
#   --skip-build    build nothing: run the binaries WORK already holds (a sample without one is NOBUILD)
#   --build-only    build what is missing or stale and run nothing (builds then runs time quietly apart)
#   --devices LIST  run every sample with PTXFORGE_DEVICE_CC=LIST, e.g. 13.0,13.0 for two devices; without it a
#                   sample runs on one device, or on the min_gpus devices test_args.json asks for (simpleP2P: 2)
#   --timeout S     wall-clock limit of one run in seconds (default 120)
#   --work DIR      where binaries and logs go (default /tmp/ptxforge-samples)
#   --lib DIR       ptxforge's library directory (default: build/lib of this checkout)
#   --nvcc PATH     nvcc (default: /usr/local/cuda/bin/nvcc, or nvcc on PATH)
#
# Without SAMPLE names it runs the list below (issue 19's). Each sample is found by folder name under
# CUDA_SAMPLES_DIR/Samples/*/. Its sources are those its CMakeLists.txt gives add_executable, its libraries its
# CUDA::x, OpenMP, OpenGL and GLUT targets, and a kernel it loads at run time (the *Drv samples: a
# CUDA_KERNEL_SOURCE built into a .fatbin or .ptx file) is built with the same target flags next to the binary.
# Every sample is compiled with `-cudart shared -I Common`, run from the binary's folder (its own folder's files,
# data/ included, are linked there) with the arguments CUDA_SAMPLES_DIR/test_args.json gives it, and judged by
# its exit status: PASS (0), WAIVED (2, the samples' EXIT_WAIVED), FAIL (other), TIMEOUT, or NOBUILD (nvcc
# failed; the log says why). Logs are in WORK/<variant>/<sample>.{build,run}.log; a binary newer than its
# sample's files is not built again. Not part of CI: the repository holds no sample code.
set -u

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
rdc_modes=(no)
default_gencode="-gencode arch=compute_80,code=compute_80"
gencode=$default_gencode
timeout_s=120
work=/tmp/ptxforge-samples
libdir=$repo/build/lib
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
samples_dir=
names=()
skips=()
skip_build=no
build_only=no
devices=
while [ $# -gt 0 ]; do
  case $1 in
    --rdc) rdc_modes=(yes) ;;
    --both) rdc_modes=(no yes) ;;
    --gencode) gencode=$2; shift ;;
    --multi-arch) gencode="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90" ;;
    --only) IFS=, read -r -a more <<<"$2"; names+=("${more[@]}"); shift ;;
    --skip) IFS=, read -r -a more <<<"$2"; skips+=("${more[@]}"); shift ;;
    --skip-build) skip_build=yes ;;
    --build-only) build_only=yes ;;
    --devices) devices=$2; shift ;;
    --timeout) timeout_s=$2; shift ;;
    --work) work=$2; shift ;;
    --lib) libdir=$2; shift ;;
    --nvcc) nvcc=$2; shift ;;
    -h|--help) usage ;;
    -*) echo "samples.sh: unknown option $1" >&2; usage ;;
    *) if [ -z "$samples_dir" ]; then samples_dir=$1; else names+=("$1"); fi ;;
  esac
  shift
done
[ -n "$samples_dir" ] || usage
[ -d "$samples_dir/Samples" ] || { echo "samples.sh: $samples_dir has no Samples folder" >&2; exit 2; }
[ -x "$nvcc" ] || { echo "samples.sh: nvcc not found (use --nvcc)" >&2; exit 2; }
[ -e "$libdir/libcudart.so.13" ] || { echo "samples.sh: no libcudart.so.13 in $libdir (build ptxforge first)" >&2; exit 2; }
samples_dir=$(cd "$samples_dir" && pwd)
libdir=$(cd "$libdir" && pwd)
# The toolkit's root as nvcc itself reports it (TOP), so that an nvcc reached through a wrapper or symlink works.
cuda_home=$("$nvcc" --dryrun -x cu /dev/null -c -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
[ -n "$cuda_home" ] && cuda_home=$(cd "$cuda_home" && pwd) || cuda_home=$(dirname "$(dirname "$nvcc")")

if [ ${#names[@]} -eq 0 ]; then
  names=(vectorAdd matrixMul simpleTemplates simpleAtomicIntrinsics simpleVoteIntrinsics simplePrintf simpleStreams
    simpleCallback asyncAPI simpleCooperativeGroups reduction scan shfl_scan histogram sortingNetworks scalarProd
    convolutionSeparable transpose alignedTypes LargeKernelParameter FunctionPointers threadFenceReduction
    reductionMultiBlockCG warpAggregatedAtomicsCG cudaTensorCoreGemm bf16TensorCoreGemm tf32TensorCoreGemm
    immaTensorCoreGemm dmmaTensorCoreGemm globalToShmemAsyncCopy radixSortThrust mergeSort dct8x8
    fp16ScalarProduct inlinePTX simpleAWBarrier binaryPartitionCG simpleOccupancy cdpSimplePrint clock simpleAssert
    simpleHyperQ simpleZeroCopy eigenvalues quasirandomGenerator MonteCarloMultiGPU BlackScholes
    fastWalshTransform SobolQRNG interval simpleMultiCopy cudaOpenMP vectorAddDrv matrixMulDrv simpleDrvRuntime
    matrixMulDynlinkJIT ptxjit simpleTexture simpleSurfaceWrite simpleLayeredTexture simpleCubemapTexture
    simpleTexture3D bicubicTexture simpleCudaGraphs jacobiCudaGraphs graphMemoryNodes streamOrderedAllocation
    simpleP2P simpleMultiGPU UnifiedMemoryStreams conjugateGradientMultiBlockCG cdpQuadtree cdpAdvancedQuicksort
    simpleSeparateCompilation)
fi

# The value of `set(VAR "...")` in a CMakeLists.txt, with ${CMAKE_CURRENT_*_DIR}/ removed.
cmake_set() { [ -f "$1" ] || return 0; sed -n "s|^ *set( *$2 *\"\\{0,1\\}\\\${CMAKE_CURRENT_[A-Z]*_DIR}/\\([^\")]*\\)\"\\{0,1\\} *).*|\\1|p" "$1" | head -1; }

# Sources of the sample's add_executable (the first one), one per line; the folder's .cu, .cpp and .c files for a
# sample of the Makefile era (cuda-samples before 12.8 had no CMakeLists.txt).
sample_sources() {
  if [ ! -f "$1/CMakeLists.txt" ]; then
    (cd "$1" && ls -- *.cu *.cpp *.c 2>/dev/null)
    return
  fi
  tr '\n' ' ' <"$1/CMakeLists.txt" | grep -o 'add_executable([^)]*)' | head -1 |
    sed 's/add_executable( *[^ )]*//; s/)$//' | tr ' ' '\n' | grep -E '\.(cu|cpp|c)$'
}

# nvcc flags for the sample's CUDA::, OpenMP, OpenGL and GLUT link targets.
sample_libs() {
  local t
  [ -f "$1/CMakeLists.txt" ] || return 0
  grep -q 'find_package(OpenGL' "$1/CMakeLists.txt" && echo "-lGL -lGLU"
  grep -q 'find_package(GLUT' "$1/CMakeLists.txt" && echo "-lglut"
  for t in $(grep -o 'CUDA::[A-Za-z_]*\|OpenMP::[A-Za-z_]*' "$1/CMakeLists.txt" | sort -u); do
    case $t in
      CUDA::cudart) ;;
      CUDA::cuda_driver) echo "-L$cuda_home/lib64/stubs -lcuda" ;;
      CUDA::*_static) echo "-l${t#CUDA::}" ;;
      CUDA::*) echo "-l${t#CUDA::}" ;;
      OpenMP::*) echo "-Xcompiler -fopenmp" ;;
    esac
  done
}

# What test_args.json says of the sample, one word per line: the number of GPUs it needs (min_gpus, default 1),
# then "SKIP" when it says skip, else the arguments of its (first) run.
sample_args() {
  [ -f "$samples_dir/test_args.json" ] || { echo 1; return 0; }
  python3 - "$samples_dir/test_args.json" "$1" <<'EOF'
import json, sys
entry = json.load(open(sys.argv[1])).get(sys.argv[2], {})
print(entry.get("min_gpus", 1))
if entry.get("skip"):
    print("SKIP")
args = entry.get("args") or (entry.get("runs") or [{}])[0].get("args", [])
print("\n".join(args))
EOF
}

# Builds sample $1 (folder $2) into $3; returns nvcc's status.
build_sample() {
  local name=$1 dir=$2 out=$3 rdc=$4 srcs=() libs kernel fatbin ptx
  mapfile -t srcs < <(sample_sources "$dir")
  [ ${#srcs[@]} -gt 0 ] || { echo "no add_executable sources in $dir/CMakeLists.txt"; return 1; }
  libs=$(sample_libs "$dir")
  local flags=(-std=c++17 -cudart shared $gencode -I "$samples_dir/Common" -I "$dir" --extended-lambda
               -Wno-deprecated-gpu-targets)
  [ "$rdc" = yes ] && flags+=(-rdc=true)
  kernel=$(cmake_set "$dir/CMakeLists.txt" CUDA_KERNEL_SOURCE)
  fatbin=$(cmake_set "$dir/CMakeLists.txt" CUDA_FATBIN_FILE)
  ptx=$(cmake_set "$dir/CMakeLists.txt" CUDA_PTX_FILE)
  if [ -n "$kernel" ] && [ -n "$fatbin" ]; then
    (cd "$dir" && "$nvcc" "${flags[@]}" -fatbin "$kernel" -o "$(dirname "$out")/$fatbin") || return 1
  fi
  if [ -n "$kernel" ] && [ -n "$ptx" ]; then
    # nvcc -ptx takes one architecture: the PTX targets of the flags (code=compute_*), the last one.
    local ptxflags=("${flags[@]}") ptxtarget
    ptxtarget=$(echo "$gencode" | grep -o 'arch=[a-z_0-9]*,code=compute_[0-9a-z]*' | tail -1)
    if [ -n "$ptxtarget" ]; then
      mapfile -t ptxflags < <(printf '%s\n' "${flags[@]}" | grep -v -e '^-gencode$' -e '^arch=')
      ptxflags+=(-gencode "$ptxtarget")
    fi
    (cd "$dir" && "$nvcc" "${ptxflags[@]}" -ptx "$kernel" -o "$(dirname "$out")/$ptx") || return 1
  fi
  # shellcheck disable=SC2086 # libs are words
  (cd "$dir" && "$nvcc" "${flags[@]}" "${srcs[@]}" -o "$out" $libs)
}

passed=0 failed=0 timeouts=0 nobuild=0 waived=0 total_s=0
for rdc in "${rdc_modes[@]}"; do
  # Binaries of other target flags go to a folder of their own (a built binary is reused).
  variant=ptx
  case $gencode in
    "$default_gencode") ;;
    "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90") variant=multi ;;
    *) variant=gencode-$(echo "$gencode" | md5sum | cut -c1-8) ;;
  esac
  [ "$rdc" = yes ] && variant=$variant-rdc
  mkdir -p "$work/$variant"
  for name in "${names[@]}"; do
    [[ " ${skips[*]} " == *" $name "* ]] && continue
    dir=$(find "$samples_dir/Samples" -mindepth 2 -maxdepth 2 -type d -name "$name" | head -1)
    label="$name"; [ ${#rdc_modes[@]} -gt 1 ] && label="$name [$variant]"
    if [ -z "$dir" ]; then
      printf '%-44s NOBUILD %7s  (not in %s)\n' "$label" - "$samples_dir/Samples"; nobuild=$((nobuild + 1)); continue
    fi
    bin=$work/$variant/$name/$name
    mkdir -p "$(dirname "$bin")"
    if [ $skip_build = yes ] && [ ! -x "$bin" ]; then
      printf '%-44s NOBUILD %7s  (--skip-build: no %s)\n' "$label" - "$bin"; nobuild=$((nobuild + 1)); continue
    fi
    if [ $skip_build = no ] && { [ ! -x "$bin" ] || [ -n "$(find "$dir" -newer "$bin" -type f -print -quit)" ]; }; then
      if ! build_sample "$name" "$dir" "$bin" "$rdc" >"$work/$variant/$name.build.log" 2>&1; then
        rm -f "$bin"
        printf '%-44s NOBUILD %7s  (%s)\n' "$label" - "$work/$variant/$name.build.log"; nobuild=$((nobuild + 1)); continue
      fi
    fi
    if [ $build_only = yes ]; then
      printf '%-44s BUILT\n' "$label"; continue
    fi
    mapfile -t args < <(sample_args "$name")
    gpus=${args[0]}; args=("${args[@]:1}")
    # A sample that needs several GPUs gets as many devices of ptxforge's default compute capability.
    cc=$devices
    if [ -z "$cc" ] && [ "$gpus" -gt 1 ]; then cc=$(printf '13.0%.0s,' $(seq "$gpus")); cc=${cc%,}; fi
    if [ "${args[0]:-}" = SKIP ]; then
      printf '%-44s WAIVED  %7s  (test_args.json skips it)\n' "$label" -; waived=$((waived + 1)); continue
    fi
    # It runs beside its binary and the kernel files built for it, its folder's files (data/) linked there.
    for f in "$dir"/*; do [ -e "$(dirname "$bin")/${f##*/}" ] || ln -s "$f" "$(dirname "$bin")/"; done
    start=$(date +%s.%N)
    (cd "$(dirname "$bin")" && env LD_LIBRARY_PATH="$libdir" ${cc:+PTXFORGE_DEVICE_CC=$cc} timeout -k 5 "$timeout_s" "$bin" "${args[@]}") \
      >"$work/$variant/$name.run.log" 2>&1 </dev/null
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    total_s=$(echo "$total_s + $secs" | bc)
    case $rc in
      0) verdict=PASS; passed=$((passed + 1)) ;;
      2) verdict=WAIVED; waived=$((waived + 1)) ;;
      124|137) verdict=TIMEOUT; timeouts=$((timeouts + 1)) ;;
      *) verdict=FAIL; failed=$((failed + 1)) ;;
    esac
    printf '%-44s %-7s %7.1f\n' "$label" "$verdict" "$secs"
  done
done
printf '%d passed, %d failed, %d timed out, %d not built, %d waived; %.0f s of runs\n' \
  "$passed" "$failed" "$timeouts" "$nobuild" "$waived" "$total_s"
[ $((failed + timeouts + nobuild)) -eq 0 ]
