"""Writes a conformance-format case (../shared/conformance/FORMAT.md) of sm_100's ldmatrix/stmatrix b8 forms into
the directory argv[1]. One warp copies 512 random bytes (32 rows of 16) into shared memory; lane l addresses row
(7 l) mod 32. It runs ldmatrix .m16n16.x1/.x2.trans.b8 and .m8n16.x1/.x2/.x4 .b8x16.b4x16_p64 / .b6x16_p32 and
writes every register to out; then stmatrix .m16n8.x1/.x2/.x4.trans.b8 store registers whose byte b of register i
of lane l is (K l + 4 i + b) mod 256 (K = 4, 8, 16; a second .x4 stores l in every byte, so the two .x4 areas
together name each byte's lane, register and position) into zeroed shared areas whose row for lane l is (5 l) mod
32, copied to out after.

The expected bytes come from CUTLASS's SM100 LDSM/STSM traits (thread and value bit to a reference bit, the source
rows' bits and the registers' bits mapped into the same reference space), inverted here as CuTe layouts: a
register bit takes the memory bit that lands on the same reference bit. In the .b4x16_p64 / .b6x16_p32 forms the
reference space is the unpacked one: element c of a row (4 or 6 bits, packed from bit 0 of its first 8 or 12
bytes) becomes byte c, zero-extended."""
import os
import random
import struct
import sys

from cute_layout import layout, size
from case_files import write_single_case


# (src thread shape/stride, src bits per thread, dst thread shape/stride, dst value shape/stride)
LDSM = {
    ("m16n16", 1): (((2, 2, 4, 2), (128, 1024, 256, 0)), ((4, 8), (256, 8)), ((8, 2, 2, 2), (1, 128, 64, 1024))),
    ("m16n16", 2): (((2, 2, 4, 2), (128, 1024, 256, 2048)), ((4, 8), (256, 8)), ((8, 2, 2, 4), (1, 128, 64, 1024))),
    ("m8n16", 1): (((8, 4), (128, 0)), (32, 32), (32, 1)),
    ("m8n16", 2): (((16, 2), (128, 0)), (32, 32), ((32, 2), (1, 1024))),
    ("m8n16", 4): ((32, 128), (32, 32), ((32, 4), (1, 1024))),
}
STSM = {  # registers (src) then memory rows (dst)
    1: (((4, 8), (256, 8)), ((8, 2, 2), (1, 128, 64)), ((8, 4), (128, 0))),
    2: (((4, 8), (256, 8)), ((8, 2, 2, 2), (1, 128, 64, 1024)), ((16, 2), (128, 0))),
    4: (((4, 8), (256, 8)), ((8, 2, 2, 4), (1, 128, 64, 1024)), (32, 128)),
}


def row_owner(ts, td):
    """Reference bit -> (thread, bit) of a row layout whose value mode is (128):(1); stride-0 modes at 0."""
    owner = {}
    for t in range(32):
        base = layout(ts, td, t)
        if any(base == layout(ts, td, u) for u in range(t)):
            continue
        for v in range(128):
            owner[base + v] = (t, v)
    return owner


