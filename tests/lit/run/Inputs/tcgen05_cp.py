"""Writes conformance-format cases (../shared/conformance/FORMAT.md) of tcgen05.cp and tcgen05.shift into the
directory argv[1]: four warps zero 56 columns of their lanes of Tensor Memory and copy matrices of random bytes into
shared memory, each laid out by the shared-memory descriptor rules (the wgmma cases' desc_offset, K-major: a row's
256 or 128 bits are its K extent) under a different swizzle; thread 0 copies them into Tensor Memory with tcgen05.cp
.128x256b (columns 0-7), .128x128b (8-11), .64x128b.warpx2::02_13 (12-15), .64x128b.warpx2::01_23 (16-19),
.32x128b.warpx4 (20-23), .4x256b (24-31), the decompressing .128x128b.b8x16.b4x16_p64 (32-35),
.128x256b.b8x16.b6x16_p32 (36-43) and .32x128b.warpx4.b8x16.b6x16_p32 (52-55), and .128x256b (44-51) followed by
tcgen05.shift.down there, commits to an mbarrier, and every warp reads its 32 lanes' 56 columns back. The expected
lanes follow CuTe's SM100 UTCCP atoms (ValID: a row's data-path lane, and the lanes a broadcast or repeat mode adds):
row r in lane r; 02_13 also lane r + 64; 01_23 rows 32.. from lane 64, each also 32 lanes on; warpx4 lanes r + 32 w;
.4x256b's four rows lanes 0-3. The decompressing forms unpack each 16-byte group of the source (16 elements of 4 or 6
bits from bit 0 up, then padding, which is random here and must not show) into 16 zero-extended bytes, as ldmatrix's
.b8x16 forms read the same formats; the shift moves each lane's 32 bytes one lane down, lane 0 keeping its own.
The second case runs the same copies with .cta_group::2 in a cluster of two CTAs: rank 0's thread 0 issues them and
each CTA of the pair receives the rows of the matrices in its own shared memory (different random bytes)."""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cute_layout import layout  # noqa: E402
from tcgen05_mma import TCGEN, copy_image, place  # noqa: E402
from case_files import write_index  # noqa: E402

REGION = 8192
COLS = 56
# (instruction shape, rows, bytes a row, swizzle code (wgmma's numbering), first column, CuTe ValID lane modes
# (shape, stride) beyond the row: broadcast / repeat, source format of a decompressing form, shifted after the copy)
SHAPES = [("128x256b", 128, 32, 0, 0, (128, 1), None, False), ("128x128b", 128, 16, 3, 8, (128, 1), None, False),
          ("64x128b.warpx2::02_13", 64, 16, 2, 12, ((64, 2), (1, 64)), None, False),
          ("64x128b.warpx2::01_23", 64, 16, 1, 16, ((32, 2, 2), (1, 64, 32)), None, False),
          ("32x128b.warpx4", 32, 16, 3, 20, ((32, 4), (1, 32)), None, False),
          ("4x256b", 4, 32, 1, 24, (4, 1), None, False),
          ("128x128b", 128, 16, 2, 32, (128, 1), "b4x16_p64", False),
          ("128x256b", 128, 32, 0, 36, (128, 1), "b6x16_p32", False),
          ("128x256b", 128, 32, 3, 44, (128, 1), None, True),
          ("32x128b.warpx4", 32, 16, 2, 52, ((32, 4), (1, 32)), "b6x16_p32", False)]


def lanes(rows, modes):
    """Row r's lanes: CuTe's ValID over the row modes and the broadcast ones (a stride-0 source)."""
    shape, stride = modes
    out = {}
    for i in range(128 if rows > 4 else rows):
        out.setdefault(i % rows, []).append(layout(shape, stride, i))
    return out


def decompressed(row, fmt):
    """The bytes Tensor Memory receives for a source row: each 16-byte group's 16 elements of 4 or 6 bits (packed
    from bit 0 up, padding after) zero-extended to a byte each; the row itself without a source format."""
    if fmt is None:
        return bytes(row)
    width = 4 if fmt == "b4x16_p64" else 6
    out = bytearray()
    for g in range(0, len(row), 16):
        bits = int.from_bytes(bytes(row[g:g + 16]), "little")
        out += bytes((bits >> (width * e)) & ((1 << width) - 1) for e in range(16))
    return bytes(out)


