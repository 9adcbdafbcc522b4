"""Writes conformance-format cases (../shared/conformance/FORMAT.md) of tcgen05 into the directory argv[1]: a warp
allocates Tensor Memory, thread 0 runs tcgen05.mma.cta_group::1 twice (enable-input-d false, then true: D = 2 A B)
on A (128 x K) and B (N x K, K-major) behind shared-memory descriptors and commits to an mbarrier, every warp
reads its 32 lanes of D with tcgen05.ld.32x32b, and the warp deallocates. The expected D is computed here from
the PTX ISA's definitions (instruction descriptor, shared-memory descriptor, D's row r in lane r): operands are
multiples of 1/8 in [-1, 1] (or bytes for i8), so every sum is exact. A second kernel runs wgmma m64nNk* on the same
image (two warpgroups, rows 0-63 and 64-127; sm_90a, GPU-verified in tests/conformance/cases/wgmma) and must
give the same D."""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../conformance/cases"))
from hopper import desc_offset, e4m3_value, f16_bits  # noqa: E402  (the wgmma cases' layouts and encodings)
from case_files import write_index  # noqa: E402

M, N = 128, 32
SPAN = {0: 0, 1: 128, 2: 64, 3: 32}  # wgmma swizzle codes
TCGEN = {0: 0, 1: 2, 2: 4, 3: 6}  # the same swizzles as tcgen05 codes


def copy_image(nbytes, stride):
    """PTX lines copying NBYTES from global %rd1 to shared %r2, thread %r1 taking a word every STRIDE bytes from
    its own (registers %r3-%r5, %rd2-%rd3, %p1; the loop ends at $L_copied)."""
    return ["\tshl.b32 %r3, %r1, 2;", "$L_copy:", f"\tsetp.ge.u32 %p1, %r3, {nbytes};", "\t@%p1 bra $L_copied;",
            "\tcvt.u64.u32 %rd2, %r3;", "\tadd.u64 %rd3, %rd1, %rd2;", "\tld.global.u32 %r4, [%rd3];",
            "\tadd.u32 %r5, %r2, %r3;", "\tst.shared.u32 [%r5], %r4;", f"\tadd.u32 %r3, %r3, {stride};",
            "\tbra.uni $L_copy;", "$L_copied:"]


def element(rnd, kind):
    if kind == "i8":
        b = rnd.getrandbits(8)
        return b, b - 256 if b > 127 else b
    v = rnd.randrange(-8, 9) / 8
    if kind == "f16":
        return f16_bits(v), v
    if kind == "e4m3":
        return next(b for b in range(256) if e4m3_value(b) == v and not (v == 0 and b)), v
    return struct.unpack("<I", struct.pack("<f", v))[0], v