def element(row, form, c):
    if form == "b8":
        return row[c]
    if form == "b4x16_p64":
        return row[c // 2] >> (4 * (c % 2)) & 15
    bit = 6 * c
    return (row[bit // 8] | row[bit // 8 + 1] << 8) >> (bit % 8) & 63


root = sys.argv[1]
rnd = random.Random(601)
mem = bytes(rnd.getrandbits(8) for _ in range(512))
rows = [mem[16 * r:16 * r + 16] for r in range(32)]
addr_row = [(7 * lane) % 32 for lane in range(32)]
loads = [("m16n16", 1, "b8"), ("m16n16", 2, "b8"), ("m8n16", 1, "b4x16_p64"), ("m8n16", 2, "b6x16_p32"),
         ("m8n16", 4, "b4x16_p64"), ("m8n16", 4, "b6x16_p32")]
out = [[] for _ in range(32)]
text = []
for shape, num, form in loads:
    (ss, sd), (ts, td), (vs, vd) = LDSM[(shape, num)]
    owner = row_owner(ss, sd)
    nregs = size(vs) // 32
    for t in range(32):
        for r in range(nregs):
            w = 0
            for b in range(4):
                s, u = owner[layout(ts, td, t) + layout(vs, vd, 32 * r + 8 * b)]
                w |= element(rows[addr_row[s]], form, u // 8) << (8 * b)
            out[t].append(w)
    regs = ", ".join(f"%v{i}" for i in range(nregs))
    kind = "trans.shared.b8" if shape == "m16n16" else f"shared.b8x16.{form}"
    text.append(f"ldmatrix.sync.aligned.{shape}.x{num}.{kind} {{{regs}}}, [%r4];")
    text += [f"st.global.b32 [%rd1+{4 * (len(out[0]) - nregs + i)}], %v{i};" for i in range(nregs)]
nld = len(out[0])
STORES = [(1, 4), (2, 8), (4, 16), (4, 0)]  # (num, K); K 0: every byte the lane id
areas = []
for num, k in STORES:
    (ts, td), (vs, vd), (ds, dd) = STSM[num]
    owner = row_owner(ds, dd)
    area = [[0] * 16 for _ in range(32)]
    st_row = [(5 * lane) % 32 for lane in range(32)]
    for t in range(32):
        for r in range(num):
            for b in range(4):
                s, u = owner[layout(ts, td, t) + layout(vs, vd, 32 * r + 8 * b)]
                area[st_row[s]][u // 8] = (k * t + 4 * r + b) % 256 if k else t
    areas.append(area)

L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
     ".visible .entry k_ldsm(.param .u64 p_in, .param .u64 p_out)", "{", "\t.reg .b32 %r<12>, %v<4>;",
     "\t.reg .b64 %rd<8>;", "\t.shared .align 16 .b8 s_a[512];", "\t.shared .align 16 .b8 s_b[2048];",
     "\tmov.u32 %r1, %tid.x;", "\tld.param.u64 %rd2, [p_in];", "\tcvta.to.global.u64 %rd2, %rd2;",
     "\tmul.wide.u32 %rd3, %r1, 16;", "\tadd.u64 %rd4, %rd2, %rd3;", "\tld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%rd4];",
     "\tmov.u32 %r2, s_a;", "\tshl.b32 %r3, %r1, 4;", "\tadd.u32 %r9, %r2, %r3;",
     "\tst.shared.v4.b32 [%r9], {%v0, %v1, %v2, %v3};", "\tmov.u32 %r5, s_b;", "\tadd.u32 %r10, %r5, %r3;"]
L += [f"\tst.shared.v4.b32 [%r10+{512 * a}], {{0, 0, 0, 0}};" for a in range(4)]
L += ["\tbar.sync 0;", "\tmul.lo.u32 %r4, %r1, 7;", "\tand.b32 %r4, %r4, 31;", "\tshl.b32 %r4, %r4, 4;",
      "\tadd.u32 %r4, %r2, %r4;", "\tmul.lo.u32 %r6, %r1, 5;", "\tand.b32 %r6, %r6, 31;", "\tshl.b32 %r6, %r6, 4;",
      "\tadd.u32 %r6, %r5, %r6;", "\tld.param.u64 %rd1, [p_out];", "\tcvta.to.global.u64 %rd1, %rd1;",
      f"\tmul.wide.u32 %rd5, %r1, {4 * nld};", "\tadd.u64 %rd6, %rd1, %rd5;"]
L += ["\t" + x.replace("[%rd1+", "[%rd6+") for x in text]
for a, (num, k) in enumerate(STORES):
    for i in range(num):
        if k:
            L += [f"\tmul.lo.u32 %r7, %r1, {k};", f"\tadd.u32 %r7, %r7, {4 * i};", "\tand.b32 %r7, %r7, 255;",
                  "\tmul.lo.u32 %r7, %r7, 16843009;", f"\tadd.u32 %v{i}, %r7, 50462976;"]
        else:
            L += [f"\tmul.lo.u32 %v{i}, %r1, 16843009;"]
    regs = ", ".join(f"%v{i}" for i in range(num))
    L += [f"\tadd.u32 %r8, %r6, {512 * a};", f"\tstmatrix.sync.aligned.m16n8.x{num}.trans.shared.b8 [%r8], {{{regs}}};"]
L += ["\tbar.sync 0;", f"\tadd.u64 %rd7, %rd1, {4 * 32 * nld};", "\tadd.u64 %rd7, %rd7, %rd3;"]
for a in range(4):
    L += [f"\tld.shared.v4.b32 {{%v0, %v1, %v2, %v3}}, [%r10+{512 * a}];",
          f"\tst.global.v4.b32 [%rd7+{512 * a}], {{%v0, %v1, %v2, %v3}};"]
L += ["\tret;", "}", ""]

expect = b"".join(struct.pack(f"<{nld}I", *out[t]) for t in range(32)) + \
    b"".join(bytes(area[r]) for area in areas for r in range(32))
name = "ldmatrix_stmatrix_b8"
d = os.path.join(root, name)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "in.bin"), "wb") as f:
    f.write(mem)
with open(os.path.join(d, "out.expect.bin"), "wb") as f:
    f.write(expect)
with open(os.path.join(d, "kernel.ptx"), "w") as f:
    f.write("\n".join(L))
c = {"name": f"matrix/{name}", "description": "sm_100 ldmatrix/stmatrix b8 forms against CUTLASS's layouts",
     "ptx": "kernel.ptx", "entry": "k_ldsm", "min_sm": 100, "grid": [1, 1, 1], "block": [32, 1, 1],
     "dynamic_shared_bytes": 0, "params": [{"type": "u64", "buffer": "in"}, {"type": "u64", "buffer": "out"}],
     "buffers": {"in": {"bytes": 512, "init": "in.bin"},
                 "out": {"bytes": len(expect), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                         "compare": {"as": "u32"}}}}
write_single_case(root, name, c)
