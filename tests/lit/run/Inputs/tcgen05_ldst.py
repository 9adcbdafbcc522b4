"""Writes a conformance-format case (../shared/conformance/FORMAT.md) of tcgen05.ld/st's shapes into the directory
argv[1]. One warp allocates 64 columns of Tensor Memory and fills its 32 lanes with tcgen05.st.32x32b (lane l,
column c holds l << 16 | c); then it loads with .16x64b.x4, .16x128b.x2, .16x256b.x2 and .16x32bx2.x2 (second half
16 columns on) from other lanes and columns, stores .16x256b.x1 and .16x64b.x2 from registers holding
0x8000 | lane << 8 | register and reads those columns back with .32x32b; then it loads with .pack::16b
(.16x128b.x2, .32x32b.x4, .16x32bx2.x2 with its second half 4 columns on), stores .16x64b.x2 with .unpack::16b and
reads those halves back with .32x32b.x8.pack::16b. Every lane writes what it loaded to out. With a second argument
"red" it writes instead an sm_103a case of tcgen05.ld.red (.32x32b and .16x32bx2; .min/.max over f32 with .abs
and .NaN, u32 and s32): the registers load as tcgen05.ld's do and redVal is their min or max as min/max of the
type order values, computed here from the ISA's definitions. The expected words come from CUTLASS's SM100 TMEM_LOAD layouts (thread and
value to a bit of the 16 data-path lanes' rows, ValID: bit b of lane d is b + bits-per-lane * d; the _16b atoms'
ValID takes a row's bits 16 at a time from the low halves of consecutive 32-bit columns), evaluated here as CuTe
layouts."""
import os
import random
import struct
import sys

from cute_layout import layout
from case_files import write_single_case


# (bits per data-path lane, thread shape/stride, value shape/stride) of the .x1/.x2 forms used here
SHAPES = {
    ("16x64b", 4): (256, ((2, 2, 8), (1024 * 2, 32, 256)), ((32, 4), (1, 64))),
    ("16x64b", 2): (128, ((2, 2, 8), (1024, 32, 128)), ((32, 2), (1, 64))),
    ("16x128b", 2): (256, ((4, 8), (32, 256)), ((32, 2, 2), (1, 2048, 128))),
    ("16x256b", 2): (512, ((4, 8), (64, 512)), ((64, 2, 2), (1, 4096, 256))),
    ("16x256b", 1): (256, ((4, 8), (64, 256)), ((64, 2), (1, 2048))),
    ("16x32bx2", 2): (128, ((16, 2), (128, 64)), (64, 1)),
    ("32x32b", 4): (128, (32, 128), (128, 1)),
    ("32x32b", 8): (256, (32, 256), (256, 1)),
}


def cells(shape, num, lane0, col0, imm, pack=False):
    """(lane, column) of register r of thread t: bit = DstLayout(t, 32 r), lane = bit // bits, column the bit's
    32-bit word; .16x32bx2's second half (bit 64 * num on) lies imm columns on instead of num. Packed (.pack::16b,
    .unpack::16b): the column of the register's low half, its high half in the next (16 bits a column)."""
    bits, (ts, td), (vs, vd) = SHAPES[(shape, num)]
    nregs = bits * (32 if shape == "32x32b" else 16) // 32 // 32
    out = {}
    for t in range(32):
        for r in range(nregs):
            b = layout(ts, td, t) + layout(vs, vd, 32 * r)
            lane, word = b // bits, (b % bits) // 32
            step = 2 if pack else 1  # the imm counts 32-bit columns, packed or not (CUTLASS's _16b atoms)
            col = imm + step * (word - num) if shape == "16x32bx2" and word >= num else step * word
            out[t, r] = (lane0 + lane, col0 + col)
    return nregs, out