def regs(first, count):
    return ", ".join(f"%v{i}" for i in range(first, first + count))


def kernel(n, pair):
    """pair: a cluster of two CTAs, every tcgen05 instruction .cta_group::2 (the ISA wants one value per kernel), CTA r
    taking its image and output rows at r times their size; rank 0's thread 0 issues the copies and commits to both
    CTAs' mbarriers."""
    group = 2 if pair else 1
    sync = ["\tbarrier.cluster.arrive.aligned;", "\tbarrier.cluster.wait.aligned;"] if pair else ["\tbar.sync 0;"]
    descs = ", ".join(f".param .u64 p_d{i}" for i in range(n))
    L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
         f".visible .entry k_cp(.param .u64 p_img, .param .u64 p_out, {descs})" +
         (" .reqnctapercluster 2, 1, 1" if pair else ""), "{", "\t.reg .pred %p<6>;",
         "\t.reg .b32 %r<32>, %v<64>;", "\t.reg .b16 %rs<2>;", "\t.reg .b64 %rd<16>;",
         f"\t.shared .align 1024 .b8 s_img[{REGION * n}];", "\t.shared .align 8 .b64 s_bar;",
         "\t.shared .align 4 .b32 s_taddr;", "\tmov.u32 %r1, %tid.x;",
         "\tmov.u32 %r25, %cluster_ctarank;" if pair else "\tmov.u32 %r25, 0;", "\tmad.lo.u32 %r26, %r25, 128, %r1;",
         "\tld.param.u64 %rd1, [p_img];", "\tcvta.to.global.u64 %rd1, %rd1;",
         f"\tmul.wide.u32 %rd9, %r25, {REGION * n};", "\tadd.u64 %rd1, %rd1, %rd9;", "\tmov.u32 %r2, s_img;",
         *copy_image(REGION * n, 512), "\tfence.proxy.async.shared::cta;", "\tmov.u32 %r6, s_taddr;",
         "\tmov.u32 %r7, s_bar;", "\tshr.u32 %r8, %r1, 5;", "\tsetp.ne.u32 %p2, %r8, 0;", "\t@%p2 bra $L_allocated;",
         f"\ttcgen05.alloc.cta_group::{group}.sync.aligned.shared::cta.b32 [%r6], 64;", "$L_allocated:",
         "\tsetp.ne.u32 %p3, %r1, 0;", "\t@%p3 bra $L_inited;", "\tmbarrier.init.shared::cta.b64 [%r7], 1;",
         "$L_inited:", "\ttcgen05.fence::before_thread_sync;"] + sync + ["\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.b32 %r9, [%r6];", "\tshl.b32 %r12, %r8, 21;", "\tadd.u32 %r13, %r9, %r12;",
         "\tadd.u32 %r14, %r13, 32;", "\tadd.u32 %r15, %r13, 48;"]
    # the cells the copies leave alone (4x256b's other lanes) hold zeros, as the expected image says
    L += [f"\tmov.b32 %v{i}, 0;" for i in range(COLS)]
    L += [f"\ttcgen05.st.sync.aligned.32x32b.x32.b32 [%r13], {{{regs(0, 32)}}};",
          f"\ttcgen05.st.sync.aligned.32x32b.x16.b32 [%r14], {{{regs(32, 16)}}};",
          f"\ttcgen05.st.sync.aligned.32x32b.x8.b32 [%r15], {{{regs(48, 8)}}};", "\ttcgen05.wait::st.sync.aligned;",
          "\ttcgen05.fence::before_thread_sync;"] + sync + ["\ttcgen05.fence::after_thread_sync;",
          "\tor.b32 %r27, %r1, %r25;", "\tsetp.ne.u32 %p4, %r27, 0;", "\t@%p4 bra $L_issued;",
          "\tshr.u32 %r10, %r2, 4;", "\tcvt.u64.u32 %rd4, %r10;"]
    for i, (shape, _, _, _, col, _, fmt, shift) in enumerate(SHAPES):
        suffix = f".b8x16.{fmt}" if fmt else ""
        L += [f"\tld.param.u64 %rd5, [p_d{i}];", "\tadd.u64 %rd5, %rd5, %rd4;", f"\tadd.u32 %r11, %r9, {col};",
              f"\ttcgen05.cp.cta_group::{group}.{shape}{suffix} [%r11], %rd5;"]
        if shift:
            L += [f"\ttcgen05.shift.cta_group::{group}.down [%r11];"]
    L += ["\tmov.u16 %rs1, 3;",
          "\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r7], %rs1;"
          if pair else "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r7];",
          "$L_issued:", "$L_wait:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r7], 0;",
          "\t@!%p1 bra $L_wait;", "\ttcgen05.fence::after_thread_sync;",
          f"\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{regs(0, 32)}}}, [%r13];",
          f"\ttcgen05.ld.sync.aligned.32x32b.x16.b32 {{{regs(32, 16)}}}, [%r14];",
          f"\ttcgen05.ld.sync.aligned.32x32b.x8.b32 {{{regs(48, 8)}}}, [%r15];",
          "\ttcgen05.wait::ld.sync.aligned;", "\tld.param.u64 %rd7, [p_out];", "\tcvta.to.global.u64 %rd7, %rd7;",
          f"\tmul.wide.u32 %rd8, %r26, {4 * COLS};", "\tadd.u64 %rd7, %rd7, %rd8;"]
    L += [f"\tst.global.v4.b32 [%rd7+{16 * q}], {{{regs(4 * q, 4)}}};" for q in range(COLS // 4)]
    L += ["\ttcgen05.fence::before_thread_sync;"] + sync + ["\t@%p2 bra $L_end;",
          f"\ttcgen05.dealloc.cta_group::{group}.sync.aligned.b32 %r9, 64;",
          f"\ttcgen05.relinquish_alloc_permit.cta_group::{group}.sync.aligned;", "$L_end:", "\tret;", "}", ""]
    return "\n".join(L)


def case(root, name, pair, rnd):
    ctas = 2 if pair else 1
    img = bytearray(REGION * len(SHAPES) * ctas)
    out = [[0] * COLS for _ in range(128 * ctas)]
    params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"}]
    for v in range(ctas):
        base = REGION * len(SHAPES) * v
        for i, (shape, rows, nbytes, code, col, modes, fmt, shift) in enumerate(SHAPES):
            mat = [[(rnd.getrandbits(8), None) for _ in range(nbytes)] for _ in range(rows)]
            part = bytearray(REGION)
            lbo, sbo = place(part, 0, rows, nbytes, code, mat, 1)
            img[base + REGION * i:base + REGION * (i + 1)] = part
            if v == 0:
                desc = (REGION * i) >> 4 | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | TCGEN[code] << 61
                params.append({"type": "u64", "bits": f"{desc:x}"})
            cells = {}
            for r, where in lanes(rows, modes).items():
                words = struct.unpack(f"<{nbytes // 4}I", decompressed([b for b, _ in mat[r]], fmt))
                for lane in where:
                    cells[lane] = words
            if shift:  # every lane but the first takes the 32 bytes of the lane above it
                cells = {lane: cells[max(lane - 1, 0)] for lane in cells}
            for lane, words in cells.items():
                out[128 * v + lane][col:col + len(words)] = words
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "img.bin"), "wb") as f:
        f.write(bytes(img))
    with open(os.path.join(d, "out.expect.bin"), "wb") as f:
        f.write(b"".join(struct.pack(f"<{COLS}I", *row) for row in out))
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(kernel(len(SHAPES), pair))
    c = {"name": f"tcgen05/{name}", "description": f"{name}: tcgen05.cp shapes against CuTe's UTCCP atoms",
         "ptx": "kernel.ptx", "entry": "k_cp", "min_sm": 100, "grid": [ctas, 1, 1], "block": [128, 1, 1],
         "dynamic_shared_bytes": 0, "params": params,
         "buffers": {"img": {"bytes": len(img), "init": "img.bin"},
                     "out": {"bytes": 4 * COLS * 128 * ctas, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                             "compare": {"as": "u32"}}}}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(c, f, indent=1)
    return {"name": c["name"], "dir": name, "min_sm": 100, "ptx_version": "8.7", "target": "sm_100a",
            "description": c["description"]}


root = sys.argv[1]
rnd = random.Random(601)
write_index(root, [case(root, "tcgen05_cp_shapes", False, rnd), case(root, "tcgen05_cp_pair", True, rnd)])
