#!/usr/bin/env bash
# CI's bounded fuzzing smoke run: the front end, the fatbin reader and the driver's module loader, through
# tests/fuzz/campaign.sh (which builds them with clang-22 and reports per target); fails on any finding.
# Usage: scripts/fuzz.sh [SECONDS]   (default 60, split between the targets)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TOTAL="${1:-60}"
CAMPAIGN="$ROOT/tests/fuzz/campaign.sh"
status=0
"$CAMPAIGN" $((SECONDS_TOTAL / 2)) ptx_frontend_fuzzer || status=1
"$CAMPAIGN" $((SECONDS_TOTAL / 4)) fatbin_reader_fuzzer || status=1
"$CAMPAIGN" $((SECONDS_TOTAL / 4)) driver_module_fuzzer || status=1
exit $status
