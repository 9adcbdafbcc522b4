#!/usr/bin/env python3
"""Writes docs/isa-coverage.md: every PTX opcode of ptx/include/ptxforge/ptx/Opcodes.def with its forms (the
modifiers and types OpcodeTable.def allows), and for each whether the CPU back end lowers it, whether a test
runs it on the CPU and whether a GPU-recorded conformance case checks it.

- lowered: codegen/lib names the opcode (Opcode::X) in its lowering. Forms it rejects are not told apart here:
  they fail with "is not supported by the CPU back end" (scripts/toolkit-check.sh finds them in real code).
- CPU-tested: an instruction of the opcode appears in a PTX file under tests/ (lit tests, the project's
  conformance cases), in the shared conformance corpus, or in the PTX a lit test's generator writes (a RUN line
  `python3 %S/<script>.py ARGS [> %t...]`, rerun here into a scratch folder; the test counts once), all of
  which CTest runs.
- GPU-checked: it appears in a conformance case with recorded outputs (*.expect.bin) from a GPU: the shared
  corpus, tests/conformance/cases and tests/conformance/texture.
For the tested opcodes the table lists the forms (modifiers and types of the table) no test uses yet.

Usage: isa-coverage.py [--shared DIR] [--check FILE | -o FILE]
  --check FILE  exit 1 (with a diff) when FILE is not what this script writes now: CTest's isa-coverage test
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PTXDIR = os.path.join(ROOT, "ptx", "include", "ptxforge", "ptx")

# Why an opcode has no lowering, where the reason is not "not done yet".
NOT_APPLICABLE = {}


def opcodes():
    text = open(os.path.join(PTXDIR, "Opcodes.def")).read()
    return [(e, s) for e, s in re.findall(r'PTX_OPCODE\((\w+), "([\w.]+)"\)', text) if e != "Enum"]


def opcode_table():
    info = {}
    for m in re.finditer(r'PTX_OPCODE_INFO\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\w+),\s*"([^"]*)",\s*"([^"]*)"\)',
                         open(os.path.join(PTXDIR, "OpcodeTable.def")).read()):
        enum, _, _, sm, ptx, _, mods, types = m.groups()
        info[enum] = (int(sm), int(ptx), mods.split(), types.split())
    return info


def lowered_enums():
    names = set()
    for base, _, files in os.walk(os.path.join(ROOT, "codegen", "lib")):
        for f in files:
            if f.endswith((".cpp", ".h")):
                names.update(re.findall(r"Opcode::(\w+)", open(os.path.join(base, f), errors="replace").read()))
    return names


LINE = re.compile(r"^\s*(?:[\w$]+:\s*)?(?:@!?%?[\w$]+\s+)?([a-z][\w:]*(?:\.[\w:]+)*)")


def instructions(path):
    """(opcode spelling, [its dot-separated parts]) of each instruction line of a PTX file."""
    text = re.sub(r"/\*.*?\*/", "", open(path, errors="replace").read(), flags=re.S)
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        for stmt in line.split(";"):
            m = LINE.match(stmt)
            if m:
                parts = m.group(1).split(".")
                yield parts[0], parts[1:]


def ptx_files(top):
    for base, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".ptx"):
                yield os.path.join(base, f), base


# A lit RUN line's command that generates test input: python3 on a script beside the test, with arguments that
# name no substitution but %t (the test's scratch path), and output written under %t or redirected to it.
GENERATOR = re.compile(r"^python3 %S/(\S+\.py)((?:\s+[^\s|&;<>]+)*?)(?:\s*>\s*(%t[^\s|&;<>]*))?$")


def run_lines(path):
    """The commands of a lit test's RUN lines (continuations joined), split at &&."""
    text = re.sub(r"\\\n\s*(?:#\s*)?RUN:", " ", open(path).read())
    for cmd in re.findall(r"^\s*(?:#\s*)?RUN:(.*)$", text, flags=re.M):
        yield from (c.strip() for c in cmd.split("&&"))


def generated_ptx(test, scratch):
    """The PTX files the generators of lit test `test` write, run into the empty folder scratch."""
    here, tmp = os.path.dirname(test), os.path.join(scratch, "t")
    for cmd in run_lines(test):
        m = GENERATOR.match(cmd)
        if not m or "%" in m.group(2).replace("%t", ""):
            continue
        args = ["python3", os.path.join(here, m.group(1))] + shlex.split(m.group(2).replace("%t", tmp))
        out = open(m.group(3).replace("%t", tmp) if m.group(3) else os.devnull, "w")
        with out:
            done = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, cwd=scratch, text=True)
        if done.returncode:
            sys.exit(f"{test}: `{cmd}` failed:\n{done.stderr}")
    return [p for p, _ in ptx_files(scratch)]


def lit_tests(top):
    for base, dirs, files in os.walk(top):
        dirs.sort()
        yield from (os.path.join(base, f) for f in sorted(files) if f.endswith(".test"))


