"""Writes conformance-format cases (../shared/conformance/FORMAT.md) of sm_120a's mma.sync kinds into the directory
argv[1]: m16n8k32 .kind::f8f6f4 (no scales) and .kind::mxf8f6f4.block_scale.scale_vec::1X over e4m3/e5m2/e3m2/e2m3/
e2m1 operands, one byte per element (e3m2/e2m3 in bits 0-5, e2m1 in bits 2-5), and m16n8k64 .kind::mxf4 /
.kind::mxf4nvf4 .block_scale over e2m1 packed two to a byte, with ue8m0 scales; one .kind::f8f6f4 case has f16 C
and D. One warp: lane l loads its A, B and C registers and its two scale words from in[12 l ...] and stores D to
out[4 l ...].

The expected D is computed here from the definitions: the fragments are CuTe layouts (CUTLASS's
SM80_16x8x32_TN and SM120_16x8x64_TN A/B layouts, SM80_16x8_Row for C and D: thread and value coordinates to a
column-major index), the scales CUTLASS's SM120 block-scaled SFA/SFB layouts, whose stride-0 thread mode is the
one thread-id picks, block j's scale in byte byte-id + j. Values are small (fp8 magnitudes in [1/8, 8], scales
2^-3..2^3), so the sum of each row-column product is exact in a double and D is its one rounding to f32 (f16)."""
import json
import os
import random
import struct
import sys
from fractions import Fraction

from cute_layout import layout
from case_files import write_index

M, N = 16, 8


