#!/usr/bin/env bash
# A fuzzing campaign: each libFuzzer target for SECONDS, one after another (one job: the machine is shared),
# going on past crashes, hangs and OOMs (libFuzzer's fork mode) and reporting each target's time, executions,
# crashes, hangs (-timeout) and OOMs (-rss_limit_mb). Exit status 1 when any target found anything.
# Usage: tests/fuzz/campaign.sh SECONDS [TARGET...]
#   targets: ptx_frontend_fuzzer, fatbin_reader_fuzzer, driver_module_fuzzer (default: all three)
# Environment: PTXFORGE_FUZZ_BUILD_DIR (default build-fuzz), PTXFORGE_FUZZ_TIMEOUT (seconds per input, 30),
# PTXFORGE_FUZZ_RSS_MB (4096), PTXFORGE_FUZZ_JOBS (build jobs), PTXFORGE_FUZZ_NO_BUILD=1 (run the targets as
# built). The corpora under $BUILD/fuzz-work/corpus-* grow from one campaign to the next; they start from
# ../shared's PTX modules and fatbinaries and the repository's test inputs. Findings land in
# $BUILD/fuzz-work/artifacts as <target>-crash-*, -timeout-*, -oom-* (rerun one: $BUILD/tests/fuzz/<target> FILE).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
fi
SECS="$1"
shift
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=(ptx_frontend_fuzzer fatbin_reader_fuzzer driver_module_fuzzer)
BUILD="${PTXFORGE_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TIMEOUT="${PTXFORGE_FUZZ_TIMEOUT:-30}"
RSS_MB="${PTXFORGE_FUZZ_RSS_MB:-4096}"
# -P: ../shared is usually a symbolic link, which find would not descend.
SHARED="$(cd "$ROOT/../shared" 2>/dev/null && pwd -P || true)"

if [[ "${PTXFORGE_FUZZ_NO_BUILD:-0}" != 1 ]]; then # 1: use the targets as built
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DPTXFORGE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "${LAUNCHER[@]}" >/dev/null
  cmake --build "$BUILD" -j"${PTXFORGE_FUZZ_JOBS:-$(nproc)}" --target "${TARGETS[@]}"
fi

WORK="$BUILD/fuzz-work"
mkdir -p "$WORK/artifacts" "$WORK/logs"

# seed DIR KIND...: copies the seeds of each KIND (ptx, fatbin) into DIR under content-hash names.
seed() {
  local dir="$1" kind f
  shift
  mkdir -p "$dir"
  for kind in "$@"; do
    case "$kind" in
    ptx) { [[ -n "$SHARED" ]] && find "$SHARED" -name '*.ptx' -size -64k
      find "$ROOT/tests" "$ROOT/examples" -name '*.ptx' -size -64k; } 2>/dev/null ;;
    fatbin) [[ -n "$SHARED" ]] && find "$SHARED/fatbins" -name '*.fatbin' -size -1M 2>/dev/null ;;
    esac
  done | while read -r f; do
    cp -n "$f" "$dir/$(md5sum <"$f" | cut -c1-16)"
  done
}

corpus_of() {
  case "$1" in
  ptx_frontend_fuzzer) echo ptx ;;
  fatbin_reader_fuzzer) echo fatbin ;;
  *) echo ptx fatbin ;;
  esac
}

# The driver's target: no compute cache writes under $HOME, and no leak reports for what a load abandons on
# purpose (a fault in a guarded read leaks its frames' allocations).
env_of() {
  case "$1" in
  driver_module_fuzzer) echo CUDA_CACHE_DISABLE=1 ASAN_OPTIONS=detect_leaks=0 ;;
  *) echo ;;
  esac
}

status=0
printf '%-22s %8s %12s %8s %6s %6s\n' target seconds executions crashes hangs ooms >"$WORK/summary.txt"
for target in "${TARGETS[@]}"; do
  corpus="$WORK/corpus-$target"
  # shellcheck disable=SC2046
  seed "$corpus" $(corpus_of "$target")
  log="$WORK/logs/$target.log"
  before=$(ls "$WORK/artifacts" | grep -c "^$target-" || true)
  start=$(date +%s)
  echo "fuzz: $target for ${SECS}s (corpus $corpus)"
  # shellcheck disable=SC2046
  env $(env_of "$target") "$BUILD/tests/fuzz/$target" "$corpus" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$SECS" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -max_len=65536 \
    -artifact_prefix="$WORK/artifacts/$target-" >"$log" 2>&1 || true
  elapsed=$(($(date +%s) - start))
  # Fork mode's progress lines: "#<executions>: cov: ... oom/timeout/crash: O/T/C time: ..."
  last=$(grep -E '^#[0-9]+: .*oom/timeout/crash:' "$log" | tail -1 || true)
  if [[ -n "$last" ]]; then
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    read -r ooms hangs crashes <<<"$(sed -E 's|.*oom/timeout/crash: ([0-9]+)/([0-9]+)/([0-9]+).*|\1 \2 \3|' <<<"$last")"
  else # it never got going: the log says why
    tail -20 "$log"
    execs=0 ooms=0 hangs=0 crashes=1
  fi
  printf '%-22s %8s %12s %8s %6s %6s\n' "$target" "$elapsed" "${execs:-0}" "${crashes:-0}" "${hangs:-0}" \
    "${ooms:-0}" >>"$WORK/summary.txt"
  after=$(ls "$WORK/artifacts" | grep -c "^$target-" || true)
  if [[ "${crashes:-0}" != 0 || "${hangs:-0}" != 0 || "${ooms:-0}" != 0 ]]; then
    status=1
    echo "fuzz: $target found $((after - before)) new artifact(s) in $WORK/artifacts; log: $log"
    grep -E '^==[0-9]+==ERROR|SUMMARY:|ALARM|out-of-memory' "$log" | sort | uniq -c | head -20 || true
  fi
done
cat "$WORK/summary.txt"
exit $status
