#!/usr/bin/env python3
"""A kernel with one line (or a few) repeated N times, for compile-time bounds.

usage: repeated-lines.py KIND N
  bar    N x `bar.sync 0`, each between a shared-memory store and a load of the neighbour's value
  shfl   N x `shfl.sync.bfly.b32` folding a value (a warp reduction without end)
  pred   N x a predicated add
  bra    N x a conditional branch over an add
  call   N x a call of a .func with register arguments
  reg    a `.reg` list of N registers (the first 16 used)
Each kernel stores its result in out[tid], so nothing is dead.
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
out = [".version 8.0", ".target sm_90", ".address_size 64", ""]
if kind == "bar":
    out.append(".shared .align 4 .b32 buf[1024];")
if kind == "call":
    out.append(".func (.reg .b32 r) f(.reg .b32 a) { add.s32 r, a, 1; ret; }")
out += [".visible .entry repeated(.param .u64 out)", "{",
        "  .reg .pred %p<2>;", "  .reg .b32 %r<8>;", "  .reg .b64 %rd<4>;"]
if kind == "reg":
    out.append("  .reg .b32 " + ", ".join(f"%x{i}" for i in range(n)) + ";")
out += ["  ld.param.u64 %rd1, [out];", "  cvta.to.global.u64 %rd1, %rd1;", "  mov.u32 %r1, %tid.x;",
        "  mul.wide.u32 %rd2, %r1, 4;", "  add.s64 %rd3, %rd1, %rd2;", "  mov.u32 %r2, %r1;",
        "  setp.lt.u32 %p1, %r1, 7;"]
if kind == "bar":
    out += ["  shl.b32 %r3, %r1, 2;", "  mov.u32 %r4, buf;", "  add.s32 %r3, %r3, %r4;",
            "  xor.b32 %r5, %r1, 1;", "  shl.b32 %r5, %r5, 2;", "  add.s32 %r5, %r5, %r4;"]
for i in range(n if kind != "reg" else 0):
    if kind == "bar":
        half = 2048 * (i % 2)  # alternate halves: the next store never races with this load
        out += [f"  st.shared.u32 [%r3+{half}], %r2;", "  bar.sync 0;", f"  ld.shared.u32 %r6, [%r5+{half}];",
                f"  add.s32 %r2, %r6, {i};"]
    elif kind == "shfl":
        out += [f"  shfl.sync.bfly.b32 %r6, %r2, {1 << (i % 5)}, 31, -1;", "  add.s32 %r2, %r2, %r6;"]
    elif kind == "pred":
        out += [f"  @%p1 add.s32 %r2, %r2, {i};"]
    elif kind == "call":
        out += ["  call (%r6), f, (%r2);", "  add.s32 %r2, %r2, %r6;"]
    elif kind == "bra":
        out += [f"  @%p1 bra L{i};", f"  add.s32 %r2, %r2, {i};", f"L{i}:"]
    else:
        sys.exit(f"unknown kind {kind}")
if kind == "reg":  # the first few are used
    for i in range(min(n, 16)):
        out += [f"  add.s32 %x{i}, %r2, {i};", f"  add.s32 %r2, %r2, %x{i};"]
out += ["  st.global.u32 [%rd3], %r2;", "  ret;", "}", ""]
print("\n".join(out))
