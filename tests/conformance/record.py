#!/usr/bin/env python3
"""Records the golden outputs of conformance cases on a real GPU through the CUDA driver API (ctypes on
libcuda.so.1; nothing to compile). For each case directory below ROOT (a case.json), it loads kernel.ptx as
text with cuModuleLoadDataEx, initialises the buffers as case.json says, runs the launch(es), and writes every
buffer that has an "expect" key to that file. Each case runs RUNS times (module reloaded, buffers
re-initialised); differing outputs are reported and nothing is written for that case.

Usage: record.py ROOT [RUNS]     (FORMAT.md: ../shared/conformance/FORMAT.md)
"""
import ctypes
import json
import os
import struct
import sys

cu = ctypes.CDLL("libcuda.so.1")
u64 = ctypes.c_uint64


def check(rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        cu.cuGetErrorName(rc, ctypes.byref(name))
        raise RuntimeError(f"{what}: {name.value.decode() if name.value else rc}")


def init():
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    major, minor = ctypes.c_int(), ctypes.c_int()
    cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)
    cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
    name = ctypes.create_string_buffer(256)
    cu.cuDeviceGetName(name, 256, dev)
    drv = ctypes.c_int()
    cu.cuDriverGetVersion(ctypes.byref(drv))
    return f"{name.value.decode()} sm_{major.value}{minor.value} driver API {drv.value}", major.value * 10 + minor.value


def load_module(ptx):
    mod = ctypes.c_void_p()
    log = ctypes.create_string_buffer(16384)
    opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
    vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(16384))
    rc = cu.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.c_char_p(ptx + b"\0"), 2, opts, vals)
    if rc != 0:
        raise RuntimeError(f"cuModuleLoadDataEx {rc}: {log.value.decode(errors='replace')}")
    return mod


def tensor_map(m, addrs):
    """The 128 bytes cuTensorMapEncodeTiled writes for a "tensormap" parameter (cases/README.md)."""
    r = len(m["global_dim"])
    if m.get("mode") == "im2col":
        return im2col_map(m, addrs)
    buf = ctypes.create_string_buffer(128 + 64)
    aligned = (ctypes.addressof(buf) + 63) & ~63
    u64s, u32s = ctypes.c_uint64 * 5, ctypes.c_uint32 * 5
    check(cu.cuTensorMapEncodeTiled(
        ctypes.c_void_p(aligned), m["data_type"], r, ctypes.c_void_p(addrs[m["buffer"]] + m.get("offset", 0)),
        u64s(*m["global_dim"]), u64s(*m["global_strides"]), u32s(*m["box_dim"]), u32s(*m["element_strides"]),
        m.get("interleave", 0), m.get("swizzle", 0), m.get("l2_promotion", 0), m.get("oob_fill", 0)),
        "cuTensorMapEncodeTiled")
    return ctypes.string_at(aligned, 128)


def im2col_map(m, addrs):
    """cuTensorMapEncodeIm2col's 128 bytes for an im2col "tensormap" parameter (cases/README.md)."""
    r = len(m["global_dim"])
    buf = ctypes.create_string_buffer(128 + 64)
    aligned = (ctypes.addressof(buf) + 63) & ~63
    u64s, u32s, i32s = ctypes.c_uint64 * 5, ctypes.c_uint32 * 5, ctypes.c_int * 3
    check(cu.cuTensorMapEncodeIm2col(
        ctypes.c_void_p(aligned), m["data_type"], r, ctypes.c_void_p(addrs[m["buffer"]] + m.get("offset", 0)),
        u64s(*m["global_dim"]), u64s(*m["global_strides"]), i32s(*m["lower_corner"]), i32s(*m["upper_corner"]),
        m["channels_per_pixel"], m["pixels_per_column"], u32s(*m["element_strides"]), m.get("interleave", 0),
        m.get("swizzle", 0), m.get("l2_promotion", 0), m.get("oob_fill", 0)), "cuTensorMapEncodeIm2col")
    return ctypes.string_at(aligned, 128)


def param_bytes(p, addrs):
    if p.get("type") == "tensormap":
        return tensor_map(p["tensormap"], addrs)
    if "buffer" in p:
        return struct.pack("<Q", addrs[p["buffer"]] + p.get("offset", 0))
    t = p["type"]
    if t == "bytes":
        return bytes.fromhex(p["hex"])
    size = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "u32": 4, "s32": 4, "b32": 4, "f32": 4,
            "u64": 8, "s64": 8, "b64": 8, "f64": 8}[t]
    if "bits" in p:
        return (int(p["bits"], 16) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    v = p["value"]
    if t == "f32":
        return struct.pack("<f", v)
    if t == "f64":
        return struct.pack("<d", v)
    return (int(v) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def launch(mod, L, addrs):
    fn = ctypes.c_void_p()
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, L["entry"].encode()), "cuModuleGetFunction " + L["entry"])
    raw = [ctypes.create_string_buffer(param_bytes(p, addrs)) for p in L["params"]]
    ptrs = (ctypes.c_void_p * max(1, len(raw)))(*[ctypes.cast(r, ctypes.c_void_p) for r in raw])
    g, b = L["grid"], L["block"]
    check(cu.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], L.get("dynamic_shared_bytes", 0), None, ptrs,
                            None), "cuLaunchKernel")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize " + L["entry"])


def run_case(d, c):
    mod = load_module(open(os.path.join(d, c["ptx"]), "rb").read())
    addrs, outs = {}, {}
    try:
        for nm, buf in c["buffers"].items():
            p = u64()
            check(cu.cuMemAlloc_v2(ctypes.byref(p), buf["bytes"]), "cuMemAlloc")
            addrs[nm] = p.value
            init = buf.get("init", "zero")
            if init == "zero" or isinstance(init, dict):
                fill = 0 if init == "zero" else init["fill_byte"]
                check(cu.cuMemsetD8_v2(u64(p.value), fill, buf["bytes"]), "cuMemsetD8")
            else:
                data = open(os.path.join(d, init), "rb").read()
                assert len(data) == buf["bytes"], (d, nm)
                check(cu.cuMemcpyHtoD_v2(u64(p.value), data, len(data)), "cuMemcpyHtoD")
        for L in c.get("launches", [c]):
            launch(mod, L, addrs)
        for nm, buf in c["buffers"].items():
            if "expect" in buf:
                host = ctypes.create_string_buffer(buf["bytes"])
                check(cu.cuMemcpyDtoH_v2(host, u64(addrs[nm]), buf["bytes"]), "cuMemcpyDtoH")
                outs[buf["expect"]] = host.raw
    finally:
        for p in addrs.values():
            cu.cuMemFree_v2(u64(p))
        cu.cuModuleUnload(mod)
    return outs


def main():
    root = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    dev, sm = init()
    print("device:", dev)
    failed = 0
    for base, _, files in sorted(os.walk(root)):
        if "case.json" not in files:
            continue
        c = json.load(open(os.path.join(base, "case.json")))
        if c["min_sm"] > sm:
            print(f"SKIP {c['name']}: needs sm_{c['min_sm']}")
            continue
        try:
            results = [run_case(base, c) for _ in range(runs)]
        except Exception as e:  # one broken case must not stop the others
            print(f"FAIL {c['name']}: {e}")
            failed += 1
            continue
        if any(r != results[0] for r in results[1:]):
            print(f"FAIL {c['name']}: outputs differ between runs")
            failed += 1
            continue
        for f, data in results[0].items():
            with open(os.path.join(base, f), "wb") as fh:
                fh.write(data)
        print(f"OK   {c['name']} ({len(results[0])} buffers, {runs} identical runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
