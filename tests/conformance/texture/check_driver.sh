#!/bin/sh
# The texture cases end to end through ptxforge's libcuda: record_cases (built against ptxforge's cuda.h and
# libcuda.so.1) builds the arrays, textures and surfaces with the driver API and writes what the kernels
# produce; check_case.py compares that with the GPU's recordings by the cases' rules.
# Usage: check_driver.sh RECORDER CASES_DIR CHECK_CASE_PY WORK_DIR
set -e
rec=$1 cases=$2 check=$3 work=$4
rm -rf "$work"
"$rec" "$cases" "$work"
status=0
for dir in "$work"/*/; do
  name=$(basename "$dir")
  python3 "$check" "$cases/$name" "$dir" || { echo "FAIL $name"; status=1; }
done
exit $status
