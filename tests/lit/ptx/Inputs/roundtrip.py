#!/usr/bin/env python3
"""Round-trips every .ptx file under a folder through `ptxforge print`.

usage: roundtrip.py DIR WORKDIR

For each file: `ptxforge parse` reports no diagnostics at all; `print` gives A; `print` of A gives B identical to
A (the printer reaches a fixed point at once); and when ptxas is on PATH, ptxas accepts A for the file's
`.target` whenever it accepts the original. Prints one line per failure, then a summary line
`roundtrip: N files, M checked with ptxas, F failures`; exits 1 on any failure.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

TARGET = re.compile(rb"^\s*\.target\s+(sm_\w+)", re.M)


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")


def first_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0] if lines else "(no output)"


def check(path, root, work, ptxas):
    """Returns (failure message or None, whether ptxas compared the two)."""
    rel = os.path.relpath(path, root)
    stem = os.path.join(work, rel.replace(os.sep, "__"))
    a, b = stem + ".A.ptx", stem + ".B.ptx"
    rc, out = run(["ptxforge", "parse", path])
    if rc != 0 or out.strip():
        return "%s: parse reported diagnostics (exit %d): %s" % (rel, rc, first_line(out)), False
    rc, out = run(["ptxforge", "print", path, "-o", a])
    if rc != 0:
        return "%s: print failed (exit %d): %s" % (rel, rc, first_line(out)), False
    rc, out = run(["ptxforge", "print", a, "-o", b])
    if rc != 0:
        return "%s: print of the printed module failed (exit %d): %s" % (rel, rc, first_line(out)), False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        ta, tb = fa.read(), fb.read()
    if ta != tb:
        la, lb = ta.splitlines(), tb.splitlines()
        n = next((i for i in range(min(len(la), len(lb))) if la[i] != lb[i]), min(len(la), len(lb)))
        return "%s: printing is not a fixed point (first difference at line %d of the printed text)" % (rel, n + 1), False
    if not ptxas:
        return None, False
    with open(path, "rb") as f:
        m = TARGET.search(f.read())
    if not m:
        return "%s: no .target found for ptxas" % rel, False
    arch = m.group(1).decode()
    rc_orig, _ = run([ptxas, "-arch=" + arch, path, "-o", os.devnull])
    if rc_orig != 0:
        return None, False  # ptxas rejects the original: nothing to compare
    rc, out = run([ptxas, "-arch=" + arch, a, "-o", os.devnull])
    if rc != 0:
        return "%s: ptxas -arch=%s accepts the original but rejects the printed module: %s" % (
            rel, arch, first_line(out)), True
    return None, True


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".ptx"))
    ptxas = shutil.which("ptxas")
    if not ptxas:
        print("SKIPPED ptxas checks: ptxas not found")
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda p: check(p, root, work, ptxas), files))
    failures = [msg for msg, _ in results if msg]
    for msg in failures:
        print("FAIL " + msg)
    print("roundtrip: %d files, %d checked with ptxas, %d failures" % (
        len(files), sum(1 for _, compared in results if compared), len(failures)))
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