def kernel(steps):
    L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
         ".visible .entry k_ldst(.param .u64 p_out)", "{", "\t.reg .pred %p<2>;", "\t.reg .b32 %r<16>, %v<8>;",
         "\t.reg .b64 %rd<4>;", "\t.shared .align 4 .b32 s_taddr;", "\tmov.u32 %r1, %tid.x;",
         "\tmov.u32 %r2, s_taddr;", "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 64;",
         "\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.b32 %r3, [%r2];", "\tshl.b32 %r4, %r1, 16;", "\tld.param.u64 %rd1, [p_out];",
         "\tcvta.to.global.u64 %rd1, %rd1;", f"\tmul.wide.u32 %rd2, %r1, {4 * sum(s[1] for s in steps)};",
         "\tadd.u64 %rd1, %rd1, %rd2;"]
    for c0 in range(0, 64, 8):  # lane l, column c: l << 16 | c
        L += [f"\tor.b32 %v{i}, %r4, {c0 + i};" for i in range(8)]
        L += [f"\tadd.u32 %r5, %r3, {c0};",
              "\ttcgen05.st.sync.aligned.32x32b.x8.b32 [%r5], {%v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7};"]
    L += ["\ttcgen05.wait::st.sync.aligned;"]
    off = 0
    for text, n in steps:
        L += ["\t" + line for line in text]
        for r in range(n):
            L += [f"\tst.global.b32 [%rd1+{4 * (off + r)}], %v{r};"]
        off += n
    L += ["\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;",
          "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 64;",
          "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "\tret;", "}", ""]
    return "\n".join(L)


def regs(n):
    return "{" + ", ".join(f"%v{i}" for i in range(n)) + "}"


def addr(lane, col):
    return [f"\tadd.u32 %r5, %r3, {lane << 16 | col};"]


def red_kernel(steps):
    """sm_103a's tcgen05.ld.red: one warp stores p_in's 64 words a lane into 64 columns with .32x32b, then each step
    loads with a reduction and writes the registers and redVal to out."""
    L = [".version 8.8", ".target sm_103a", ".address_size 64", "",
         ".visible .entry k_red(.param .u64 p_in, .param .u64 p_out)", "{", "\t.reg .b32 %r<16>, %v<64>;",
         "\t.reg .b64 %rd<8>;", "\t.shared .align 4 .b32 s_taddr;", "\tmov.u32 %r1, %tid.x;",
         "\tmov.u32 %r2, s_taddr;", "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 64;",
         "\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.b32 %r3, [%r2];", "\tld.param.u64 %rd3, [p_in];", "\tcvta.to.global.u64 %rd3, %rd3;",
         "\tmul.wide.u32 %rd4, %r1, 256;", "\tadd.u64 %rd3, %rd3, %rd4;"]
    L += [f"\tld.global.v4.b32 {{%v{4 * q}, %v{4 * q + 1}, %v{4 * q + 2}, %v{4 * q + 3}}}, [%rd3+{16 * q}];"
          for q in range(16)]
    L += ["\ttcgen05.st.sync.aligned.32x32b.x64.b32 [%r3], " + regs(64) + ";", "\ttcgen05.wait::st.sync.aligned;",
          "\tld.param.u64 %rd1, [p_out];", "\tcvta.to.global.u64 %rd1, %rd1;",
          f"\tmul.wide.u32 %rd2, %r1, {4 * sum(n + 1 for _, _, n in steps)};", "\tadd.u64 %rd1, %rd1, %rd2;"]
    off = 0
    for col, text, n in steps:
        L += [f"\tadd.u32 %r5, %r3, {col};", "\t" + text, "\ttcgen05.wait::ld.sync.aligned;"]
        L += [f"\tst.global.b32 [%rd1+{4 * (off + r)}], %v{r};" for r in range(n)]
        L += [f"\tst.global.b32 [%rd1+{4 * (off + n)}], %r6;"]
        off += n + 1
    L += ["\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;",
          "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 64;",
          "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "\tret;", "}", ""]
    return "\n".join(L)


def f32(w):
    return struct.unpack("<f", struct.pack("<I", w))[0]


def reduce_words(words, op, typ, mods):
    """redVal as the ISA defines .red: the min or max across a lane's loaded columns, ordered as min/max of the
    type order them (f32: -0 below +0; a NaN ignored unless .NaN, which makes any NaN the canonical NaN; all NaN
    gives it too; .abs reduces the magnitudes)."""
    if typ != "f32":
        key = (lambda w: w - (1 << 32) if typ == "s32" and w >> 31 else w)
        return (max if op == "max" else min)(words, key=key)
    vals = [w & 0x7fffffff if "abs" in mods else w for w in words]
    nans = [w for w in vals if w & 0x7fffffff > 0x7f800000]
    vals = [w for w in vals if w & 0x7fffffff <= 0x7f800000]
    if not vals or (nans and "NaN" in mods):
        return 0x7fffffff
    return (max if op == "max" else min)(vals, key=lambda w: (f32(w), w >> 31 == 0))