def scan_generated(top, cpu_files, forms):
    """Counts the PTX the lit tests' generators write: each test once per opcode its kernels use."""
    for test in lit_tests(top):
        with tempfile.TemporaryDirectory() as scratch:
            seen = set()
            for path in generated_ptx(test, scratch):
                for op, parts in instructions(path):
                    seen.add(op)
                    forms.setdefault(op, set()).update(parts)
        for op in seen:
            cpu_files[op] = cpu_files.get(op, 0) + 1


def scan(shared):
    """Per opcode spelling: forms seen in CPU tests, and the number of CPU test files and GPU-recorded cases."""
    cpu_files, gpu_cases, forms = {}, {}, {}
    tops = [os.path.join(ROOT, "tests")]
    if shared and os.path.isdir(os.path.join(shared, "conformance")):
        tops.append(os.path.join(shared, "conformance"))
    for top in tops:
        for path, base in ptx_files(top):
            recorded = any(f.endswith(".expect.bin") for f in os.listdir(base))
            seen = set()
            for op, parts in instructions(path):
                seen.add(op)
                forms.setdefault(op, set()).update(parts)
            for op in seen:
                cpu_files[op] = cpu_files.get(op, 0) + 1
                if recorded:
                    gpu_cases.setdefault(op, set()).add(base)
    scan_generated(os.path.join(ROOT, "tests", "lit"), cpu_files, forms)
    return cpu_files, {op: len(c) for op, c in gpu_cases.items()}, forms


def render(shared):
    ops, table, lowered = opcodes(), opcode_table(), lowered_enums()
    cpu, gpu, forms = scan(shared)
    rows, counts = [], {"lowered": 0, "cpu": 0, "gpu": 0}
    for enum, spelling in ops:
        sm, ptx, mods, types = table.get(enum, (0, 0, [], []))
        is_lowered = enum in lowered
        counts["lowered"] += is_lowered
        counts["cpu"] += spelling in cpu
        counts["gpu"] += spelling in gpu
        untested = [f for f in mods + types if f not in forms.get(spelling, set())] if spelling in cpu else []
        low = "yes" if is_lowered else ("n/a: " + NOT_APPLICABLE[enum] if enum in NOT_APPLICABLE else "**no**")
        allforms = " ".join(mods) + (" ; " if mods and types else "") + " ".join(types)
        rows.append(f"| `{spelling}` | sm_{sm} / {ptx // 10}.{ptx % 10} | {allforms or '-'} | {low} | "
                    f"{cpu.get(spelling, 0) or '**no**'} | {gpu.get(spelling, 0) or 'no'} | "
                    f"{' '.join(untested) if untested else '-'} |")
    n = len(ops)
    head = [
        "# PTX ISA coverage",
        "",
        "Generated by `scripts/isa-coverage.py` from `ptx/include/ptxforge/ptx/Opcodes.def`, `OpcodeTable.def`, the",
        "lowering (`codegen/lib`) and the tests; do not edit by hand. CTest's `isa-coverage` fails when this file is",
        "stale: run `scripts/isa-coverage.py -o docs/isa-coverage.md` after adding an opcode, a lowering or a test.",
        "",
        "- **lowered**: the lowering names the opcode. A form it does not handle fails to compile with \"is not",
        "  supported by the CPU back end\"; `scripts/toolkit-check.sh` finds those in the CUDA toolkit's libraries.",
        "- **CPU tests**: PTX files that run an instruction of the opcode (lit tests, `tests/conformance`, the shared",
        "  conformance corpus), and lit tests whose generators (`tests/lit/*/Inputs/*.py`) write kernels that do.",
        "- **GPU cases**: conformance cases with outputs recorded on a GPU that use it.",
        "- **forms no test uses**: modifiers and types of the opcode's table row that no test spells (a row lists",
        "  the modifiers of every form of the opcode, so some combine only in some forms).",
        "- min: the lowest target and PTX ISA version of the opcode's plainest form (`OpcodeTable.def`).",
        "",
        "No opcode of the table is tied to a graphics pipeline: the PTX ISA's texture and surface instructions",
        "(`tex`, `tld4`, `txq`, `suld`, `sust`, `sured`, `suq`, `istypep`) work on handles a CUDA program makes.",
        "",
        f"{n} opcodes: {'every one' if counts['lowered'] == n else counts['lowered']} lowered, {counts['cpu']} run by "
        f"a CPU test, {counts['gpu']} checked against a GPU.",
        "",
        "| opcode | min | forms (modifiers ; types) | lowered | CPU tests | GPU cases | forms no test uses |",
        "|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--check")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    text = render(a.shared)
    if a.check:
        old = open(a.check).read() if os.path.exists(a.check) else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), a.check, "now"))
            print(f"{a.check} is stale: run scripts/isa-coverage.py -o {a.check}", file=sys.stderr)
            return 1
        return 0
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
