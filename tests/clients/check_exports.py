#!/usr/bin/env python3
"""Checks what ptxforge's libcuda.so.1 exports: SONAME libcuda.so.1, every symbol named in driver/capi/CudaApi.def
and CudaApiUnsupported.def, nothing else but the device runtime functions (__ptx_func_*), and, where NVIDIA's
stub library is installed, every symbol it exports (so any program linked against NVIDIA's loads)."""
import re
import subprocess
import sys


def dynamic_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-2] in ("T", "W")}


def main():
    lib, capi_dir = sys.argv[1], sys.argv[2]
    stub = sys.argv[3] if len(sys.argv) > 3 else ""
    ok = True
    dyn = subprocess.run(["readelf", "-d", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    if "Library soname: [libcuda.so.1]" not in dyn:
        print("SONAME is not libcuda.so.1")
        ok = False
    ours = dynamic_symbols(lib)
    listed = set()
    for name, pattern in (("CudaApi.def", r"^CU_API\(\w+, (\w+), \d+\)"), ("CudaApiUnsupported.def", r"^CU_API_UNSUPPORTED\((\w+)\)")):
        for line in open(f"{capi_dir}/{name}", encoding="utf-8"):
            m = re.match(pattern, line)
            if m:
                listed.add(m.group(1))
    missing = sorted(listed - ours)
    extra = sorted(s for s in ours - listed if not s.startswith("__ptx_func_"))
    if missing:
        print("listed but not exported:", " ".join(missing))
        ok = False
    if extra:
        print("exported but not listed:", " ".join(extra))
        ok = False
    if stub:
        theirs = dynamic_symbols(stub)
        lacking = sorted(theirs - ours)
        if lacking:
            print(f"exported by {stub} but not by ours:", " ".join(lacking))
            ok = False
        print(f"{len(theirs)} symbols of NVIDIA's stub library, all exported" if not lacking else "")
    else:
        print("NVIDIA's stub libcuda.so not found: compared with the .def lists only")
    print(f"{len(ours)} symbols exported, {len(listed)} listed; " + ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
