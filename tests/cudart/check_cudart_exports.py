#!/usr/bin/env python3
"""Checks what ptxforge's libcudart.so.13 exports: SONAME libcudart.so.13, every entry point CudartApi.def names,
each under the symbol version libcudart.so.13 (what nvcc-built programs import: cudaMalloc@libcudart.so.13), and
nothing else (the runtime core and libstdc++ stay private)."""
import re
import subprocess
import sys


def main():
    lib, deffile = sys.argv[1], sys.argv[2]
    ok = True
    dyn = subprocess.run(["readelf", "-d", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    if "Library soname: [libcudart.so.13]" not in dyn:
        print("SONAME is not libcudart.so.13")
        ok = False
    out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", lib], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    exported = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in ("T", "W"):
            name, _, version = fields[2].partition("@@")
            exported[name] = version
    listed = {m.group(1) for m in (re.match(r"^CUDART_ENTRY\((\w+)\)", l) for l in open(deffile)) if m}
    for name in sorted(listed - exported.keys()):
        print(f"missing: {name}")
        ok = False
    for name in sorted(exported.keys() - listed):
        print(f"exported but not in CudartApi.def: {name}")
        ok = False
    for name in sorted(n for n in listed & exported.keys() if exported[n] != "libcudart.so.13"):
        print(f"{name} has version '{exported[name]}', not libcudart.so.13")
        ok = False
    print(f"{len(listed)} entry points listed, {len(exported)} exported: " + ("ok" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