def red_case(root):
    rnd = random.Random(701)
    pool = [0x80000000, 0, 0x7f800000, 0xff800000, 0x40100000, 0xc0600000, 0x3f800000, 0xbf800000, 0x00000001]
    mem = [[rnd.choice(pool) if c < 20 else rnd.getrandbits(32) for c in range(64)] for _ in range(32)]
    for lane in range(32):
        if lane % 5 == 0:
            mem[lane][1] = 0x7fc00000  # ignored by min
        if lane % 7 == 0:
            mem[lane][13] = 0xffc00001  # wins with .NaN
        if lane % 9 == 3:
            mem[lane][16] = mem[lane][17] = 0x7fc00000  # all NaN: the canonical NaN
        if lane % 4 == 1:
            mem[lane][4] = 0xff800000  # -inf: the largest magnitude under .abs
    # (first column, shape, num, op, type, modifiers, immHalfSplitoff)
    forms = [(0, "32x32b", 4, "min", "f32", "", None), (4, "32x32b", 8, "max", "f32", ".abs", None),
             (12, "32x32b", 4, "min", "f32", ".NaN", None), (16, "32x32b", 2, "max", "f32", ".abs.NaN", None),
             (20, "16x32bx2", 4, "max", "s32", "", 8), (40, "32x32b", 8, "min", "u32", "", None),
             (48, "16x32bx2", 2, "min", "s32", "", 12)]
    steps, out = [], [[] for _ in range(32)]
    for col, shape, num, op, typ, mods, imm in forms:
        extra = f", {imm}" if imm is not None else ""
        steps.append((col, f"tcgen05.ld.red.sync.aligned.{shape}.x{num}.{op}{mods}.{typ} {regs(num)}, %r6, [%r5]"
                      f"{extra};", num))
        for t in range(32):
            lane, first = (t, col) if imm is None else (t % 16, col + (imm if t >= 16 else 0))
            words = [mem[lane][first + r] for r in range(num)]
            out[t] += words + [reduce_words(words, op, typ, mods)]
    name = "tcgen05_ld_red"
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    data = {"in.bin": b"".join(struct.pack("<64I", *row) for row in mem),
            "out.expect.bin": b"".join(struct.pack(f"<{len(row)}I", *row) for row in out)}
    for fname, blob in data.items():
        with open(os.path.join(d, fname), "wb") as f:
            f.write(blob)
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(red_kernel(steps))
    c = {"name": f"tcgen05/{name}", "description": "tcgen05.ld.red against the ISA's min/max", "ptx": "kernel.ptx",
         "entry": "k_red", "min_sm": 103, "grid": [1, 1, 1], "block": [32, 1, 1], "dynamic_shared_bytes": 0,
         "params": [{"type": "u64", "buffer": "in"}, {"type": "u64", "buffer": "out"}],
         "buffers": {"in": {"bytes": len(data["in.bin"]), "init": "in.bin"},
                     "out": {"bytes": len(data["out.expect.bin"]), "init": {"fill_byte": 205},
                             "expect": "out.expect.bin", "compare": {"as": "u32"}}}}
    write_single_case(root, name, c, min_sm=103, ptx_version="8.8", target="sm_103a")


root = sys.argv[1]
if sys.argv[2:] == ["red"]:
    red_case(root)
    sys.exit(0)
mem = {(l, c): l << 16 | c for l in range(32) for c in range(64)}
steps, expect = [], []
for shape, num, lane0, col0, imm in [("16x64b", 4, 0, 4, 0), ("16x128b", 2, 16, 8, 0), ("16x256b", 2, 0, 16, 0),
                                     ("16x32bx2", 2, 16, 40, 16)]:
    n, where = cells(shape, num, lane0, col0, imm)
    extra = f", {imm}" if shape == "16x32bx2" else ""
    steps.append((addr(lane0, col0)[0:1] + [f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32 {regs(n)}, [%r5]{extra};",
                                            "tcgen05.wait::ld.sync.aligned;"], n))
    expect.append([[mem[where[t, r]] for r in range(n)] for t in range(32)])
