#!/usr/bin/env bash
# The CUDA toolkit's own libraries as a PTX corpus: extracts the PTX of every shared library under the toolkit
# (lib64/*.so, and cuDNN wherever it is installed), then parses, verifies and compiles each module to host code
# with `ptxforge compile --emit=obj` and prints `N compiled, M failed` with the first error of each failure,
# grouped into failure classes. With --ptxas (and ptxas on the machine) every module is also assembled by
# ptxas for its own .target, so the CPU time of the two compilers on the same modules can be compared.
#
# Usage: scripts/toolkit-check.sh [options]
#   --ptxforge PATH   the ptxforge binary (default: build/bin/ptxforge beside this script's checkout)
#   --cuda DIR        the toolkit (default: $CUDA_HOME, else /usr/local/cuda)
#   --work DIR        where the PTX is extracted and results kept (default: /tmp/ptxforge-toolkit-check)
#   --libs REGEX      only libraries whose file name matches (e.g. 'cublas|curand')
#   --sample N        only every N-th module (in a fixed order), for a quick estimate of a long sweep
#   --opt LEVEL       -O level of the host code (default 0: no optimization, LLVM's -O0 code generator)
#   --timeout S       per-module limit of each compiler in seconds (default 1800); a module past it fails
#   --ptxas           also run ptxas on every checked module (skipped with a note where it is absent)
#   --no-extract      reuse the PTX already extracted under --work
#   --resume          keep WORK's results and check only the modules they do not list (a long sweep in parts)
#   --jobs N          check N modules at a time (default 1); CPU seconds are per module, so they still add up
#
# Results: WORK/results.tsv (module, status, seconds of CPU, first error), WORK/ptxas.tsv; the summary goes to
# standard output. The exit status is 0 when every module compiled, 1 otherwise.
set -u -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ptxforge="$here/build/bin/ptxforge"
cuda="${CUDA_HOME:-/usr/local/cuda}"
work=/tmp/ptxforge-toolkit-check
libs_re=.
sample=1
opt=0
limit=1800
use_ptxas=0
extract=1
resume=0
jobs=1

while [ $# -gt 0 ]; do
  case "$1" in
    --ptxforge) ptxforge=$2; shift 2 ;;
    --cuda) cuda=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --libs) libs_re=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --ptxas) use_ptxas=1; shift ;;
    --no-extract) extract=0; shift ;;
    --resume) resume=1; extract=0; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "toolkit-check: unknown option $1" >&2; exit 2 ;;
  esac
done

[ -x "$ptxforge" ] || { echo "toolkit-check: no ptxforge binary at $ptxforge (--ptxforge PATH)" >&2; exit 2; }
ptxas="$cuda/bin/ptxas"
if [ "$use_ptxas" = 1 ] && [ ! -x "$ptxas" ]; then
  echo "toolkit-check: no ptxas at $ptxas; comparing nothing" >&2
  use_ptxas=0
fi
mkdir -p "$work/ptx" "$work/tmp"