A32 = (((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))  # (thread, value) -> m + 16 k
B32 = (((4, 8), (4, 2)), ((32, 1), (8, 128)))  # -> n + 8 k
A64 = (((4, 8), (8, 2, 2)), ((128, 1), (16, 8, 512)))
B64 = (((4, 8), (8, 2)), ((64, 1), (8, 256)))
CROW = (((4, 8), (2, 2)), ((32, 1), (16, 8)))  # -> m + 16 n


def at(lay, t, v):
    (ts, vs), (td, vd) = lay
    return layout(ts, td, t) + layout(vs, vd, v)


def mini(bits, e, m):
    sign = bits >> (e + m) & 1
    ex, man = bits >> m & ((1 << e) - 1), bits & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    v = Fraction(man, 1 << m) * Fraction(2) ** (1 - bias) if ex == 0 else \
        (1 + Fraction(man, 1 << m)) * Fraction(2) ** (ex - bias)
    return -v if sign else v


FMT = {"e4m3": (4, 3), "e5m2": (5, 2), "e3m2": (3, 2), "e2m3": (2, 3), "e2m1": (2, 1)}
SHIFT = {"e2m1": 2}  # where the value sits in its byte (f8f6f4 kinds)


def element(rnd, t):
    """Random (code, value): the value's bits (no byte placement yet) with a magnitude in [1/8, 8] or zero."""
    e, m = FMT[t]
    while True:
        code = rnd.getrandbits(1 + e + m)
        v = mini(code, e, m)
        if v == 0 or Fraction(1, 8) <= abs(v) <= 8:
            return code, v


def f32(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def f16(x):
    return struct.unpack("<H", struct.pack("<e", float(x)))[0]


def kernel(instr):
    return "\n".join([
        ".version 8.7", ".target sm_120a", ".address_size 64", "",
        ".visible .entry k_mma(.param .u64 p_in, .param .u64 p_out)", "{",
        "\t.reg .b32 %a<4>, %b<2>, %f<4>, %d<4>, %sa, %sb, %r<2>;", "\t.reg .b64 %rd<5>;",
        "\tld.param.u64 %rd1, [p_in];", "\tld.param.u64 %rd2, [p_out];", "\tcvta.to.global.u64 %rd1, %rd1;",
        "\tcvta.to.global.u64 %rd2, %rd2;", "\tmov.u32 %r0, %tid.x;", "\tmul.wide.u32 %rd3, %r0, 48;",
        "\tadd.u64 %rd1, %rd1, %rd3;", "\tmul.wide.u32 %rd4, %r0, 16;", "\tadd.u64 %rd2, %rd2, %rd4;",
        "\tld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd1];", "\tld.global.v2.b32 {%b0, %b1}, [%rd1+16];",
        "\tld.global.v2.b32 {%sa, %sb}, [%rd1+24];", "\tld.global.v4.b32 {%f0, %f1, %f2, %f3}, [%rd1+32];",
        "\tmov.b32 %d2, 0;", "\tmov.b32 %d3, 0;", "\t" + instr, "\tst.global.v4.b32 [%rd2], {%d0, %d1, %d2, %d3};",
        "\tret;", "}", ""])


def case(root, name, kind, ta, tb, vec, ids, seed, acc="f32", stype="ue8m0"):
    """kind: f8f6f4, mxf8f6f4, mxf4 or mxf4nvf4; vec: scales per row/column (0: none); ids: (byte-id-a,
    thread-id-a, byte-id-b, thread-id-b); acc: the C and D type (f16: two to a register, D's unused words 0); stype:
    the scales' type, ue8m0 or (mxf4nvf4 4X) ue4m3, an e4m3 without sign bit."""
    rnd = random.Random(seed)
    packed = kind.startswith("mxf4")
    k = 64 if packed else 32
    A = [[element(rnd, ta) for _ in range(k)] for _ in range(M)]
    B = [[element(rnd, tb) for _ in range(N)] for _ in range(k)]
    C = [[Fraction(rnd.randrange(-16, 17), 8) for _ in range(N)] for _ in range(M)]
    sa = [rnd.getrandbits(32) for _ in range(32)]  # every lane's scale words; only the selected lanes' bytes count
    sb = [rnd.getrandbits(32) for _ in range(32)]
    for w in (sa, sb):  # every byte a scale in 2^-3..2^3 (ue4m3: mantissas too), as harmless unread as read
        for lane in range(32):
            w[lane] = sum((124 + rnd.randrange(7) if stype == "ue8m0" else rnd.randrange(32, 88)) << (8 * i)
                          for i in range(4))
    bits, per = (4, 8) if packed else (8, 4)
    la, lb = (A64, B64) if packed else (A32, B32)
    regs = [[0] * 12 for _ in range(32)]
    for t in range(32):
        for v in range(32 if packed else 16):
            i = at(la, t, v)
            m, kk = i % M, i // M
            regs[t][v // per] |= (A[m][kk][0] << (0 if packed else SHIFT.get(ta, 0))) << (bits * (v % per))
        for v in range(16 if packed else 8):
            i = at(lb, t, v)
            n, kk = i % N, i // N
            regs[t][4 + v // per] |= (B[kk][n][0] << (0 if packed else SHIFT.get(tb, 0))) << (bits * (v % per))
        regs[t][6], regs[t][7] = sa[t], sb[t]
        for v in range(4):
            i = at(CROW, t, v)
            if acc == "f16":
                regs[t][8 + v // 2] |= f16(C[i % M][i // M]) << (16 * (v % 2))
            else:
                regs[t][8 + v] = f32(C[i % M][i // M])
    # The scales: SFA (thread, value) -> m + 16 k over threads (2, 2, 8) : (8, 0, 1), the middle mode thread-id's;
    # SFB threads (4, 8) : (0, 1), the first mode thread-id's.
    bida, tida, bidb, tidb = ids

    def ue8m0(word, j, bid):
        byte = word >> (8 * ((bid + j) % 4)) & 255
        return Fraction(2) ** (byte - 127) if stype == "ue8m0" else mini(byte, 4, 3)
    scale_a = [[Fraction(1)] * max(vec, 1) for _ in range(M)]
    scale_b = [[Fraction(1)] * max(vec, 1) for _ in range(N)]
    if vec:
        for t0 in range(2):
            for t2 in range(8):
                m = 8 * t0 + t2
                lane = t0 + 2 * tida + 4 * t2
                scale_a[m] = [ue8m0(sa[lane], j, bida) for j in range(vec)]
        for n in range(8):
            scale_b[n] = [ue8m0(sb[tidb + 4 * n], j, bidb) for j in range(vec)]
    span = k // max(vec, 1)
    D = [[C[m][n] + sum(A[m][kk][1] * scale_a[m][kk // span] * B[kk][n][1] * scale_b[n][kk // span]
                        for kk in range(k)) for n in range(N)] for m in range(M)]
    out = [0] * 128
    for t in range(32):
        for v in range(4):
            i = at(CROW, t, v)
            if acc == "f16":
                out[4 * t + v // 2] |= f16(D[i % M][i // M]) << (16 * (v % 2))
            else:
                out[4 * t + v] = f32(D[i % M][i // M])
    shape = "m16n8k64" if packed else "m16n8k32"
    frags = "{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3}"
    if acc == "f16":
        frags = "{%d0, %d1}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1}"
    if vec:
        instr = (f"mma.sync.aligned.kind::{kind}.block_scale.scale_vec::{vec}X.{shape}.row.col.f32.{ta}.{tb}.f32.{stype} "
                 f"{frags}, %sa, {{{bida}, {tida}}}, %sb, {{{bidb}, {tidb}}};")
    else:
        instr = f"mma.sync.aligned.kind::{kind}.{shape}.row.col.{acc}.{ta}.{tb}.{acc} {frags};"
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "in.bin"), "wb") as f:
        f.write(b"".join(struct.pack("<12I", *r) for r in regs))
    with open(os.path.join(d, "out.expect.bin"), "wb") as f:
        f.write(struct.pack("<128I", *out))
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(kernel(instr))
    c = {"name": f"mma_kind/{name}", "description": f"{instr.split(' ')[0]}: D from the ISA's definitions",
         "ptx": "kernel.ptx", "entry": "k_mma", "min_sm": 120, "grid": [1, 1, 1], "block": [32, 1, 1],
         "dynamic_shared_bytes": 0, "params": [{"type": "u64", "buffer": "in"}, {"type": "u64", "buffer": "out"}],
         "buffers": {"in": {"bytes": 32 * 48, "init": "in.bin"},
                     "out": {"bytes": 512, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                             "compare": {"as": "u32" if acc == "f16" else "f32"}}}}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(c, f, indent=1)
    return [{"name": c["name"], "dir": name, "min_sm": 120, "ptx_version": "8.7", "target": "sm_120a",
             "description": c["description"]}]


root = sys.argv[1]
cases = case(root, "f8f6f4_e2m1_e3m2", "f8f6f4", "e2m1", "e3m2", 0, (0, 0, 0, 0), 501) + \
    case(root, "f8f6f4_e4m3_e2m3", "f8f6f4", "e4m3", "e2m3", 0, (0, 0, 0, 0), 502) + \
    case(root, "f8f6f4_e3m2_e2m1_f16", "f8f6f4", "e3m2", "e2m1", 0, (0, 0, 0, 0), 508, "f16") + \
    case(root, "mxf8f6f4_e2m3_e4m3_ids", "mxf8f6f4", "e2m3", "e4m3", 1, (1, 1, 3, 2), 503) + \
    case(root, "mxf8f6f4_e5m2_e2m1", "mxf8f6f4", "e5m2", "e2m1", 1, (0, 0, 0, 0), 504) + \
    case(root, "mxf8f6f4_e3m2_e5m2", "mxf8f6f4", "e3m2", "e5m2", 1, (2, 0, 1, 3), 505) + \
    case(root, "mxf4_2x", "mxf4", "e2m1", "e2m1", 2, (2, 1, 0, 1), 506) + \
    case(root, "mxf4nvf4_2x", "mxf4nvf4", "e2m1", "e2m1", 2, (0, 0, 2, 0), 507) + \
    case(root, "mxf4nvf4_4x_ue4m3", "mxf4nvf4", "e2m1", "e2m1", 4, (0, 1, 0, 3), 509, stype="ue4m3")
write_index(root, cases)