for shape, num, lane0, col0 in [("16x256b", 1, 16, 48), ("16x64b", 2, 0, 60)]:
    n, where = cells(shape, num, lane0, col0, 0)
    for t in range(32):
        for r in range(n):
            mem[where[t, r]] = 0x8000 | t << 8 | r
    text = ["shl.b32 %r6, %r1, 8;"] + [f"or.b32 %v{r}, %r6, {0x8000 | r};" for r in range(n)]
    text += addr(lane0, col0)[0:1] + [f"tcgen05.st.sync.aligned.{shape}.x{num}.b32 [%r5], {regs(n)};",
                                      "tcgen05.wait::st.sync.aligned;"]
    steps.append((text, 0))
# every lane reads back columns 48..63 of its own lane
steps.append((addr(0, 48)[0:1] + ["tcgen05.ld.sync.aligned.32x32b.x8.b32 " + regs(8) + ", [%r5];",
                                  "tcgen05.wait::ld.sync.aligned;"], 8))
expect.append([[mem[t, 48 + c] for c in range(8)] for t in range(32)])
steps.append((addr(0, 56)[0:1] + ["tcgen05.ld.sync.aligned.32x32b.x8.b32 " + regs(8) + ", [%r5];",
                                  "tcgen05.wait::ld.sync.aligned;"], 8))
expect.append([[mem[t, 56 + c] for c in range(8)] for t in range(32)])


def packed(lane, col):
    return mem[lane, col] & 0xffff | (mem[lane, col + 1] & 0xffff) << 16


for shape, num, lane0, col0, imm in [("16x128b", 2, 0, 20, 0), ("32x32b", 4, 0, 2, 0), ("16x32bx2", 2, 16, 24, 4)]:
    n, where = cells(shape, num, lane0, col0, imm, pack=True)
    extra = f", {imm}" if shape == "16x32bx2" else ""
    steps.append((addr(lane0, col0)[0:1] + [f"tcgen05.ld.sync.aligned.{shape}.x{num}.pack::16b.b32 {regs(n)}, [%r5]"
                                            f"{extra};", "tcgen05.wait::ld.sync.aligned;"], n))
    expect.append([[packed(*where[t, r]) for r in range(n)] for t in range(32)])
n, where = cells("16x64b", 2, 16, 0, 0, pack=True)
for t in range(32):  # register r: 0xb000 | lane << 4 | r high, 0xa000 | lane << 4 | r low; only halves compared
    for r in range(n):
        lane, col = where[t, r]
        mem[lane, col], mem[lane, col + 1] = 0xa000 | t << 4 | r, 0xb000 | t << 4 | r
text = ["shl.b32 %r6, %r1, 4;", "shl.b32 %r7, %r6, 16;", "or.b32 %r7, %r7, %r6;"]
text += [f"or.b32 %v{r}, %r7, {(0xb000 | r) << 16 | 0xa000 | r};" for r in range(n)]
text += addr(16, 0)[0:1] + [f"tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32 [%r5], {regs(n)};",
                            "tcgen05.wait::st.sync.aligned;"]
steps.append((text, 0))
steps.append((addr(0, 0)[0:1] + ["tcgen05.ld.sync.aligned.32x32b.x8.pack::16b.b32 " + regs(8) + ", [%r5];",
                                 "tcgen05.wait::ld.sync.aligned;"], 8))
expect.append([[packed(t, 2 * c) for c in range(8)] for t in range(32)])
words = sum(s[1] for s in steps)
out = b"".join(struct.pack(f"<{len(row)}I", *row) for t in range(32) for row in (sum((e[t] for e in expect), []),))
assert len(out) == 4 * 32 * words
name = "tcgen05_ldst_shapes"
d = os.path.join(root, name)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "out.expect.bin"), "wb") as f:
    f.write(out)
with open(os.path.join(d, "kernel.ptx"), "w") as f:
    f.write(kernel(steps))
c = {"name": f"tcgen05/{name}", "description": "tcgen05.ld/st shapes against CUTLASS's TMEM layouts",
     "ptx": "kernel.ptx", "entry": "k_ldst", "min_sm": 100, "grid": [1, 1, 1], "block": [32, 1, 1],
     "dynamic_shared_bytes": 0, "params": [{"type": "u64", "buffer": "out"}],
     "buffers": {"out": {"bytes": len(out), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                         "compare": {"as": "u32"}}}}
write_single_case(root, name, c)
