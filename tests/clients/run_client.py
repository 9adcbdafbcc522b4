#!/usr/bin/env python3
"""Runs one client program of shared/clients against ptxforge's libcuda.so.1 (and libcudart.so.13, for the
runtime programs) and compares its stdout with the output recorded on an H200 (<program>.expected.txt).

Comparison (shared/clients/README.md): `INFO ...` lines are device-specific and dropped; so are lines with no
PASS/FAIL/OBSERVED/SUMMARY/INFO prefix, which are continuation lines of multi-line INFO values (JIT error logs:
their wording is the JIT compiler's, ptxas on the GPU, ptxforge here). Everything else must match exactly.

Known failures (known-failures.txt, `<program> <check> : <reason>`) mask the PASS/FAIL/OBSERVED lines of one
check (`<check>_...` and `<check>: ...`) and the SUMMARY line; `<program> * : <reason>` marks the whole program
as failing (a crash, or a gap every check depends on). A known failure that passes is an error too (remove it
from the list), so the list stays honest."""
import argparse
import os
import re
import subprocess
import sys

PREFIXES = ("PASS ", "FAIL ", "OBSERVED ", "SUMMARY ", "INFO ")


def significant(lines, all_lines=False):
    if all_lines:
        return [l for l in lines if not l.startswith("INFO ")]
    return [l for l in lines if l.startswith(PREFIXES) and not l.startswith("INFO ")]


def load_known(path, program):
    known = {}
    if not path or not os.path.exists(path):
        return known
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, _, reason = line.partition(":")
        fields = head.split()
        if len(fields) == 2 and fields[0] == program:
            known[fields[1]] = reason.strip()
    return known


def masks(check):
    return re.compile(r"^(PASS|FAIL|OBSERVED) " + re.escape(check) + r"([_:]|$)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--name", required=True, help="program name (for the known-failure list)")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--known-failures")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--all-lines", action="store_true",
                    help="compare every line but INFO ones (the runtime programs: device printf output is recorded)")
    ap.add_argument("--exit-zero", action="store_true",
                    help="the program must also exit with status 0 (unless a listed known failure failed)")
    ap.add_argument("--via-exec", metavar="PTXFORGE",
                    help="run the program as `PTXFORGE exec PROGRAM`, which finds the libraries itself")
    args = ap.parse_args()

    env = dict(os.environ)
    command = [args.program]
    if args.via_exec:
        command = [args.via_exec, "exec", args.program]
    else:
        env["LD_LIBRARY_PATH"] = args.libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    try:
        run = subprocess.run(command, cwd=args.workdir, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"{args.name}: timed out after {args.timeout} s")
        return 1
    out = run.stdout.decode("utf-8", "replace").splitlines()
    expected = open(args.expected, encoding="utf-8").read().splitlines()
    actual, wanted = significant(out, args.all_lines), significant(expected, args.all_lines)

    known = load_known(args.known_failures, args.name)
    if "*" in known:  # the whole program is known to fail (it crashes, or every check depends on one gap)
        passed = actual == wanted and run.returncode == 0
        print(f"{args.name}: " + (f"UNEXPECTED PASS (listed as failing as a whole: {known['*']}); remove it from "
                                  f"{args.known_failures}" if passed else f"KNOWN FAILURE (whole program): {known['*']}"))
        return 1 if passed else 0
    failed_known, passing_known = [], []
    for check, reason in known.items():
        m = masks(check)
        a = [l for l in actual if m.match(l)]
        w = [l for l in wanted if m.match(l)]
        (passing_known if a == w else failed_known).append((check, reason))
        actual = [l for l in actual if not m.match(l)]
        wanted = [l for l in wanted if not m.match(l)]
    if failed_known:
        actual = [l for l in actual if not l.startswith("SUMMARY ")]
        wanted = [l for l in wanted if not l.startswith("SUMMARY ")]

    ok = True
    if actual != wanted:
        ok = False
        import difflib
        print(f"{args.name}: output differs from {args.expected} (after dropping INFO lines"
              + (" and known failures" if known else "") + "):")
        for d in difflib.unified_diff(wanted, actual, "expected (H200)", "ptxforge", lineterm="", n=1):
            print("  " + d)
    for check, reason in failed_known:
        print(f"{args.name}: KNOWN FAILURE {check}: {reason}")
    for check, reason in passing_known:
        ok = False
        print(f"{args.name}: UNEXPECTED PASS {check} (listed as known failure: {reason}); "
              "remove it from known-failures.txt")
    if run.returncode < 0:
        ok = False
        print(f"{args.name}: terminated by signal {-run.returncode}")
    elif args.exit_zero and run.returncode != 0 and not failed_known:
        ok = False
        print(f"{args.name}: exit status {run.returncode}, expected 0")
    passes = sum(1 for l in out if l.startswith("PASS "))
    fails = sum(1 for l in out if l.startswith("FAIL "))
    print(f"{args.name}: {passes} PASS, {fails} FAIL lines; exit status {run.returncode}; "
          + ("matches the recorded output" if ok else "MISMATCH"))
    if not ok and run.stderr:
        print("stderr (last lines):")
        for l in run.stderr.decode("utf-8", "replace").splitlines()[-20:]:
            print("  " + l)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