def place(img, start, rows, k, code, mat, nb):
    """Lays mat out by the descriptor rules in [start, start + 8192), which it must fit; returns (LBO, SBO)."""
    s = SPAN[code]
    assert rows * max(s, k * nb) <= 8192
    lbo, sbo = (128, 128 * (k * nb // 16)) if not s else (16, 8 * s)
    for mn in range(rows):
        for kk in range(k):
            o = desc_offset(start, lbo, sbo, code, mn, kk, nb, False)
            img[o:o + nb] = mat[mn][kk][0].to_bytes(nb, "little")
    return lbo, sbo


def ldst_out():
    regs = ", ".join(f"%d{i}" for i in range(32))
    return [f"\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{regs}}}, [%r13];", "\ttcgen05.wait::ld.sync.aligned;"]


def store_row(row_reg):
    L = ["\tld.param.u64 %rd7, [p_out];", "\tcvta.to.global.u64 %rd7, %rd7;", f"\tmul.wide.u32 %rd8, {row_reg}, 128;",
         "\tadd.u64 %rd7, %rd7, %rd8;"]
    return L


def tcgen05_kernel(kind):
    L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
         ".visible .entry k_tcgen05(.param .u64 p_img, .param .u64 p_out, .param .u64 p_adesc, .param .u64 p_bdesc, "
         ".param .u32 p_idesc)", "{", "\t.reg .pred %p<4>;", "\t.reg .b32 %r<24>, %d<32>;", "\t.reg .b64 %rd<16>;",
         "\t.shared .align 1024 .b8 s_img[16384];", "\t.shared .align 8 .b64 s_bar;",
         "\t.shared .align 4 .b32 s_taddr;",
         "\tmov.u32 %r1, %tid.x;", "\tld.param.u64 %rd1, [p_img];", "\tcvta.to.global.u64 %rd1, %rd1;",
         "\tmov.u32 %r2, s_img;", *copy_image(16384, 512), "\tfence.proxy.async.shared::cta;",
         "\tmov.u32 %r6, s_taddr;", "\tmov.u32 %r7, s_bar;", "\tshr.u32 %r8, %r1, 5;", "\tsetp.ne.u32 %p2, %r8, 0;",
         "\t@%p2 bra $L_allocated;", "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r6], 32;",
         "$L_allocated:", "\tsetp.ne.u32 %p3, %r1, 0;", "\t@%p3 bra $L_inited;",
         "\tmbarrier.init.shared::cta.b64 [%r7], 1;", "$L_inited:", "\ttcgen05.fence::before_thread_sync;",
         "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;", "\tld.shared.b32 %r9, [%r6];",
         "\t@%p3 bra $L_issued;", "\tshr.u32 %r10, %r2, 4;", "\tcvt.u64.u32 %rd4, %r10;",
         "\tld.param.u64 %rd5, [p_adesc];", "\tadd.u64 %rd5, %rd5, %rd4;", "\tld.param.u64 %rd6, [p_bdesc];",
         "\tadd.u64 %rd6, %rd6, %rd4;", "\tld.param.u32 %r11, [p_idesc];", "\tsetp.ne.u32 %p1, %r1, %r1;",
         f"\ttcgen05.mma.cta_group::1.kind::{kind} [%r9], %rd5, %rd6, %r11, %p1;", "\tsetp.eq.u32 %p1, %r1, %r1;",
         f"\ttcgen05.mma.cta_group::1.kind::{kind} [%r9], %rd5, %rd6, %r11, %p1;",
         "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r7];", "$L_issued:",
         "$L_wait:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r7], 0;", "\t@!%p1 bra $L_wait;",
         "\ttcgen05.fence::after_thread_sync;", "\tshl.b32 %r12, %r8, 21;", "\tadd.u32 %r13, %r9, %r12;"]
    L += ldst_out() + store_row("%r1")
    L += [f"\tst.global.v4.b32 [%rd7+{16 * q}], {{%d{4 * q}, %d{4 * q + 1}, %d{4 * q + 2}, %d{4 * q + 3}}};"
          for q in range(8)]
    L += ["\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\t@%p2 bra $L_end;",
          "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r9, 32;",
          "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "$L_end:", "\tret;", "}", ""]
    return "\n".join(L)


def wgmma_kernel(kind, k):
    types = {"f16": "f16.f16", "tf32": "tf32.tf32", "e4m3": "e4m3.e4m3"}
    dt, ty = ("s32", "s8.s8") if kind == "i8" else ("f32", types[kind])
    dl = ", ".join(f"%d{i}" for i in range(16))
    tail = ", %p1" + ("" if kind == "i8" else ", 1, 1" + (", 0, 0" if kind == "f16" else ""))
    instr = f"wgmma.mma_async.sync.aligned.m64n{N}k{k}.{dt}.{ty} {{{dl}}}, %rd5, %rd6"
    L = [".version 8.0", ".target sm_90a", ".address_size 64", "",
         ".visible .entry k_wgmma(.param .u64 p_img, .param .u64 p_out, .param .u64 p_adesc, .param .u64 p_bdesc, "
         ".param .u32 p_idesc)", "{", "\t.reg .pred %p<4>;", "\t.reg .b32 %r<24>, %d<16>;", "\t.reg .b64 %rd<16>;",
         "\t.shared .align 1024 .b8 s_img[16384];", "\tmov.u32 %r1, %tid.x;", "\tld.param.u64 %rd1, [p_img];",
         "\tcvta.to.global.u64 %rd1, %rd1;", "\tmov.u32 %r2, s_img;", *copy_image(16384, 1024),
         "\tfence.proxy.async.shared::cta;", "\tbar.sync 0;", "\tshr.u32 %r10, %r2, 4;",
         # warpgroup g takes rows 64g..: its A starts 8 row groups (8 * SBO) further
         "\tshr.u32 %r14, %r1, 7;", "\tld.param.u64 %rd9, [p_adesc];", "\tshr.u64 %rd10, %rd9, 32;",
         "\tand.b64 %rd10, %rd10, 16383;", "\tcvt.u32.u64 %r15, %rd10;", "\tmul.lo.u32 %r15, %r15, 8;",
         "\tmul.lo.u32 %r15, %r15, %r14;", "\tadd.u32 %r16, %r10, %r15;", "\tcvt.u64.u32 %rd4, %r16;",
         # wgmma descriptors: the tcgen05 ones without the fixed bits and with wgmma's swizzle codes (SWZ below)
         "\tand.b64 %rd5, %rd9, 0x00003fff3fff3fff;", "\tadd.u64 %rd5, %rd5, %rd4;", "\tor.b64 %rd5, %rd5, %rd11;",
         "\tld.param.u64 %rd6, [p_bdesc];", "\tand.b64 %rd6, %rd6, 0x00003fff3fff3fff;", "\tcvt.u64.u32 %rd4, %r10;",
         "\tadd.u64 %rd6, %rd6, %rd4;", "\tor.b64 %rd6, %rd6, %rd12;", "\twgmma.fence.sync.aligned;",
         "\tsetp.ne.u32 %p1, %r1, %r1;", f"\t{instr}{tail};", "\tsetp.eq.u32 %p1, %r1, %r1;", f"\t{instr}{tail};",
         "\twgmma.commit_group.sync.aligned;", "\twgmma.wait_group.sync.aligned 0;",
         # element i of lane l of warp w: row 16 w + l / 4 + 8 ((i / 2) % 2), column (i / 4) 8 + 2 (l % 4) + i % 2
         "\tld.param.u64 %rd7, [p_out];", "\tcvta.to.global.u64 %rd7, %rd7;", "\tshr.u32 %r17, %r1, 5;",
         "\tand.b32 %r18, %r1, 31;", "\tshr.u32 %r19, %r18, 2;", "\tshl.b32 %r17, %r17, 4;",
         "\tadd.u32 %r17, %r17, %r19;", "\tand.b32 %r20, %r18, 3;", "\tshl.b32 %r20, %r20, 1;"]
    for i in range(16):
        row_extra, col = 8 * ((i // 2) % 2), (i // 4) * 8 + (i % 2)
        L += [f"\tadd.u32 %r21, %r17, {row_extra};", f"\tadd.u32 %r22, %r20, {col};",
              f"\tmad.lo.u32 %r21, %r21, {N}, %r22;",
              "\tmul.wide.u32 %rd13, %r21, 4;", "\tadd.u64 %rd14, %rd7, %rd13;", f"\tst.global.b32 [%rd14], %d{i};"]
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def case(root, name, kind, a_code, b_code, seed):
    nb = {"f16": 2, "tf32": 4, "i8": 1, "e4m3": 1}[kind]
    k = 32 // nb
    rnd = random.Random(seed)
    A = [[element(rnd, kind) for _ in range(k)] for _ in range(M)]
    B = [[element(rnd, kind) for _ in range(k)] for _ in range(N)]
    img = bytearray(16384)
    alb, asb = place(img, 0, M, k, a_code, A, nb)
    blb, bsb = place(img, 8192, N, k, b_code, B, nb)

    def desc(start, lbo, sbo, code):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | TCGEN[code] << 61

    atype = {"f16": 0, "tf32": 2, "i8": 1, "e4m3": 0}[kind]
    dtype = 2 if kind == "i8" else 1
    idesc = dtype << 4 | atype << 7 | atype << 10 | (N >> 3) << 17 | (M >> 4) << 24
    fmt = "<i" if kind == "i8" else "<f"
    out = b"".join(struct.pack(fmt, 2 * sum(A[r][kk][1] * B[c][kk][1] for kk in range(k)))
                   for r in range(M) for c in range(N))
    params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"},
              {"type": "u64", "bits": f"{desc(0, alb, asb, a_code):x}"},
              {"type": "u64", "bits": f"{desc(8192, blb, bsb, b_code):x}"}, {"type": "u32", "value": idesc}]
    buffers = {"img": {"bytes": 16384, "init": "img.bin"},
               "out": {"bytes": len(out), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "s32" if kind == "i8" else "f32"}}}
    entries = []
    ptx_kind = "f8f6f4" if kind == "e4m3" else kind
    kernels = [("tcgen05", tcgen05_kernel(ptx_kind), "k_tcgen05", "sm_100a", 100, 128),
               ("wgmma", wgmma_kernel(kind, k), "k_wgmma", "sm_90a", 90, 256)]
    for tag, ptx, entry, target, sm, threads in kernels:
        d = os.path.join(root, f"{name}_{tag}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "img.bin"), "wb") as f:
            f.write(bytes(img))
        with open(os.path.join(d, "out.expect.bin"), "wb") as f:
            f.write(out)
        text = ptx
        if tag == "wgmma":  # the swizzle codes as wgmma reads them
            text = text.replace("\tor.b64 %rd5, %rd5, %rd11;", f"\tor.b64 %rd5, %rd5, {a_code << 62};")
            text = text.replace("\tor.b64 %rd6, %rd6, %rd12;", f"\tor.b64 %rd6, %rd6, {b_code << 62};")
        with open(os.path.join(d, "kernel.ptx"), "w") as f:
            f.write(text)
        c = {"name": f"tcgen05/{name}_{tag}", "description": f"{tag}: D = 2 A B from the ISA's definitions",
             "ptx": "kernel.ptx", "entry": entry, "min_sm": sm, "grid": [1, 1, 1], "block": [threads, 1, 1],
             "dynamic_shared_bytes": 0, "params": params, "buffers": buffers}
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(c, f, indent=1)
        entries.append({"name": c["name"], "dir": f"{name}_{tag}", "min_sm": sm, "ptx_version": "8.7",
                        "target": target, "description": c["description"]})
    return entries


if __name__ == "__main__":
    root = sys.argv[1]
    cases = case(root, "f16_a_none_b_128b", "f16", 0, 1, 401) + case(root, "tf32_a_64b_b_none", "tf32", 2, 0, 402) + \
        case(root, "i8_a_32b_b_64b", "i8", 3, 2, 403) + case(root, "e4m3_a_64b_b_32b", "e4m3", 2, 3, 404)
    write_index(root, cases)
