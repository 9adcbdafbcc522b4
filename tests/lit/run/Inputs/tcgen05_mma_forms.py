"""Writes conformance-format cases (../shared/conformance/FORMAT.md) of tcgen05.mma's forms beyond M = 128 with both
operands in shared memory into the directory argv[1]: M = 64, the weight-stationary .ws forms (M = 32, 64, 128) with
collector buffer modifiers, A in Tensor Memory ([a-tmem]), disable-output-lane and scale-input-d. Four warps fill
128 lanes x 128 columns of Tensor Memory from a buffer (D's cells from column 0, A's rows at column 64 in the lanes
of D's rows), thread 0 runs the mma twice (enable-input-d false, then true) and commits to an mbarrier, and every
warp reads its 32 lanes back. The expected image is computed here: D's rows and columns go where CuTe's tmem_frg
atoms (the ISA's data-path layouts D, E, F and G) put them, a lane the mask names keeps its value, and the second
product adds D * 2^-scale-input-d. Operands are multiples of 1/8 (or bytes for i8), so every sum is exact. The plain
M = 64 case has a wgmma twin (m64nNk16, sm_90a, GPU-verified) on the same shared-memory image. Two cases have an
f16 D: each element in the low half of its column (CuTe's tmem_frg of 16-bit values in 32-bit storage). Three .ws
cases pass a zero-column-mask-desc (the ISA's worked examples 2, 3 and 4, whose masks zero_column_mask must
reproduce, with a column shift): column c of D reads column c + shift of B, or zeros where the mask's bit c is set;
each has a twin without the descriptor whose B already holds those columns (zeroed and shifted), which must give the
same D."""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cute_layout import layout  # noqa: E402
from tcgen05_mma import TCGEN, copy_image, element, place, wgmma_kernel  # noqa: E402
from hopper import e4m3_value  # noqa: E402  (tcgen05_mma put the conformance cases' helpers on the path)
from case_files import write_index  # noqa: E402

LANES, COLS, A_COL = 128, 128, 64
SFA_COL, SFB_COL = 96, 100  # block-scaled cases: scale_A's four columns (M = 128), scale_B's N / 32
META_COL = 112  # sparse cases: the metadata's columns
NBYTES = {"f16": 2, "tf32": 4, "i8": 1, "e4m3": 1, "e2m3": 1, "e3m2": 1, "e2m1": 1}
# kind::f8f6f4's fp6 and fp4 types: exponent bits, mantissa bits, the instruction descriptor's type code
NARROW = {"e2m3": (2, 3, 3), "e3m2": (3, 2, 4), "e2m1": (2, 1, 5)}
TYPE_CODE = {"f16": 0, "tf32": 2, "i8": 1, "e4m3": 0, "e2m3": 3, "e3m2": 4, "e2m1": 5}


def mini_value(bits, e, m):
    """A sign-magnitude float of e exponent bits (bias 2^(e-1) - 1) and m mantissa bits, no infinities or NaN."""
    ex, f = bits >> m & (1 << e) - 1, bits & (1 << m) - 1
    v = (1 + f / 2 ** m) * 2.0 ** (ex - (2 ** (e - 1) - 1)) if ex else f / 2 ** m * 2.0 ** (2 - 2 ** (e - 1))
    return -v if bits >> (e + m) & 1 else v


def any_element(rnd, kind):
    """element() of tcgen05_mma, and for the fp6/fp4 types any code with its value (each exact in e4m3 too)."""
    if kind not in NARROW:
        return element(rnd, kind)
    e, m, _ = NARROW[kind]
    b = rnd.getrandbits(1 + e + m)
    return b, mini_value(b, e, m)


def packed_rows(rows, kind):
    """Rows of fp6/fp4 (code, value) elements as shared memory holds them for kind::f8f6f4: each 16 elements packed
    from bit 0 of 16 bytes (.b6x16_p32 / .b4x16_p64, the padding after them), as (byte, None) in the 8-bit layout."""
    if kind not in NARROW:
        return rows
    width = 1 + NARROW[kind][0] + NARROW[kind][1]
    out = []
    for row in rows:
        data = []
        for g in range(0, len(row), 16):
            bits = sum(row[g + i][0] << width * i for i in range(16))
            data += [(b, None) for b in bits.to_bytes(16, "little")]
        out.append(data)
    return out