# The libraries: the toolkit's lib64/*.so plus every cuDNN library found under the toolkit or the system's
# library directories, each real file once (lib64's cuDNN names are often links into another directory).
list_libraries() {
  {
    ls "$cuda"/lib64/*.so 2>/dev/null
    find "$cuda"/ "$cuda"/lib/ /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/lib -maxdepth 1 \
      -name 'libcudnn*.so*' 2>/dev/null
  } | while read -r f; do [ -f "$f" ] && readlink -f "$f"; done | sort -u | while read -r f; do
    base=$(basename "$f"); base=${base%%.so*}
    echo "$base $f"
  done | sort -u -k1,1 | grep -E "^[^ ]*($libs_re)[^ ]* "
}

if [ "$extract" = 1 ]; then
  list_libraries | while read -r name path; do
    rm -rf "$work/ptx/$name"
    mkdir -p "$work/ptx/$name"
    "$ptxforge" objdump --extract-ptx all --output-dir "$work/ptx/$name" "$path" >/dev/null 2>&1
    n=$(ls "$work/ptx/$name" | wc -l)
    [ "$n" = 0 ] && rmdir "$work/ptx/$name"
    echo "extracted $n PTX modules from $path" >&2
  done
fi

modules=$(find "$work/ptx" -name '*.ptx' | grep -E "/[^/]*($libs_re)[^/]*/" | sort | awk -v n="$sample" '(NR - 1) % n == 0')
total=$(printf '%s\n' "$modules" | grep -c . || true)
echo "checking $total modules (sample 1/$sample) with $ptxforge compile --emit=obj -O$opt" >&2

# First error line of a log: ptxforge's `file:line:col: error:` diagnostics, else its first line.
first_error() {
  grep -m1 -E 'error|Error|ERROR|fatal' "$1" || head -n1 "$1" || true
}

# Seconds of CPU (user + system) of one command, which a loaded machine does not inflate as it does wall time.
# $tmp is the calling worker's scratch directory.
timed() {
  local out=$1; shift
  /usr/bin/time -f '%U %S' -o "$tmp/time" timeout "$limit" "$@" >"$out" 2>&1
  local rc=$?
  cpu=$(tail -n1 "$tmp/time" | awk '{ printf "%.2f", $1 + $2 }')
  return $rc
}

# One module through ptxforge (and ptxas): a line each in results.tsv and ptxas.tsv. Lines are appended in one
# short write each, so workers running side by side do not interleave them.
check_module() {
  local m=$1 rel=${1#"$work/ptx/"} rc err arch
  if timed "$tmp/log" "$ptxforge" compile --emit=obj "-O$opt" -o "$tmp/out.o" "$m"; then
    printf '%s\tok\t%s\t\n' "$rel" "$cpu" >>"$work/results.tsv"
  else
    rc=$?
    err=$(first_error "$tmp/log" | tr '\t' ' ' | cut -c1-300)
    [ "$rc" = 124 ] && err="timed out after ${limit}s"
    [ -z "$err" ] && err="exit status $rc, no message"
    printf '%s\tfailed\t%s\t%s\n' "$rel" "$cpu" "$err" >>"$work/results.tsv"
  fi
  if [ "$use_ptxas" = 1 ]; then
    arch=$(grep -m1 -oE '^[[:space:]]*\.target[[:space:]]+sm_[0-9]+[af]?' "$m" | grep -oE 'sm_[0-9]+[af]?')
    if timed "$tmp/ptxas.log" "$ptxas" "-arch=${arch:-sm_52}" -o "$tmp/out.cubin" "$m"; then
      printf '%s\tok\t%s\t\n' "$rel" "$cpu" >>"$work/ptxas.tsv"
    else
      err=$(first_error "$tmp/ptxas.log" | tr '\t' ' ' | cut -c1-300)
      printf '%s\tfailed\t%s\t%s\n' "$rel" "$cpu" "$err" >>"$work/ptxas.tsv"
    fi
  fi
  echo "[$2/$total] $rel $(grep -F "$rel"$'\t' "$work/results.tsv" | tail -n1 | cut -f2,3)" >&2
}

if [ "$resume" = 0 ]; then
  : >"$work/results.tsv"
  [ "$use_ptxas" = 1 ] && : >"$work/ptxas.tsv"
fi
touch "$work/results.tsv"
todo=$(i=0; for m in $modules; do
  i=$((i + 1))
  if [ "$resume" = 1 ] && cut -f1 "$work/results.tsv" | grep -qxF "${m#"$work/ptx/"}"; then continue; fi
  echo "$i $m"
done)
# Worker k takes every jobs-th module from the k-th, each with its own scratch directory.
for k in $(seq 0 $((jobs - 1))); do
  (
    tmp="$work/tmp/$k"
    mkdir -p "$tmp"
    printf '%s\n' "$todo" | awk -v k="$k" -v n="$jobs" 'NF && (NR - 1) % n == k' | while read -r i m; do
      check_module "$m" "$i"
    done
    rm -f "$tmp/out.o" "$tmp/out.cubin"
  ) &
done
wait

summarize() {
  local r=$1 what=$2
  awk -F'\t' -v what="$what" '
    { n++; t += $3; if ($2 == "ok") ok++; else bad++ }
    END { printf "%s: %d compiled, %d failed (of %d modules), %.0f s of CPU\n", what, ok, bad, n, t }' "$r"
}
echo
summarize "$work/results.tsv" ptxforge
if [ "$use_ptxas" = 1 ]; then
  summarize "$work/ptxas.tsv" ptxas
  # The same modules on both sides: those both compilers accepted.
  join -t$'\t' <(awk -F'\t' '$2 == "ok"' "$work/results.tsv" | sort) \
               <(awk -F'\t' '$2 == "ok"' "$work/ptxas.tsv" | sort) |
    awk -F'\t' '{ n++; a += $3; b += $6 }
      END { if (n) printf "on the %d modules both compiled: ptxforge %.0f s, ptxas %.0f s of CPU (%.2fx)\n", n, a, b, b ? a / b : 0 }'
fi

if grep -q $'\tfailed\t' "$work/results.tsv"; then
  echo
  echo "Failures (module: first error):"
  awk -F'\t' '$2 == "failed" { print $1 ": " $4 }' "$work/results.tsv"
  echo
  echo "Failure classes (first error with file, line and numbers elided):"
  awk -F'\t' '$2 == "failed" { print $4 }' "$work/results.tsv" |
    sed -E 's/^ptxforge compile: error: [^ ]*: //; s/^[^ :]*\.ptx:[0-9]+:[0-9]+: //; s/%[A-Za-z_][A-Za-z0-9_]*/%R/g' |
    sed -E 's/[0-9]+/N/g' |
    sort | uniq -c | sort -rn
  exit 1
fi
exit 0
