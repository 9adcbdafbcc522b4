#!/usr/bin/env bash
# Fuzzes the front end (and the fatbin reader) with libFuzzer for a bounded time; fails on any crash.
# Usage: scripts/fuzz.sh [SECONDS]   (default 60, split between the targets)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TOTAL="${1:-60}"
BUILD="${PTXFORGE_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
SHARED="$(cd "$ROOT/../shared" 2>/dev/null && pwd || true)"

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DPTXFORGE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
cmake --build "$BUILD" -j"$(nproc)"

WORK="$BUILD/fuzz-work"
rm -rf "$WORK" && mkdir -p "$WORK/ptx-corpus" "$WORK/fatbin-corpus" "$WORK/artifacts"
# Seeds: every small PTX module of ../shared and of the repository's own tests.
for f in $( { [[ -n "$SHARED" ]] && find "$SHARED" -name '*.ptx' -size -64k; find "$ROOT/tests" "$ROOT/examples" -name '*.ptx'; } 2>/dev/null); do
  cp "$f" "$WORK/ptx-corpus/$(echo "$f" | md5sum | cut -c1-16).ptx"
done
[[ -n "$SHARED" && -d "$SHARED/fatbins" ]] && cp "$SHARED"/fatbins/*.fatbin "$WORK/fatbin-corpus/" || true

run() { # target corpus seconds
  local target="$1" corpus="$2" secs="$3"
  echo "fuzz: $target for ${secs}s"
  "$BUILD/tests/fuzz/$target" "$corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$WORK/artifacts/$target-" 2>"$WORK/$target.log" || {
    tail -50 "$WORK/$target.log"; echo "fuzz: $target FAILED (artifacts in $WORK/artifacts)"; return 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$WORK/$target.log" || true
}
status=0
if [[ -x "$BUILD/tests/fuzz/fatbin_reader_fuzzer" ]]; then
  run ptx_frontend_fuzzer "$WORK/ptx-corpus" $((SECONDS_TOTAL * 3 / 4)) || status=1
  run fatbin_reader_fuzzer "$WORK/fatbin-corpus" $((SECONDS_TOTAL / 4)) || status=1
else
  run ptx_frontend_fuzzer "$WORK/ptx-corpus" "$SECONDS_TOTAL" || status=1
fi
exit $status