def d_atom(m, n, fold):
    """CuTe's tmem_frg atom for a CTA's M x N part of D, (row, column) -> lane + 128 column: M = 128 all lanes
    (layouts A and D), M = 64 the first 16 lanes of each warp's 32 (F); folded (.ws, a cta_group::2 pair's
    tmem_frg_2sm) M = 64 and 32 N's halves or quarters on the next lanes (B, E, G)."""
    if m == 128:
        return (128, n), (1, 128)
    if not fold:
        return ((16, 4), n), ((1, 32), 128)
    f = 128 // m
    return (m, (n // f, f)), (1, (128, m))


def d_cell(m, n, ws, pair, r, c):
    """(lane of the CTAs' lanes, 128 per CTA, column) of element (r, c) of D; a pair's CTA v holds rows v M/2.."""
    mc = m // (2 if pair else 1)
    shape, stride = d_atom(mc, n, ws or pair)
    i = layout(shape, stride, r % mc + mc * c)
    return 128 * (r // mc) + i % 128, i // 128


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def pattern(kind, lane, col, half):
    """What the kernel stores in a cell before the products: distinct, exact values of D's type; for an f16 D words
    whose high half is zero, as the product leaves it (so whether it writes or keeps that half does not matter)."""
    if kind == "i8" or half:
        return (lane * 128 + col) & 0xffff if half else lane * 1000 + col
    return f32_bits(lane - 64 + col / 128)


def zero_column_desc(sc, fs, skip, use, shift, nonzero=1):
    """The 64-bit zero-column mask descriptor (the ISA's table): start counts, first spans, non-zero mask, skip
    span, use span and column shift."""
    return (sum(c << 8 * i for i, c in enumerate(sc)) | sum(f << 32 + i for i, f in enumerate(fs)) | nonzero << 39 |
            skip << 40 | use << 48 | shift << 56)


def zero_column_mask(z, m, n):
    """The N mask bits (a set bit zeroes that column of B) as the ISA's worked examples read its table: 128 / M
    sub-masks of N M / 128 bits, sub-mask i starting with First Span i, Start Count i of its bits skipped, then runs
    of Skip Span + 1 ones and Use Span + 1 zeros."""
    if not z >> 39 & 1:
        return [0] * n
    width, ones, zeros = n * m // 128, (z >> 40 & 255) + 1, (z >> 48 & 255) + 1
    bits = []
    for c in range(n):
        i = c // width
        q = (c % width + (z >> 8 * i & 255)) % (ones + zeros)
        bits.append(int(q < ones) if z >> 32 + i & 1 else int(q >= zeros))
    return bits


def lsb_first(text):
    """A mask the ISA writes most significant bit first ("0b ... 111 0000") as bits from bit 0 up."""
    return [int(b) for b in reversed(text.replace(" ", ""))]


# The ISA's examples 2-4 (sub-masks as it prints them, their high bits elided): the generator must agree.
assert zero_column_mask(zero_column_desc([0] * 4, [0] * 4, 2, 3, 0), 128, 64)[:14] == lsb_first("111 0000 111 0000")
EX3 = zero_column_mask(zero_column_desc([0, 0, 0, 0], [1, 0, 0, 0], 2, 3, 0), 64, 64)
assert EX3[:17] == lsb_first("111 0000 111 0000 111") and EX3[32:50] == lsb_first("0000 111 0000 111 0000")
EX4 = zero_column_mask(zero_column_desc([0, 1, 2, 1], [1, 1, 0, 0], 2, 3, 2), 32, 64)
assert EX4[:14] == lsb_first("0000 111 0000 111") and EX4[16:29] == lsb_first("0000 111 0000 11")
assert EX4[32:44] == lsb_first("111 0000 111 00") and EX4[48:61] == lsb_first("111 0000 111 000")


def mma_text(kind, ws, a_tmem, mask, scale, mods, pair=False, zcm=False):
    ptx_kind = "f8f6f4" if kind == "e4m3" or kind in NARROW else kind
    ops = ["[%r9]", "[%r20]" if a_tmem else "%rd5", "%rd6", "%r11"]
    if mask is not None:
        ops.append("{%r30, %r31, %r32, %r33}")
    ops.append("%p1")
    if scale is not None:
        ops.append(str(scale))
    if zcm:
        ops.append("%rd13")
    return f"tcgen05.mma{'.ws' if ws else ''}.cta_group::{2 if pair else 1}.kind::{ptx_kind}{mods} " + ", ".join(ops) + ";"


def regs(first, count):
    return ", ".join(f"%d{i}" for i in range(first, first + count))


def forms_kernel(instr, mask, pair=False, zcm=False, scales=False, meta=False):
    """pair: a cluster of two CTAs (a cta_group::2 pair): CTA r takes its image, fill and output rows at r times
    their size, both allocate together, cluster barriers order them, and rank 0's thread 0 runs the product and
    commits to both CTAs' mbarriers."""
    group = 2 if pair else 1
    sync = ["\tbarrier.cluster.arrive.aligned;", "\tbarrier.cluster.wait.aligned;"] if pair else ["\tbar.sync 0;"]
    L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
         ".visible .entry k_forms(.param .u64 p_img, .param .u64 p_out, .param .u64 p_adesc, .param .u64 p_bdesc, "
         ".param .u32 p_idesc, .param .u64 p_pre" + (", .param .u64 p_zcm" if zcm else "") + ")" +
         (" .reqnctapercluster 2, 1, 1" if pair else ""), "{",
         "\t.reg .pred %p<6>;", "\t.reg .b32 %r<40>, %d<128>;", "\t.reg .b16 %rs<2>;",
         "\t.reg .b64 %rd<16>;", "\t.shared .align 1024 .b8 s_img[16384];", "\t.shared .align 8 .b64 s_bar;",
         "\t.shared .align 4 .b32 s_taddr;", "\tmov.u32 %r1, %tid.x;",
         "\tmov.u32 %r25, %cluster_ctarank;" if pair else "\tmov.u32 %r25, 0;", "\tmad.lo.u32 %r26, %r25, 128, %r1;",
         "\tld.param.u64 %rd1, [p_img];", "\tcvta.to.global.u64 %rd1, %rd1;", "\tmul.wide.u32 %rd9, %r25, 16384;",
         "\tadd.u64 %rd1, %rd1, %rd9;", "\tmov.u32 %r2, s_img;", *copy_image(16384, 512),
         "\tfence.proxy.async.shared::cta;", "\tmov.u32 %r6, s_taddr;", "\tmov.u32 %r7, s_bar;",
         "\tshr.u32 %r8, %r1, 5;", "\tsetp.ne.u32 %p2, %r8, 0;", "\t@%p2 bra $L_allocated;",
         f"\ttcgen05.alloc.cta_group::{group}.sync.aligned.shared::cta.b32 [%r6], {COLS};", "$L_allocated:",
         "\tsetp.ne.u32 %p3, %r1, 0;", "\t@%p3 bra $L_inited;", "\tmbarrier.init.shared::cta.b64 [%r7], 1;",
         "$L_inited:", "\ttcgen05.fence::before_thread_sync;"] + sync + ["\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.b32 %r9, [%r6];", "\tshl.b32 %r12, %r8, 21;", "\tadd.u32 %r13, %r9, %r12;",
         # thread t fills lane t from row t of p_pre (COLS words), then every product starts from that image
         "\tld.param.u64 %rd7, [p_pre];", "\tcvta.to.global.u64 %rd7, %rd7;", f"\tmul.wide.u32 %rd8, %r26, {4 * COLS};",
         "\tadd.u64 %rd7, %rd7, %rd8;"]
    L += [f"\tld.global.v4.b32 {{{regs(4 * q, 4)}}}, [%rd7+{16 * q}];" for q in range(COLS // 4)]
    L += [f"\ttcgen05.st.sync.aligned.32x32b.x{COLS}.b32 [%r13], {{{regs(0, COLS)}}};",
          "\ttcgen05.wait::st.sync.aligned;", "\ttcgen05.fence::before_thread_sync;"] + sync + [
          "\ttcgen05.fence::after_thread_sync;", "\tor.b32 %r27, %r1, %r25;", "\tsetp.ne.u32 %p4, %r27, 0;",
          "\t@%p4 bra $L_issued;", "\tshr.u32 %r10, %r2, 4;",
          "\tcvt.u64.u32 %rd4, %r10;", "\tld.param.u64 %rd5, [p_adesc];", "\tadd.u64 %rd5, %rd5, %rd4;",
          "\tld.param.u64 %rd6, [p_bdesc];", "\tadd.u64 %rd6, %rd6, %rd4;", "\tld.param.u32 %r11, [p_idesc];",
          f"\tadd.u32 %r20, %r9, {A_COL};"] + (["\tld.param.u64 %rd13, [p_zcm];"] if zcm else []) + (
          [f"\tadd.u32 %r21, %r9, {SFA_COL};", f"\tadd.u32 %r22, %r9, {SFB_COL};"] if scales else []) + (
          [f"\tadd.u32 %r23, %r9, {META_COL};"] if meta else [])
    L += [f"\tmov.b32 %r{30 + j}, {w};" for j, w in enumerate(mask or [])]
    L += ["\tsetp.ne.u32 %p1, %r1, %r1;", f"\t{instr}", "\tsetp.eq.u32 %p1, %r1, %r1;", f"\t{instr}",
          "\tmov.u16 %rs1, 3;",
          "\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r7], %rs1;"
          if pair else "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r7];",
          "$L_issued:", "$L_wait:",
          "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r7], 0;", "\t@!%p1 bra $L_wait;",
          "\ttcgen05.fence::after_thread_sync;", f"\ttcgen05.ld.sync.aligned.32x32b.x{COLS}.b32 {{{regs(0, COLS)}}}, "
          "[%r13];", "\ttcgen05.wait::ld.sync.aligned;", "\tld.param.u64 %rd7, [p_out];",
          "\tcvta.to.global.u64 %rd7, %rd7;", "\tadd.u64 %rd7, %rd7, %rd8;"]
    L += [f"\tst.global.v4.b32 [%rd7+{16 * q}], {{{regs(4 * q, 4)}}};" for q in range(COLS // 4)]
    L += ["\ttcgen05.fence::before_thread_sync;"] + sync + ["\t@%p2 bra $L_end;",
          f"\ttcgen05.dealloc.cta_group::{group}.sync.aligned.b32 %r9, {COLS};",
          f"\ttcgen05.relinquish_alloc_permit.cta_group::{group}.sync.aligned;", "$L_end:", "\tret;", "}", ""]
    return "\n".join(L)


def expected_image(kind, m, n, ws, pair, A, B, pre, mask, scale, half, zcm=None):
    """Tensor Memory after the two products: D = A B, then D = A B + D 2^-scale (2 A B for i8); an f16 D (half) in
    its columns' low halves. With a zero-column mask descriptor column c reads column c + shift of B, or zeros."""
    img = [row[:] for row in pre]
    k = len(A[0])
    zero = zero_column_mask(zcm, m, n) if zcm is not None else [0] * n
    shift = zcm >> 56 & 63 if zcm is not None else 0
    for r in range(m):
        for c in range(n):
            lane, col = d_cell(m, n, ws, pair, r, c)
            if mask and mask[lane // 32] >> (lane % 32) & 1:
                continue
            p = 0 if zero[c] else sum(A[r][kk][1] * B[c + shift][kk][1] for kk in range(k))
            if kind == "i8":
                img[lane][col] = (2 * p) & 0xffffffff
            elif half:  # A B is exact in f16 (a multiple of 1/64 below 16 in magnitude); the sum rounds once
                img[lane][col] = struct.unpack("<H", struct.pack("<e", p + p * 2.0 ** -(scale or 0)))[0]
            else:
                img[lane][col] = f32_bits(p + p * 2.0 ** -(scale or 0))
    return img


def a_words(A, nb):
    """A row's K elements packed into 32-bit Tensor Memory columns from the low byte up."""
    data = b"".join(v[0].to_bytes(nb, "little") for v in A)
    return [int.from_bytes(data[4 * i:4 * i + 4], "little") for i in range(len(data) // 4)]


def write_case(root, tag, ptx, entry, threads, params, buffers, files, ctas=1):
    d = os.path.join(root, tag)
    os.makedirs(d, exist_ok=True)
    for fname, data in files.items():
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(ptx)
    target, sm = ("sm_90a", 90) if "wgmma" in tag else ("sm_100a", 100)
    c = {"name": f"tcgen05/{tag}", "description": f"{tag}: the ISA's data-path layouts", "ptx": "kernel.ptx",
         "entry": entry, "min_sm": sm, "grid": [ctas, 1, 1], "block": [threads, 1, 1], "dynamic_shared_bytes": 0,
         "params": params, "buffers": buffers}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(c, f, indent=1)
    return {"name": c["name"], "dir": tag, "min_sm": sm, "ptx_version": "8.7", "target": target,
            "description": c["description"]}


def images(A, B, k, nb, codes, ctas, kb=None):
    """The CTAs' shared-memory images, CTA v's holding its share of A's rows and B's columns (the same descriptors
    for each); with the layouts' (LBO, SBO) of A and B. kb: B's K where it differs from A's (a sparse A)."""
    img = bytearray(16384 * ctas)
    for v in range(ctas):
        ma, nb_ = len(A) // ctas, len(B) // ctas
        part = bytearray(16384)
        offs = place(part, 0, ma, k, codes[0], A[v * ma:(v + 1) * ma], nb)
        offs += place(part, 8192, nb_, kb or k, codes[1], B[v * nb_:(v + 1) * nb_], nb)
        img[16384 * v:16384 * (v + 1)] = part
    return img, offs


def case(root, name, kind, m, n, ws=False, a_tmem=False, mask=None, scale=None, mods="", codes=(0, 0), seed=0,
         half=False, pair=False, zcm=None, operands=None, kind_b=None):
    """zcm: a .ws zero-column mask descriptor; B then has N + shift columns, and a second case (NAME_nozcm) runs the
    plain .ws product on a B whose column c is what the mask makes column c (zeros, or column c + shift). kind_b: B's
    type where it differs from A's (kind::f8f6f4's types). A pair's M = 128 with A in Tensor Memory has each CTA's 64
    rows in lanes r and r + 64 (CuTe's TmemAllocMode::Duplicated, the 2x2 datapath reading both halves)."""
    kind_b = kind_b or kind
    nb = NBYTES[kind]
    k = 32 // nb
    ctas = 2 if pair else 1
    rnd = random.Random(seed)
    A = [[any_element(rnd, kind) for _ in range(k)] for _ in range(m)]
    B = [[any_element(rnd, kind_b) for _ in range(k)] for _ in range(n + (zcm >> 56 & 63 if zcm is not None else 0))]
    if operands is not None:
        A, B = operands
    entries = []
    if zcm is not None:
        zero, shift = zero_column_mask(zcm, m, n), zcm >> 56 & 63
        folded = [[(0, 0)] * k if zero[c] else B[c + shift] for c in range(n)]
        entries = case(root, name + "_nozcm", kind, m, n, ws, a_tmem, mask, scale, mods, codes, seed, half, pair,
                       None, (A, folded), kind_b)
    img, (alb, asb, blb, bsb) = images(packed_rows(A, kind), packed_rows(B, kind_b), k, nb, codes, ctas)
    pre = [[pattern(kind, lane % 128, col, half) for col in range(COLS)] for lane in range(LANES * ctas)]
    if a_tmem:
        for r in range(m):
            lane, _ = d_cell(m, n, ws, pair, r, 0)
            for copy in range(2 if pair and m == 128 else 1):
                pre[lane + 64 * copy][A_COL:A_COL + 8] = a_words(A[r], nb)
    out = expected_image(kind, m, n, ws, pair, A, B, pre, mask, scale, half, zcm)

    def desc(start, lbo, sbo, code):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | TCGEN[code] << 61

    atype, btype = TYPE_CODE[kind], TYPE_CODE[kind_b]
    idesc = (2 if kind == "i8" else 0 if half else 1) << 4 | atype << 7 | btype << 10 | (n >> 3) << 17 | (m >> 4) << 24
    words = b"".join(struct.pack("<I", w) for row in out for w in row)
    params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"},
              {"type": "u64", "bits": f"{desc(0, alb, asb, codes[0]):x}"},
              {"type": "u64", "bits": f"{desc(8192, blb, bsb, codes[1]):x}"}, {"type": "u32", "value": idesc}]
    buffers = {"img": {"bytes": len(img), "init": "img.bin"},
               "out": {"bytes": len(words), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}},
               "pre": {"bytes": len(words), "init": "pre.bin"}}
    files = {"img.bin": bytes(img), "out.expect.bin": words,
             "pre.bin": b"".join(struct.pack("<I", w) for row in pre for w in row)}
    ptx = forms_kernel(mma_text(kind, ws, a_tmem, mask, scale, mods, pair, zcm is not None), mask, pair,
                       zcm is not None)
    extra = [{"type": "u64", "buffer": "pre"}] + ([{"type": "u64", "bits": f"{zcm:x}"}] if zcm is not None else [])
    entries += [write_case(root, f"{name}_tcgen05", ptx, "k_forms", 128, params + extra, buffers, files, ctas)]
    if m == 64 and kind not in NARROW and not (ws or a_tmem or mask or scale or half):  # wgmma: rows of D in order
        twin = wgmma_kernel(kind, k).replace("\tor.b64 %rd5, %rd5, %rd11;", f"\tor.b64 %rd5, %rd5, {codes[0] << 62};")
        twin = twin.replace("\tor.b64 %rd6, %rd6, %rd12;", f"\tor.b64 %rd6, %rd6, {codes[1] << 62};")
        twin = twin.replace("\tadd.u32 %r3, %r3, 1024;", "\tadd.u32 %r3, %r3, 512;")  # one warpgroup copies
        fmt = "<i" if kind == "i8" else "<f"
        rows = b"".join(struct.pack(fmt, 2 * sum(A[r][kk][1] * B[c][kk][1] for kk in range(k)))
                        for r in range(m) for c in range(n))
        tbuf = {"img": buffers["img"], "out": dict(buffers["out"], bytes=len(rows))}
        entries.append(write_case(root, f"{name}_wgmma", twin, "k_wgmma", 128, params, tbuf,
                                  {"img.bin": bytes(img), "out.expect.bin": rows}))
    return entries


E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]


def scale_value(bits, ue4m3):
    """A scale factor's value: ue8m0 2^(e - 127), ue4m3 an e4m3 without its sign."""
    return e4m3_value(bits) if ue4m3 else 2.0 ** (bits - 127)


def scaled_operands(rnd, kind, etypes, m, n, k, vec, ue4m3):
    """Random codes of A (m x k) and B (n x k), the value function of each, and the scales (vec a row or column):
    e2m1 nibbles for the fp4 kinds; for mxf8f6f4 e4m3 codes of small multiples of 1/2 or any fp6/fp4 code."""
    def codes(t, rows):
        if kind != "mxf8f6f4":
            return [[rnd.getrandbits(4) for _ in range(k)] for _ in range(rows)]
        if t == "e4m3":
            vals = [-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2]
            code = {v: next(b for b in range(256) if e4m3_value(b) == v and b != 0x80) for v in vals}
            return [[code[rnd.choice(vals)] for _ in range(k)] for _ in range(rows)]
        return [[any_element(rnd, t)[0] for _ in range(k)] for _ in range(rows)]

    def value_of(t):
        if kind != "mxf8f6f4":
            return lambda b: (-1 if b & 8 else 1) * E2M1[b & 7]
        return e4m3_value if t == "e4m3" else lambda b: mini_value(b, NARROW[t][0], NARROW[t][1])

    A, B = codes(etypes[0], m), codes(etypes[1], n)
    choices = [0x30, 0x38, 0x3c, 0x40] if ue4m3 else [126, 127, 128]  # 0.5, 1, 1.5, 2 or 2^-1, 1, 2
    sfa = [[rnd.choice(choices) for _ in range(vec)] for _ in range(m)]
    sfb = [[rnd.choice(choices) for _ in range(vec)] for _ in range(n)]
    return A, B, value_of(etypes[0]), value_of(etypes[1]), sfa, sfb


def sparsify(rnd, A, k, width):
    """Keeps two of each four elements (width 2: pairs) of A's rows where random meaningful nibbles say: the stored
    rows (K/2 wide), the expanded rows (zeros elsewhere) and each row's nibbles."""
    nibbles = [[rnd.choice(META_NIBBLES) for _ in range(k // (4 * width))] for _ in A]
    stored = [row[:k // 2] for row in A]
    dense = [[0] * k for _ in A]
    for r, row in enumerate(nibbles):
        for c, nib in enumerate(row):
            for half in range(2):
                for e in range(width):
                    dense[r][4 * width * c + width * (nib >> 2 * half & 3) + e] = stored[r][2 * width * c + width * half + e]
    return stored, dense, nibbles


def scale_image(pre, m, n, ctas, sfa, sfb, ids, nibbles):
    """Writes each CTA's scale factors (and metadata) into its lanes of pre, as CuTe's tmem_sf_frg lays them out: row i
    of the CTA's A in lane i mod 32 of each partition, column SFA_COL + i / 32; B's columns the same from SFB_COL (the
    4x1 datapath), or for a pair's M = 128 (the 2x2 datapath) each half of N in the two partitions holding that half
    of D, from SFB_COL again. The metadata of the CTA's row r at META_COL in lane r, nibble c at bit 4c."""
    mc = m // ctas
    for v in range(ctas):
        for i in range(mc):
            for p in range(4):
                pre[128 * v + i % 32 + 32 * p][SFA_COL + i // 32] = sum(b << 8 * (ids[0] + j)
                                                                       for j, b in enumerate(sfa[v * mc + i]))
        for c in range(n):
            half, cc = (c // (n // 2), c % (n // 2)) if mc == 64 else (0, c)
            for p in ((2 * half, 2 * half + 1) if mc == 64 else range(4)):
                pre[128 * v + cc % 32 + 32 * p][SFB_COL + cc // 32] = sum(b << 8 * (ids[1] + j)
                                                                         for j, b in enumerate(sfb[c]))
        for r in range(mc if nibbles else 0):
            pre[128 * v + r][META_COL:META_COL + 2] = [0, 0]
            for c, nib in enumerate(nibbles[v * mc + r]):
                pre[128 * v + r][META_COL + (4 * c) // 32] |= nib << (4 * c) % 32


def scaled_case(root, name, kind, n, vec, ue4m3=False, ids=(0, 0), seed=0, twin=False, sparse=False, a_tmem=False,
                etypes=("e4m3", "e4m3"), m=128, pair=False, data=None):
    """A block-scaled tcgen05.mma: kind mxf8f6f4 (K = 32, 1X; e4m3, or fp6/fp4 packed as kind::f8f6f4 packs them),
    mxf4 or mxf4nvf4 (e2m1 two to a byte, K = 64; VEC scales a row, ue8m0 or ue4m3); one CTA at M = 128, or a pair
    (M = 256 on the 4x1 datapath, M = 128 on the 2x2). The scales lie in Tensor Memory as scale_image puts them.
    D = 2 (A scale_A)(B scale_B) after the two products. a_tmem: A from Tensor Memory in the lanes of D's rows (an
    8-bit container an element, e2m1 two to a byte). twin: also the plain kind::f8f6f4 product of A and B with the
    scales folded into their values (exact in e4m3), which must give the same D; for a sparse case the dense
    block-scaled product over K's halves of the expanded A instead; for a pair at M = 256 the two single-CTA
    products of its halves. sparse: tcgen05.mma.sp, K doubled, A's rows 2:4 (mxf8f6f4) or pairwise 4:8 (fp4)
    sparse with the metadata at META_COL, the scale blocks dividing the logical K. data: the operands, scales and
    nibbles to use instead of random ones."""
    rnd = random.Random(seed)
    fp4 = kind != "mxf8f6f4"
    k = (64 if fp4 else 32) * (2 if sparse else 1)
    ctas = 2 if pair else 1
    A, B, va, vb, sfa, sfb = scaled_operands(rnd, kind, etypes, m, n, k, vec, ue4m3)
    stored, nibbles = A, None
    if sparse:
        stored, A, nibbles = sparsify(rnd, A, k, 2 if fp4 else 1)
    if data is not None:
        stored, A, B, sfa, sfb, nibbles = data
    blk = k // vec
    sa = lambda r, kk: scale_value(sfa[r][kk // blk], ue4m3)  # noqa: E731
    sb = lambda c, kk: scale_value(sfb[c][kk // blk], ue4m3)  # noqa: E731

    def smem(rows, t):
        if fp4:
            return [[(row[2 * i] | row[2 * i + 1] << 4, None) for i in range(len(row) // 2)] for row in rows]
        return packed_rows([[(b, None) for b in row] for row in rows], t)

    pre = [[pattern("f16", lane % 128, col, False) for col in range(COLS)] for lane in range(LANES * ctas)]
    scale_image(pre, m, n, ctas, sfa, sfb, ids, nibbles)
    sa_rows, sb_rows = smem(stored, etypes[0]), smem(B, etypes[1])
    img, (alb, asb, blb, bsb) = images(sa_rows, sb_rows, len(sa_rows[0]), 1, (0, 0), ctas, len(sb_rows[0]))
    for r in range(m if a_tmem else 0):
        lane, _ = d_cell(m, n, False, pair, r, 0)
        row = smem([stored[r]], "e4m3")[0]  # Tensor Memory: a byte an element (fp4 two), no packing
        for copy in range(2 if pair and m == 128 else 1):
            pre[lane + 64 * copy][A_COL:A_COL + len(row) // 4] = a_words(row, 1)
    out = [row[:] for row in pre]
    for r in range(m):
        for c in range(n):
            lane, col = d_cell(m, n, False, pair, r, c)
            out[lane][col] = f32_bits(2 * sum(va(A[r][kk]) * sa(r, kk) * vb(B[c][kk]) * sb(c, kk) for kk in range(k)))

    def desc(start, lbo, sbo):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46

    types = TYPE_CODE[etypes[0]] << 7 | TYPE_CODE[etypes[1]] << 10 if not fp4 else 1 << 7 | 1 << 10
    idesc = (ids[1] << 4 | types | (n >> 3) << 17 | (0 if ue4m3 else 1) << 23 | (m >> 7) << 27 | ids[0] << 29 |
             (4 if sparse else 0))
    vec_mod = {1: ".scale_vec::1X", 2: ".scale_vec::2X", 4: ".scale_vec::4X"}[vec] if kind != "mxf4" else ""
    op = f"tcgen05.mma{'.sp' if sparse else ''}.cta_group::{ctas}.kind::{kind}.block_scale{vec_mod}"
    a_op = "[%r20]" if a_tmem else "%rd5"
    instr = f"{op} [%r9], {a_op}, %rd6, {'[%r23], ' if sparse else ''}%r11, [%r21], [%r22], %p1;"
    words = b"".join(struct.pack("<I", w) for row in out for w in row)
    params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"},
              {"type": "u64", "bits": f"{desc(0, alb, asb):x}"}, {"type": "u64", "bits": f"{desc(8192, blb, bsb):x}"},
              {"type": "u32", "value": idesc}, {"type": "u64", "buffer": "pre"}]
    buffers = {"img": {"bytes": len(img), "init": "img.bin"},
               "out": {"bytes": len(words), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}},
               "pre": {"bytes": len(words), "init": "pre.bin"}}
    files = {"img.bin": bytes(img), "out.expect.bin": words,
             "pre.bin": b"".join(struct.pack("<I", w) for row in pre for w in row)}
    ptx = forms_kernel(instr, None, pair=pair, scales=True, meta=sparse)
    if kind == "mxf4":  # no .scale_vectorsize means .block32, a PTX ISA 8.8 qualifier (ptxas says so)
        ptx = ptx.replace(".version 8.7", ".version 8.8")
    entries = [write_case(root, f"{name}_tcgen05", ptx, "k_forms", 128, params, buffers, files, ctas)]
    if twin and pair and m == 256:  # each CTA's half as one CTA's M = 128 product of the same operands and scales
        for v in range(2):
            rows = slice(128 * v, 128 * (v + 1))
            entries += scaled_case(root, f"{name}_cta{v}", kind, n, vec, ue4m3, ids, seed, False, sparse, a_tmem,
                                   etypes, data=(stored[rows], A[rows], B, sfa[rows], sfb,
                                                 nibbles[rows] if nibbles else None))
    elif twin and sparse:  # two dense block-scaled mmas over K's halves of the expanded A, the same scales
        img = bytearray(16384)
        alb, asb = place(img, 0, 128, len(smem(A, etypes[0])[0]), 0, smem(A, etypes[0]), 1)
        place(img, 8192, n, len(smem(B, etypes[1])[0]), 0, smem(B, etypes[1]), 1)
        dense_op = op.replace(".sp", "")
        instr = "\n\t".join([f"add.u64 %rd14, %rd5, {2 * alb >> 4};", f"add.u64 %rd15, %rd6, {2 * blb >> 4};",
                               "setp.eq.u32 %p5, %r1, %r1;", f"{dense_op} [%r9], %rd5, %rd6, %r11, [%r21], [%r22], %p1;",
                               f"{dense_op} [%r9], %rd14, %rd15, %r11, [%r21], [%r22], %p5;"])
        params = params[:2] + [{"type": "u64", "bits": f"{desc(0, alb, asb):x}"}] + params[3:4] + [
            {"type": "u32", "value": idesc & ~4}] + params[5:]
        entries.append(write_case(root, f"{name}_dense_tcgen05", forms_kernel(instr, None, scales=True), "k_forms",
                                  128, params, buffers, dict(files, **{"img.bin": bytes(img)})))
    elif twin:  # the scales folded into e4m3 values: the plain kind::f8f6f4 product of the same numbers
        enc = {e4m3_value(b): b for b in range(256) if b != 0x80 and e4m3_value(b) == e4m3_value(b)}
        fa = [[(enc[va(A[r][kk]) * sa(r, kk)], va(A[r][kk]) * sa(r, kk)) for kk in range(k)] for r in range(m)]
        fb = [[(enc[vb(B[c][kk]) * sb(c, kk)], vb(B[c][kk]) * sb(c, kk)) for kk in range(k)] for c in range(n)]
        entries += case(root, name + "_folded", "e4m3", m, n, codes=(0, 0), seed=seed, operands=(fa, fb), pair=pair)
    return entries


# The metadata nibbles the ISA calls meaningful for 2:4 sparsity: two 2-bit indices, the first stored element's
# position in the chunk in the low bits.
META_NIBBLES = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110]


def meta_cell(nb, row, chunk):
    """(lane, column offset, bit) of chunk CHUNK's nibble of row ROW's metadata (M = 128), as CuTe's tmem_e_frg lays
    it out: 8-bit kinds row r in lane r, its K/4 nibbles from bit 0 of two columns; f16 row r0 + 8 r1 + 16 r2 and
    K k0 + 16 k1 in lane r0 + 16 r2 + 8 k1, bit k0 + 16 r1; tf32 (2 bits an element) chunk c where f16's chunk c
    lies."""
    bit = 4 * chunk
    if nb >= 2:
        return row % 8 + 16 * (row // 16) + 8 * (bit // 16), 0, bit % 16 + 16 * (row // 8 % 2)
    return row, bit // 32, bit % 32


def sparse_operands(rnd, kind, m, n, k):
    """A's stored half, its expansion and nibbles, and B: 2:4 (two of each four elements at the places a meaningful
    nibble's two indices name), or tf32's 1:2 (one of each two, 0b0100 the first and 0b1110 the second)."""
    tf32 = kind == "tf32"
    stored = [[element(rnd, kind) for _ in range(k // 2)] for _ in range(m)]
    B = [[element(rnd, kind) for _ in range(k)] for _ in range(n)]
    nibbles = [[rnd.choice([0b0100, 0b1110] if tf32 else META_NIBBLES) for _ in range(k // (2 if tf32 else 4))]
               for _ in range(m)]
    dense = [[(0, 0)] * k for _ in range(m)]
    for r in range(m):
        for c, nib in enumerate(nibbles[r]):
            if tf32:
                dense[r][2 * c + (nib & 3) // 2] = stored[r][c]
            else:
                dense[r][4 * c + (nib & 3)] = stored[r][2 * c]
                dense[r][4 * c + (nib >> 2)] = stored[r][2 * c + 1]
    return stored, dense, nibbles, B


def sparse_case(root, name, kind, n, seed, mask=None, m=128, ws=False, pair=False, a_tmem=False, selector=0):
    """tcgen05.mma.sp (M = 128; a pair's M = 256, each CTA's 128 rows as one CTA's) or .ws.sp (M = 128, 64, 32), 2:4
    (tf32 1:2): A's rows keep half their elements (stored K/2 wide behind the descriptor, or with a_tmem in Tensor
    Memory in the lanes of D's rows), the metadata in each CTA's Tensor Memory at META_COL (repeated M lanes on for
    .ws's M = 64 and 32, as tmem_e_frg_ws lays it out). D = 2 A B of the expanded A (disable-output-lane's lanes
    kept), and a dense twin runs the same product as two dense mmas over K's halves on the expanded A (from shared
    memory), which must agree. selector: the instruction descriptor's sparsity selector (only 0 is done)."""
    nb = NBYTES[kind]
    k = 64 // nb  # the logical K: twice the dense step
    ctas, mc = (2, m // 2) if pair else (1, m)
    stored, dense, nibbles, B = sparse_operands(random.Random(seed), kind, m, n, k)
    pre = [[pattern(kind, lane % 128, col, False) for col in range(COLS)] for lane in range(LANES * ctas)]
    for lane in range(LANES * ctas):
        pre[lane][META_COL:META_COL + 2] = [0, 0]
    for r in range(m):
        for c, nib in enumerate(nibbles[r]):
            lane, col, bit = meta_cell(nb, r % mc, c)
            for copy in range(128 // mc):
                pre[128 * (r // mc) + lane + mc * copy][META_COL + col] |= nib << bit
    for r in range(m if a_tmem else 0):
        lane, _ = d_cell(m, n, ws, pair, r, 0)
        pre[lane][A_COL:A_COL + 8] = a_words(stored[r], nb)
    out = expected_image(kind, m, n, ws, pair, dense, B, pre, mask, None, False)

    def desc(start, lbo, sbo):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46

    atype = TYPE_CODE[kind]
    idesc = (2 if kind == "i8" else 1) << 4 | atype << 7 | atype << 10 | (n >> 3) << 17 | (m >> 4) << 24
    op = f"tcgen05.mma{'.ws' if ws else ''}"
    ptx_kind = "f8f6f4" if kind == "e4m3" or kind in NARROW else kind
    lanes = ", {%r30, %r31, %r32, %r33}" if mask else ""
    entries = []
    for twin in (False, True):
        a_rows = dense if twin else stored
        img, (alb, asb, blb, bsb) = images(a_rows, B, len(a_rows[0]), nb, (0, 0), ctas, k)
        params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"},
                  {"type": "u64", "bits": f"{desc(0, alb, asb):x}"}, {"type": "u64", "bits": f"{desc(8192, blb, bsb):x}"},
                  {"type": "u32", "value": idesc | (0 if twin else 4 | selector)}, {"type": "u64", "buffer": "pre"}]
        if twin:  # K's second half lies two core matrices (2 LBO) on in both no-swizzle K-major layouts
            dense_op = f"{op}.cta_group::{ctas}.kind::{ptx_kind}"
            instr = "\n\t".join([f"add.u64 %rd14, %rd5, {2 * alb >> 4};", f"add.u64 %rd15, %rd6, {2 * blb >> 4};",
                                   "setp.eq.u32 %p5, %r1, %r1;", f"{dense_op} [%r9], %rd5, %rd6, %r11{lanes}, %p1;",
                                   f"{dense_op} [%r9], %rd14, %rd15, %r11{lanes}, %p5;"])
        else:
            a_op = "[%r20]" if a_tmem else "%rd5"
            instr = f"{op}.sp.cta_group::{ctas}.kind::{ptx_kind} [%r9], {a_op}, %rd6, [%r23], %r11{lanes}, %p1;"
        words = b"".join(struct.pack("<I", w) for row in out for w in row)
        buffers = {"img": {"bytes": len(img), "init": "img.bin"},
                   "out": {"bytes": len(words), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                           "compare": {"as": "u32"}},
                   "pre": {"bytes": len(words), "init": "pre.bin"}}
        files = {"img.bin": bytes(img), "out.expect.bin": words,
                 "pre.bin": b"".join(struct.pack("<I", w) for row in pre for w in row)}
        entries.append(write_case(root, f"{name}_{'dense' if twin else 'sp'}_tcgen05",
                                  forms_kernel(instr, mask, pair=pair, meta=True), "k_forms", 128, params, buffers,
                                  files, ctas))
    return entries


def narrow_case(root, name, kind, kind_b, m, n, seed, **kw):
    """kind::f8f6f4 with fp6/fp4 A and B (kind, kind_b), and its twin: the same values as e4m3 (each exact there),
    the already-tested 8-bit product, which must give the same D."""
    rnd = random.Random(seed)
    A = [[any_element(rnd, kind) for _ in range(32)] for _ in range(m)]
    B = [[any_element(rnd, kind_b) for _ in range(32)] for _ in range(n)]
    enc = {e4m3_value(b): b for b in range(256) if b != 0x80 and e4m3_value(b) == e4m3_value(b)}
    as_e4m3 = [[[(enc[v], v) for _, v in row] for row in rows] for rows in (A, B)]
    return (case(root, name, kind, m, n, seed=seed, operands=(A, B), kind_b=kind_b, **kw) +
            case(root, name + "_e4m3", "e4m3", m, n, seed=seed, operands=tuple(as_e4m3), **kw))


MASK = [0x80000001, 0x0000ff00, 0x12345678, 0xfffe0000]
root = sys.argv[1]
cases = (case(root, "m64_f16", "f16", 64, 32, codes=(0, 1), seed=501) +
         case(root, "m64_f16_mask_scale", "f16", 64, 32, mask=MASK, scale=2, codes=(2, 0), seed=502) +
         case(root, "m64_f16_atmem", "f16", 64, 48, a_tmem=True, mods=".collector::a::fill", codes=(0, 1), seed=503) +
         case(root, "m128_tf32_atmem_mask_scale", "tf32", 128, 32, a_tmem=True, mask=MASK, scale=3, seed=504) +
         case(root, "ws_m32_f16", "f16", 32, 64, ws=True, mods=".collector::b0::fill", codes=(1, 0), seed=505) +
         case(root, "ws_m64_i8", "i8", 64, 128, ws=True, mods=".collector::b1::lastuse", codes=(3, 0), seed=506) +
         case(root, "ws_m128_e4m3_atmem", "e4m3", 128, 64, ws=True, a_tmem=True, codes=(0, 2), seed=507) +
         case(root, "m128_f16_d16_scale", "f16", 128, 32, scale=1, half=True, codes=(3, 0), seed=508) +
         case(root, "ws_m64_e4m3_d16", "e4m3", 64, 64, ws=True, half=True, codes=(0, 3), seed=509) +
         case(root, "pair_m256_f16", "f16", 256, 32, scale=1, codes=(0, 1), seed=510, pair=True) +
         case(root, "pair_m128_i8", "i8", 128, 48, codes=(3, 0), seed=511, pair=True) +
         case(root, "ws_m128_f16_zcm", "f16", 128, 64, ws=True, codes=(0, 0), seed=512,
              zcm=zero_column_desc([3, 0, 0, 0], [0, 0, 0, 0], 2, 3, 5)) +
         case(root, "ws_m64_i8_zcm", "i8", 64, 128, ws=True, mods=".collector::b2::use", codes=(1, 0), seed=513,
              zcm=zero_column_desc([0, 0, 0, 0], [1, 0, 0, 0], 2, 3, 32)) +
         case(root, "ws_m32_e4m3_zcm", "e4m3", 32, 64, ws=True, codes=(0, 2), seed=514,
              zcm=zero_column_desc([0, 1, 2, 1], [1, 1, 0, 0], 2, 3, 2)) +
         scaled_case(root, "mxf8f6f4_1x", "mxf8f6f4", 64, 1, ids=(2, 1), seed=515, twin=True) +
         scaled_case(root, "mxf4_2x", "mxf4", 32, 2, ids=(2, 0), seed=516) +
         scaled_case(root, "mxf4nvf4_2x", "mxf4nvf4", 32, 2, ids=(2, 0), seed=516) +
         scaled_case(root, "mxf4nvf4_4x_ue4m3", "mxf4nvf4", 48, 4, ue4m3=True, seed=517) +
         sparse_case(root, "sp_f16", "f16", 32, 518) +
         sparse_case(root, "sp_i8_mask", "i8", 48, 519, mask=MASK) +
         sparse_case(root, "sp_e4m3", "e4m3", 16, 520) +
         sparse_case(root, "ws_sp_f16_m64", "f16", 64, 521, m=64, ws=True) +
         sparse_case(root, "ws_sp_i8_m32", "i8", 128, 522, m=32, ws=True) +
         sparse_case(root, "ws_sp_e4m3_m128", "e4m3", 64, 523, ws=True) +
         scaled_case(root, "sp_mxf8f6f4_1x", "mxf8f6f4", 32, 1, ids=(1, 3), seed=524, twin=True, sparse=True) +
         scaled_case(root, "sp_mxf4nvf4_4x_ue4m3", "mxf4nvf4", 32, 4, ue4m3=True, seed=525, sparse=True) +
         scaled_case(root, "sp_mxf4_2x", "mxf4", 48, 2, ids=(2, 2), seed=526, sparse=True) +
         # fp6/fp4 under kind::f8f6f4 and kind::mxf8f6f4 (A in Tensor Memory too; a pair)
         narrow_case(root, "f8f6f4_e2m3", "e2m3", "e2m3", 128, 32, 540, codes=(2, 3)) +
         narrow_case(root, "f8f6f4_e3m2_e2m1", "e3m2", "e2m1", 64, 32, 541, codes=(0, 3)) +
         narrow_case(root, "f8f6f4_e2m1_e2m3_atmem", "e2m1", "e2m3", 128, 32, 542, a_tmem=True) +
         narrow_case(root, "pair_f8f6f4_e3m2", "e3m2", "e3m2", 256, 32, 543, pair=True) +
         scaled_case(root, "mxf8f6f4_e2m3_e3m2", "mxf8f6f4", 32, 1, ids=(1, 2), seed=544, twin=True,
                     etypes=("e2m3", "e3m2")) +
         scaled_case(root, "mxf8f6f4_e2m1_atmem", "mxf8f6f4", 48, 1, ids=(0, 3), seed=545, twin=True, a_tmem=True,
                     etypes=("e2m1", "e2m1")) +
         # block scaling with A in Tensor Memory (the data of mxf8f6f4_1x, mxf4nvf4_4x_ue4m3 and sp_mxf4_2x)
         scaled_case(root, "mxf8f6f4_1x_atmem", "mxf8f6f4", 64, 1, ids=(2, 1), seed=515, a_tmem=True) +
         scaled_case(root, "mxf4nvf4_4x_ue4m3_atmem", "mxf4nvf4", 48, 4, ue4m3=True, seed=517, a_tmem=True) +
         scaled_case(root, "sp_mxf4_2x_atmem", "mxf4", 48, 2, ids=(2, 2), seed=526, sparse=True, a_tmem=True) +
         # block scaling over a cta_group::2 pair: M = 256 (4x1 datapath) against its halves, M = 128 (2x2)
         scaled_case(root, "pair_mxf4nvf4_2x", "mxf4nvf4", 64, 2, ids=(0, 2), seed=546, m=256, pair=True, twin=True) +
         scaled_case(root, "pair_m128_mxf8f6f4", "mxf8f6f4", 64, 1, ids=(3, 1), seed=547, m=128, pair=True,
                     twin=True) +
         scaled_case(root, "pair_m128_mxf4_atmem", "mxf4", 32, 2, seed=548, m=128, pair=True, a_tmem=True) +
         scaled_case(root, "pair_m128_mxf4", "mxf4", 32, 2, seed=548, m=128, pair=True) +
         scaled_case(root, "pair_sp_mxf8f6f4", "mxf8f6f4", 32, 1, ids=(1, 0), seed=549, sparse=True, m=256,
                     pair=True, twin=True) +
         # .sp over a pair (M = 256), tf32's 1:2, A in Tensor Memory
         sparse_case(root, "pair_sp_f16", "f16", 32, 550, m=256, pair=True) +
         sparse_case(root, "sp_tf32", "tf32", 32, 551) +
         sparse_case(root, "ws_sp_tf32_m64", "tf32", 64, 552, m=64, ws=True) +
         sparse_case(root, "pair_sp_tf32_atmem", "tf32", 48, 553, m=256, pair=True, a_tmem=True) +
         sparse_case(root, "sp_i8_atmem", "i8", 32, 554, a_tmem=True) +
         # a pair's dense A in Tensor Memory (the data of pair_m256_f16 and pair_m128_i8)
         case(root, "pair_m256_f16_atmem", "f16", 256, 32, a_tmem=True, scale=1, codes=(0, 1), seed=510, pair=True) +
         case(root, "pair_m128_i8_atmem", "i8", 128, 48, a_tmem=True, codes=(3, 0), seed=511, pair=True))
write_index(root, cases)
# Sparse forms the ISA defines whose metadata layouts it gives only as figures: they must fault, not compute
# something else (their dense twins run).
if len(sys.argv) > 2:
    write_index(sys.argv[2], sparse_case(sys.argv[2], "sp_f16_m64", "f16", 32, 560, m=64) +
                sparse_case(sys.argv[2], "sp_f16_selector1", "f16", 32, 561, selector=1))
