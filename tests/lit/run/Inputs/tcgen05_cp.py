"""Writes a conformance-format case (../shared/conformance/FORMAT.md) of tcgen05.cp into the directory argv[1]: four
warps copy five matrices of random bytes into shared memory, each laid out by the shared-memory descriptor rules (the
wgmma cases' desc_offset, K-major: a row's 256 or 128 bits are its K extent) under a different swizzle, thread 0
copies them into Tensor Memory with tcgen05.cp.cta_group::1 .128x256b (columns 0-7), .128x128b (8-11),
.64x128b.warpx2::02_13 (12-15), .64x128b.warpx2::01_23 (16-19) and .32x128b.warpx4 (20-23) and commits to an
mbarrier, and every warp reads its 32 lanes' 24 columns back. The expected lanes follow CuTe's SM100 UTCCP atoms
(ValID: a row's data-path lane, and the lanes a broadcast or repeat mode adds): row r in lane r; 02_13 also lane
r + 64; 01_23 rows 32.. from lane 64, each also 32 lanes on; warpx4 lanes r + 32 w."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cute_layout import layout  # noqa: E402
from tcgen05_mma import TCGEN, copy_image, place  # noqa: E402
from case_files import write_single_case  # noqa: E402

REGION = 8192
# (instruction shape, rows, bytes a row, swizzle code (wgmma's numbering), first column, CuTe ValID lane modes
# (shape, stride) beyond the row: broadcast / repeat)
SHAPES = [("128x256b", 128, 32, 0, 0, (128, 1)), ("128x128b", 128, 16, 3, 8, (128, 1)),
          ("64x128b.warpx2::02_13", 64, 16, 2, 12, ((64, 2), (1, 64))),
          ("64x128b.warpx2::01_23", 64, 16, 1, 16, ((32, 2, 2), (1, 64, 32))),
          ("32x128b.warpx4", 32, 16, 3, 20, ((32, 4), (1, 32)))]


def lanes(rows, modes):
    """Row r's lanes: CuTe's ValID over the row modes and the broadcast ones (a stride-0 source)."""
    shape, stride = modes
    total = 128
    out = {}
    for i in range(total):
        lane = layout(shape, stride, i)
        out.setdefault(i % rows, []).append(lane)
    return out


def kernel(n):
    descs = ", ".join(f".param .u64 p_d{i}" for i in range(n))
    L = [".version 8.7", ".target sm_100a", ".address_size 64", "",
         f".visible .entry k_cp(.param .u64 p_img, .param .u64 p_out, {descs})", "{", "\t.reg .pred %p<4>;",
         "\t.reg .b32 %r<24>, %v<24>;", "\t.reg .b64 %rd<16>;", f"\t.shared .align 1024 .b8 s_img[{REGION * n}];",
         "\t.shared .align 8 .b64 s_bar;", "\t.shared .align 4 .b32 s_taddr;", "\tmov.u32 %r1, %tid.x;",
         "\tld.param.u64 %rd1, [p_img];", "\tcvta.to.global.u64 %rd1, %rd1;", "\tmov.u32 %r2, s_img;",
         *copy_image(REGION * n, 512), "\tfence.proxy.async.shared::cta;", "\tmov.u32 %r6, s_taddr;", "\tmov.u32 %r7, s_bar;",
         "\tshr.u32 %r8, %r1, 5;", "\tsetp.ne.u32 %p2, %r8, 0;", "\t@%p2 bra $L_allocated;",
         "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r6], 32;", "$L_allocated:",
         "\tsetp.ne.u32 %p3, %r1, 0;", "\t@%p3 bra $L_inited;", "\tmbarrier.init.shared::cta.b64 [%r7], 1;",
         "$L_inited:", "\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\ttcgen05.fence::after_thread_sync;",
         "\tld.shared.b32 %r9, [%r6];", "\t@%p3 bra $L_issued;", "\tshr.u32 %r10, %r2, 4;",
         "\tcvt.u64.u32 %rd4, %r10;"]
    for i, (shape, _, _, _, col, _) in enumerate(SHAPES):
        L += [f"\tld.param.u64 %rd5, [p_d{i}];", "\tadd.u64 %rd5, %rd5, %rd4;", f"\tadd.u32 %r11, %r9, {col};",
              f"\ttcgen05.cp.cta_group::1.{shape} [%r11], %rd5;"]
    L += ["\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r7];", "$L_issued:", "$L_wait:",
          "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r7], 0;", "\t@!%p1 bra $L_wait;",
          "\ttcgen05.fence::after_thread_sync;", "\tshl.b32 %r12, %r8, 21;", "\tadd.u32 %r13, %r9, %r12;",
          "\ttcgen05.ld.sync.aligned.32x32b.x16.b32 {" + ", ".join(f"%v{i}" for i in range(16)) + "}, [%r13];",
          "\tadd.u32 %r14, %r13, 16;",
          "\ttcgen05.ld.sync.aligned.32x32b.x8.b32 {" + ", ".join(f"%v{i}" for i in range(16, 24)) + "}, [%r14];",
          "\ttcgen05.wait::ld.sync.aligned;", "\tld.param.u64 %rd7, [p_out];", "\tcvta.to.global.u64 %rd7, %rd7;",
          "\tmul.wide.u32 %rd8, %r1, 96;", "\tadd.u64 %rd7, %rd7, %rd8;"]
    L += [f"\tst.global.v4.b32 [%rd7+{16 * q}], {{%v{4 * q}, %v{4 * q + 1}, %v{4 * q + 2}, %v{4 * q + 3}}};"
          for q in range(6)]
    L += ["\ttcgen05.fence::before_thread_sync;", "\tbar.sync 0;", "\t@%p2 bra $L_end;",
          "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r9, 32;",
          "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "$L_end:", "\tret;", "}", ""]
    return "\n".join(L)


root = sys.argv[1]
rnd = random.Random(601)
img = bytearray(REGION * len(SHAPES))
out = [[0] * 24 for _ in range(128)]
params = [{"type": "u64", "buffer": "img"}, {"type": "u64", "buffer": "out"}]
for i, (shape, rows, nbytes, code, col, modes) in enumerate(SHAPES):
    mat = [[(rnd.getrandbits(8), None) for _ in range(nbytes)] for _ in range(rows)]
    lbo, sbo = place(img, REGION * i, rows, nbytes, code, mat, 1)
    start = REGION * i
    params.append({"type": "u64", "bits": f"{(start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | TCGEN[code] << 61:x}"})
    for r, where in lanes(rows, modes).items():
        words = struct.unpack(f"<{nbytes // 4}I", bytes(b for b, _ in mat[r]))
        for lane in where:
            out[lane][col:col + len(words)] = words
name = "tcgen05_cp_shapes"
d = os.path.join(root, name)
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "img.bin"), "wb") as f:
    f.write(bytes(img))
with open(os.path.join(d, "out.expect.bin"), "wb") as f:
    f.write(b"".join(struct.pack("<24I", *row) for row in out))
with open(os.path.join(d, "kernel.ptx"), "w") as f:
    f.write(kernel(len(SHAPES)))
c = {"name": f"tcgen05/{name}", "description": "tcgen05.cp shapes against CuTe's UTCCP atoms", "ptx": "kernel.ptx",
     "entry": "k_cp", "min_sm": 100, "grid": [1, 1, 1], "block": [128, 1, 1], "dynamic_shared_bytes": 0,
     "params": params, "buffers": {"img": {"bytes": len(img), "init": "img.bin"},
                                   "out": {"bytes": 128 * 96, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                                           "compare": {"as": "u32"}}}}
write_single_case(root, name, c)
