"""Hopper cases for generate.py: the Tensor Memory Accelerator (cp.async.bulk.tensor tile loads with every
swizzle mode and out-of-bound boxes, tensor stores and reductions, bulk copies and reductions) and wgmma
(m64nNk16 with A from registers or a descriptor, B from a descriptor, every swizzle mode, transposes, scale-d and
imm-scale-a). Tensor maps are "tensormap" parameters (README.md): the runner encodes them with
cuTensorMapEncodeTiled over a case buffer. wgmma cases copy a byte image of shared memory (laid out here by the
descriptor rules) into shared memory and pass the descriptors without their start address, which the kernel adds.
"""
import json
import os
import random
import struct

HEADER = ["//", "// ptxforge conformance case (tests/conformance/cases/hopper.py)", "//", ".version 8.0",
          ".target sm_90a", ".address_size 64", ""]


def write_case(out, cases, cat, name, desc, ptx, entry, grid, block, params, buffers, files, version="8.0"):
    d = os.path.join(out, cat, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(ptx)
    for fn, data in files.items():
        with open(os.path.join(d, fn), "wb") as f:
            f.write(data)
    case = {"name": f"{cat}/{name}", "description": desc, "ptx": "kernel.ptx", "entry": entry, "min_sm": 90,
            "grid": grid, "block": block, "dynamic_shared_bytes": 0, "params": params, "buffers": buffers}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    cases.append({"name": case["name"], "dir": case["name"], "min_sm": 90, "ptx_version": version,
                  "target": "sm_90a", "description": desc})


def tmap(buffer, dtype, dims, strides, box, swizzle=0, oob_fill=0, estrides=None):
    return {"type": "tensormap", "tensormap": {
        "buffer": buffer, "data_type": dtype, "global_dim": dims, "global_strides": strides, "box_dim": box,
        "element_strides": estrides or [1] * len(dims), "interleave": 0, "swizzle": swizzle, "l2_promotion": 0,
        "oob_fill": oob_fill}}


# ---- TMA tile loads: every block loads a 2D box at (ctaid.x * 40 - 8, ctaid.y * 12 - 4), some boxes partly out
# of bounds, and copies the shared-memory bytes (swizzled as they landed) out.
TMA_LOAD = HEADER + [
    ".visible .entry k_tma_load(",
    "\t.param .align 64 .b8 p_map[128],",
    "\t.param .u64 p_out,",
    "\t.param .u32 p_bytes",
    ")",
    "{",
    "\t.reg .pred %p<4>;",
    "\t.reg .b32 %r<24>;",
    "\t.reg .b64 %rd<8>;",
    "\t.shared .align 1024 .b8 s_box[4096];",
    "\t.shared .align 8 .b64 s_bar;",
    "\tmov.u32 %r1, %tid.x;",
    "\tld.param.u32 %r2, [p_bytes];",
    "\tmov.u32 %r3, s_bar;",
    "\tmov.u32 %r4, s_box;",
    "\tsetp.ne.u32 %p1, %r1, 0;",
    "\t@%p1 bra $L_wait;",
    "\tmbarrier.init.shared::cta.b64 [%r3], 1;",
    "\tfence.proxy.async.shared::cta;",
    "\tmov.u32 %r5, %ctaid.x;",
    "\tmul.lo.u32 %r5, %r5, 40;",
    "\tsub.u32 %r5, %r5, 8;",
    "\tmov.u32 %r6, %ctaid.y;",
    "\tmul.lo.u32 %r6, %r6, 12;",
    "\tsub.u32 %r6, %r6, 4;",
    "\tmov.b64 %rd7, p_map;",
    "\tcvta.param.u64 %rd1, %rd7;",
    "\tprefetch.tensormap [%rd1];",
    "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r3], %r2;",
    "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r5, %r6}], [%r3];",
    "$L_wait:",
    "\tbar.sync 0;",
    "$L_poll:",
    "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;",
    "\t@!%p2 bra $L_poll;",
    # out + block * 4096: copy the box's bytes, 4 per thread per step
    "\tmov.u32 %r7, %ctaid.y;",
    "\tmov.u32 %r8, %nctaid.x;",
    "\tmov.u32 %r9, %ctaid.x;",
    "\tmad.lo.u32 %r7, %r7, %r8, %r9;",
    "\tld.param.u64 %rd3, [p_out];",
    "\tcvta.to.global.u64 %rd3, %rd3;",
    "\tmul.wide.u32 %rd4, %r7, 4096;",
    "\tadd.u64 %rd3, %rd3, %rd4;",
    "\tshl.b32 %r10, %r1, 2;",
    "$L_copy:",
    "\tsetp.ge.u32 %p3, %r10, %r2;",
    "\t@%p3 bra $L_done;",
    "\tadd.u32 %r11, %r4, %r10;",
    "\tld.shared.u32 %r12, [%r11];",
    "\tcvt.u64.u32 %rd5, %r10;",
    "\tadd.u64 %rd6, %rd3, %rd5;",
    "\tst.global.u32 [%rd6], %r12;",
    "\tadd.u32 %r10, %r10, 512;",
    "\tbra.uni $L_copy;",
    "$L_done:",
    "\tret;",
    "}", ""]


def zeroed_load_kernel():
    """TMA_LOAD, but shared memory is zeroed first (so bytes the copy does not write read as zeros) and the
    transaction count (p_bytes) and the bytes copied out (p_copy) are separate parameters."""
    L = list(TMA_LOAD)
    L[L.index("\t.param .u32 p_bytes")] = "\t.param .u32 p_bytes,\n\t.param .u32 p_copy"
    at = L.index("\tsetp.ne.u32 %p1, %r1, 0;")
    L[at:at] = ["\tshl.b32 %r20, %r1, 2;", "$L_zero:", "\tadd.u32 %r21, %r4, %r20;", "\tst.shared.u32 [%r21], 0;",
                "\tadd.u32 %r20, %r20, 512;", "\tsetp.lt.u32 %p3, %r20, 4096;", "\t@%p3 bra $L_zero;",
                "\tbar.sync 0;"]
    L[L.index("\tsetp.ge.u32 %p3, %r10, %r2;")] = "\tsetp.ge.u32 %p3, %r10, %r22;"
    L.insert(L.index("\tld.param.u32 %r2, [p_bytes];") + 1, "\tld.param.u32 %r22, [p_copy];")
    return "\n".join(L).replace("k_tma_load", "k_tma_load_zeroed")


def tma_loads(out, cases):
    rnd = random.Random(91)
    w, h, pitch = 100, 40, 208  # elements of 2 bytes; rows padded to 208 bytes
    src = bytes(rnd.getrandbits(8) for _ in range(pitch * h))
    grid = [3, 4, 1]
    for sw, name, inner in [(0, "none", 32), (1, "32b", 16), (2, "64b", 32), (3, "128b", 64)]:
        rows = 16
        nbytes = inner * 2 * rows
        params = [tmap("src", 1, [w, h], [pitch], [inner, rows], swizzle=sw),
                  {"type": "u64", "buffer": "out"}, {"type": "u32", "value": nbytes}]
        buffers = {"src": {"bytes": len(src), "init": "src.bin"},
                   "out": {"bytes": 4096 * 12, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                           "compare": {"as": "u32"}}}
        write_case(out, cases, "tma", f"tile_2d_swizzle_{name}",
                   f"cp.async.bulk.tensor.2d tile loads of a {inner}x{rows} u16 box with swizzle {name} at 12 "
                   "places, partly out of bounds on every side (zero fill), completing an mbarrier transaction; "
                   "the shared-memory bytes as they landed", "\n".join(TMA_LOAD), "k_tma_load", grid, [128, 1, 1],
                   params, buffers, {"src.bin": src})
    # an inner box narrower than the swizzle span: rows land a span apart
    params = [tmap("src", 1, [w, h], [pitch], [32, 16], swizzle=3), {"type": "u64", "buffer": "out"},
              {"type": "u32", "value": 1024}, {"type": "u32", "value": 2048}]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"},
               "out": {"bytes": 4096 * 12, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}}}
    write_case(out, cases, "tma", "tile_2d_swizzle_128b_box64b",
               "cp.async.bulk.tensor.2d tile loads of a 32x16 u16 box (64-byte rows) with the 128B swizzle: each row "
               "lands 128 bytes after the last, its chunks swizzled; the transaction count is the box's 1024 bytes",
               zeroed_load_kernel(), "k_tma_load_zeroed", grid, [128, 1, 1], params, buffers, {"src.bin": src})
    # element strides (2, 1): the GPU loads the rows whole (16 elements, 512 bytes in the transaction count)
    srnd = random.Random(7)
    srcs = b"".join(struct.pack("<f", srnd.uniform(-8, 8)) for _ in range(64 * 24))
    params = [tmap("src", 7, [60, 24], [256], [16, 8], estrides=[2, 1]), {"type": "u64", "buffer": "out"},
              {"type": "u32", "value": 512}, {"type": "u32", "value": 1024}]
    buffers = {"src": {"bytes": len(srcs), "init": "src.bin"},
               "out": {"bytes": 4096 * 12, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "f32"}}}
    write_case(out, cases, "tma", "tile_2d_f32_inner_element_stride",
               "cp.async.bulk.tensor.2d tile loads of 16x8 f32 boxes with element strides (2, 1): the rows load "
               "whole, 512 bytes of transaction", zeroed_load_kernel(), "k_tma_load_zeroed", grid, [128, 1, 1],
               params, buffers, {"src.bin": srcs})
    # f32 with the NaN fill
    srcf = b"".join(struct.pack("<f", rnd.uniform(-8, 8)) for _ in range(64 * 24))
    params = [tmap("src", 7, [60, 24], [256], [16, 8], oob_fill=1),
              {"type": "u64", "buffer": "out"}, {"type": "u32", "value": 16 * 8 * 4}]
    buffers = {"src": {"bytes": len(srcf), "init": "src.bin"},
               "out": {"bytes": 4096 * 12, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "f32"}}}
    write_case(out, cases, "tma", "tile_2d_f32_nan_fill",
               "cp.async.bulk.tensor.2d tile loads of 16x8 f32 boxes with the NaN out-of-bound fill",
               "\n".join(TMA_LOAD), "k_tma_load", grid, [128, 1, 1], params, buffers, {"src.bin": srcf})
    # f16 and bf16 with the NaN fill
    hrnd = random.Random(96)
    srch = bytes(hrnd.getrandbits(8) for _ in range(128 * 24))
    for dtype, tname in [(6, "f16"), (9, "bf16")]:
        params = [tmap("src", dtype, [60, 24], [128], [16, 8], oob_fill=1),
                  {"type": "u64", "buffer": "out"}, {"type": "u32", "value": 16 * 8 * 2}]
        buffers = {"src": {"bytes": len(srch), "init": "src.bin"},
                   "out": {"bytes": 4096 * 12, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                           "compare": {"as": "u32"}}}
        write_case(out, cases, "tma", f"tile_2d_{tname}_nan_fill",
                   f"cp.async.bulk.tensor.2d tile loads of 16x8 {tname} boxes with the NaN out-of-bound fill",
                   "\n".join(TMA_LOAD), "k_tma_load", grid, [128, 1, 1], params, buffers, {"src.bin": srch})


# ---- TMA stores and reductions: each block fills a 16x8 u32 box in shared memory and stores it at
# (ctaid.x * 16 + 4, 14) (the last box and every box's last rows out of bounds), or adds it at (4, 6) where
# every block adds (its last rows out of bounds). On the GPU a store at a negative coordinate, or a reduction
# whose box starts at a byte offset that is not a multiple of 16, is an illegal instruction (README.md).
def tma_store_ptx(instr, x, y):
    return "\n".join(HEADER + [
        ".visible .entry k_tma_store(",
        "\t.param .align 64 .b8 p_map[128],",
        "\t.param .u64 p_in",
        ")",
        "{",
        "\t.reg .pred %p<4>;",
        "\t.reg .b32 %r<24>;",
        "\t.reg .b64 %rd<8>;",
        "\t.shared .align 1024 .b8 s_box[512];",
        "\tmov.u32 %r1, %tid.x;",
        "\tmov.u32 %r2, %ctaid.x;",
        "\tld.param.u64 %rd1, [p_in];",
        "\tcvta.to.global.u64 %rd1, %rd1;",
        "\tshl.b32 %r3, %r2, 9;",
        "\tshl.b32 %r4, %r1, 2;",
        "\tadd.u32 %r3, %r3, %r4;",
        "\tcvt.u64.u32 %rd2, %r3;",
        "\tadd.u64 %rd2, %rd1, %rd2;",
        "\tld.global.u32 %r5, [%rd2];",
        "\tmov.u32 %r6, s_box;",
        "\tadd.u32 %r7, %r6, %r4;",
        "\tst.shared.u32 [%r7], %r5;",
        "\tfence.proxy.async.shared::cta;",
        "\tbar.sync 0;",
        "\tsetp.ne.u32 %p1, %r1, 0;",
        "\t@%p1 bra $L_done;",
        f"\t{x}",
        f"\t{y}",
        "\tmov.b64 %rd5, p_map;",
        "\tcvta.param.u64 %rd3, %rd5;",
        f"\t{instr} [%rd3, {{%r11, %r12}}], [%r6];",
        "\tcp.async.bulk.commit_group;",
        "\tcp.async.bulk.wait_group.read 0;",
        "\tcp.async.bulk.wait_group 0;",
        "$L_done:",
        "\tret;",
        "}", ""])


def tma_store(out, cases):
    rnd = random.Random(92)
    src = bytes(rnd.getrandbits(8) for _ in range(4 * 512))
    acc = b"".join(struct.pack("<I", rnd.getrandbits(20)) for _ in range(32 * 16))
    store_xy = ("shl.b32 %r11, %r2, 4;\n\tadd.u32 %r11, %r11, 4;", "mov.u32 %r12, 14;")
    for sw, name in [(0, "none"), (2, "64b")]:
        params = [tmap("dst", 2, [60, 20], [256], [16, 8], swizzle=sw), {"type": "u64", "buffer": "src"}]
        buffers = {"src": {"bytes": len(src), "init": "src.bin"},
                   "dst": {"bytes": 256 * 20, "init": {"fill_byte": 205}, "expect": "dst.expect.bin",
                           "compare": {"as": "u32"}}}
        write_case(out, cases, "tma", f"store_2d_swizzle_{name}",
                   f"cp.async.bulk.tensor.2d stores of 16x8 u32 boxes from shared memory (swizzle {name}), clipped "
                   "at the tensor's edges, with a bulk group",
                   tma_store_ptx("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", *store_xy),
                   "k_tma_store", [4, 1, 1], [128, 1, 1], params, buffers, {"src.bin": src})
    params = [tmap("acc", 2, [20, 12], [128], [16, 8]), {"type": "u64", "buffer": "src"}]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"},
               "acc": {"bytes": len(acc), "init": "acc.init.bin", "expect": "acc.expect.bin",
                       "compare": {"as": "u32"}}}
    write_case(out, cases, "tma", "reduce_add_2d",
               "cp.reduce.async.bulk.tensor.2d .add of every block's 16x8 u32 box onto one place, clipped at the "
               "tensor's edge", tma_store_ptx("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
                                              "mov.u32 %r11, 4;", "mov.u32 %r12, 6;"),
               "k_tma_store", [4, 1, 1], [128, 1, 1], params, buffers, {"src.bin": src, "acc.init.bin": acc})


# ---- non-tensor bulk copies and reductions
BULK = HEADER + [
    ".visible .entry k_bulk(",
    "\t.param .u64 p_in,",
    "\t.param .u64 p_out,",
    "\t.param .u64 p_sum,",
    "\t.param .u64 p_min",
    ")",
    "{",
    "\t.reg .pred %p<4>;",
    "\t.reg .b32 %r<24>;",
    "\t.reg .b64 %rd<12>;",
    "\t.shared .align 128 .b8 s_buf[1024];",
    "\t.shared .align 8 .b64 s_bar;",
    "\tmov.u32 %r1, %tid.x;",
    "\tmov.u32 %r2, %ctaid.x;",
    "\tmov.u32 %r3, s_bar;",
    "\tmov.u32 %r4, s_buf;",
    "\tld.param.u64 %rd1, [p_in];",
    "\tld.param.u64 %rd2, [p_out];",
    "\tld.param.u64 %rd3, [p_sum];",
    "\tld.param.u64 %rd4, [p_min];",
    "\tmul.wide.u32 %rd5, %r2, 1024;",
    "\tadd.u64 %rd1, %rd1, %rd5;",
    "\tadd.u64 %rd2, %rd2, %rd5;",
    "\tsetp.ne.u32 %p1, %r1, 0;",
    "\t@%p1 bra $L_wait;",
    "\tmbarrier.init.shared::cta.b64 [%r3], 1;",
    "\tfence.proxy.async.shared::cta;",
    "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd6, [%r3], 1024;",
    "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], 1024, [%r3];",
    "$L_wait:",
    "\tbar.sync 0;",
    "$L_poll:",
    "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;",
    "\t@!%p2 bra $L_poll;",
    "\t@%p1 bra $L_done;",
    "\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r4], 1024;",
    "\tcp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd3], [%r4], 512;",
    "\tadd.u32 %r5, %r4, 512;",
    "\tcp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%rd4], [%r5], 512;",
    "\tcp.async.bulk.commit_group;",
    "\tcp.async.bulk.wait_group 0;",
    "$L_done:",
    "\tret;",
    "}", ""]


def bulk(out, cases):
    rnd = random.Random(93)
    src = bytes(rnd.getrandbits(8) for _ in range(4 * 1024))
    s = b"".join(struct.pack("<I", rnd.getrandbits(32)) for _ in range(128))
    m = b"".join(struct.pack("<i", rnd.randrange(-2**31, 2**31)) for _ in range(128))
    params = [{"type": "u64", "buffer": b} for b in ("src", "dst", "sum", "min")]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"},
               "dst": {"bytes": len(src), "init": {"fill_byte": 205}, "expect": "dst.expect.bin",
                       "compare": {"as": "u32"}},
               "sum": {"bytes": 512, "init": "sum.init.bin", "expect": "sum.expect.bin", "compare": {"as": "u32"}},
               "min": {"bytes": 512, "init": "min.init.bin", "expect": "min.expect.bin", "compare": {"as": "s32"}}}
    write_case(out, cases, "tma", "bulk_copy_reduce",
               "cp.async.bulk global->shared completing an mbarrier transaction, shared->global with a bulk group, "
               "and cp.reduce.async.bulk .add.u32 / .min.s32 from four blocks onto the same memory",
               "\n".join(BULK), "k_bulk", [4, 1, 1], [64, 1, 1], params, buffers,
               {"src.bin": src, "sum.init.bin": s, "min.init.bin": m})


# ---- wgmma
def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def bf16_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0] >> 16


SPANS = {0: 0, 1: 128, 2: 64, 3: 32}  # descriptor swizzle code -> span bytes


def swz(off, span):
    return off ^ (((off >> 7) & (span // 16 - 1)) << 4) if span else off


def desc_offset(start, lbo, sbo, code, mn, k, nbytes, trans):
    s = SPANS[code]
    if not trans:
        kb = k * nbytes
        off = start + (mn // 8) * sbo + ((mn % 8) * s + kb if s else (kb // 16) * lbo + (mn % 8) * 16 + kb % 16)
    else:
        mb = mn * nbytes
        if s:
            off = start + mb % s + (mb // s) * lbo + (k % 8) * s + (k // 8) * sbo
        else:
            off = start + (mb // 16) * sbo + mb % 16 + (k % 8) * 16 + (k // 8) * lbo
    return swz(off, s)


def layout(img, start, rows, code, trans, mat, bits):
    """Places mat (rows x 16, MN x K) into img by the descriptor rules; returns (lbo, sbo, end offset)."""
    s = SPANS[code]
    if not trans:  # K-major: LBO the next 16 bytes of K (no swizzle only), SBO the next 8 rows
        lbo, sbo = (128, 256) if not s else (16, 8 * s)
    else:  # MN-major: no swizzle, LBO the next 8 K-rows and SBO the next 16 bytes of MN; swizzled, the reverse
        lbo, sbo = (128, 256) if not s else (16 * s, 8 * s)
    end = 0
    for mn in range(rows):
        for k in range(16):
            o = desc_offset(start, lbo, sbo, code, mn, k, 2, trans)
            img[o:o + 2] = struct.pack("<H", bits(mat[mn][k]))
            end = max(end, o + 2)
    return lbo, sbo, end


def wgmma_ptx(name, n, dtype, atype, a_regs, scale_a, trans_a, trans_b):
    nd = n // 2 if dtype == "f32" else n // 4
    dl = ", ".join(f"%d{i}" for i in range(nd))
    L = HEADER + [f".visible .entry k_{name}(", "\t.param .u64 p_img,", "\t.param .u32 p_img_bytes,",
                  "\t.param .u64 p_adesc,", "\t.param .u64 p_bdesc,", "\t.param .u64 p_areg,", "\t.param .u64 p_out",
                  ")", "{", "\t.reg .pred %p<4>;", "\t.reg .b32 %r<24>, %a<4>;", f"\t.reg .b32 %d<{nd}>;",
                  "\t.reg .b64 %rd<16>;", "\t.shared .align 1024 .b8 s_img[16384];",
                  "\tmov.u32 %r1, %tid.x;", "\tld.param.u64 %rd1, [p_img];", "\tcvta.to.global.u64 %rd1, %rd1;",
                  "\tld.param.u32 %r2, [p_img_bytes];", "\tmov.u32 %r3, s_img;", "\tshl.b32 %r4, %r1, 2;",
                  "$L_copy:", "\tsetp.ge.u32 %p1, %r4, %r2;", "\t@%p1 bra $L_copied;", "\tcvt.u64.u32 %rd2, %r4;",
                  "\tadd.u64 %rd3, %rd1, %rd2;", "\tld.global.u32 %r5, [%rd3];", "\tadd.u32 %r6, %r3, %r4;",
                  "\tst.shared.u32 [%r6], %r5;", "\tadd.u32 %r4, %r4, 512;", "\tbra.uni $L_copy;", "$L_copied:",
                  "\tfence.proxy.async.shared::cta;", "\tbar.sync 0;",
                  # descriptors: add (s_img >> 4) to the start address field
                  "\tshr.u32 %r7, %r3, 4;", "\tcvt.u64.u32 %rd4, %r7;",
                  "\tld.param.u64 %rd5, [p_adesc];", "\tadd.u64 %rd5, %rd5, %rd4;",
                  "\tld.param.u64 %rd6, [p_bdesc];", "\tadd.u64 %rd6, %rd6, %rd4;",
                  "\tld.param.u64 %rd7, [p_areg];", "\tcvta.to.global.u64 %rd7, %rd7;",
                  "\tmul.wide.u32 %rd8, %r1, 16;", "\tadd.u64 %rd7, %rd7, %rd8;",
                  "\tld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd7];"]
    # D starts as garbage (1.0 or 0x3c00 pairs): the first product ignores it (scale-d false), the second adds
    one = "0x3F800000" if dtype == "f32" else "0x3C003C00"
    L += [f"\tmov.b32 %d{i}, {one};" for i in range(nd)]
    a = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd5"
    tail = f"{scale_a}, 1" + ("" if a_regs else f", {trans_a}") + f", {trans_b}"
    instr = f"wgmma.mma_async.sync.aligned.m64n{n}k16.{dtype}.{atype}.{atype} {{{dl}}}, {a}, %rd6"
    L += ["\twgmma.fence.sync.aligned;", "\tsetp.ne.u32 %p2, %r1, %r1;", f"\t{instr}, %p2, {tail};",
          "\tsetp.eq.u32 %p3, %r1, %r1;", f"\t{instr}, %p3, {tail};",
          "\twgmma.commit_group.sync.aligned;", "\twgmma.wait_group.sync.aligned 0;",
          "\tld.param.u64 %rd9, [p_out];", "\tcvta.to.global.u64 %rd9, %rd9;",
          f"\tmul.wide.u32 %rd10, %r1, {nd * 4};", "\tadd.u64 %rd9, %rd9, %rd10;"]
    L += [f"\tst.global.b32 [%rd9+{4 * i}], %d{i};" for i in range(nd)]
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def wgmma_case(out, cases, rnd, n, dtype, atype, a_regs, a_code, b_code, trans_a, trans_b, scale_a):
    bits = f16_bits if atype == "f16" else bf16_bits
    A = [[rnd.randrange(-8, 9) / 8 for _ in range(16)] for _ in range(64)]
    Bt = [[rnd.randrange(-8, 9) / 8 for _ in range(16)] for _ in range(n)]  # N x K
    img = bytearray(16384)
    alb, asb, _ = layout(img, 0, 64, a_code, trans_a, A, bits) if not a_regs else (0, 0, 0)
    blb, bsb, end = layout(img, 8192, n, b_code, trans_b, Bt, bits)
    used = (end + 511) // 512 * 512

    def desc(start, lbo, sbo, code):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | code << 62

    adesc = desc(0, alb, asb, a_code) if not a_regs else 0
    bdesc = desc(8192, blb, bsb, b_code)
    # A registers in the fragment layout: warp w rows 16w.., lane l: g = l / 4, t = l % 4
    areg = b""
    for tid in range(128):
        w, l = tid // 32, tid % 32
        g, t = l // 4, l % 4
        for r in range(4):
            row, col = 16 * w + g + 8 * (r % 2), 2 * t + 8 * (r // 2)
            areg += struct.pack("<HH", bits(A[row][col]), bits(A[row][col + 1]))
    tag = ("rs" if a_regs else "ss") + f"_a{SPANS[a_code] if not a_regs else 'reg'}_b{SPANS[b_code]}" + \
          ("_ta" if trans_a else "") + ("_tb" if trans_b else "") + ("_nega" if scale_a < 0 else "")
    name = f"m64n{n}k16_{atype}_{dtype}_{tag}"
    nd = n // 2 if dtype == "f32" else n // 4
    params = [{"type": "u64", "buffer": "img"}, {"type": "u32", "value": used}, {"type": "u64", "bits": f"{adesc:x}"},
              {"type": "u64", "bits": f"{bdesc:x}"}, {"type": "u64", "buffer": "areg"},
              {"type": "u64", "buffer": "out"}]
    buffers = {"img": {"bytes": used, "init": "img.bin"}, "areg": {"bytes": len(areg), "init": "areg.bin"},
               "out": {"bytes": 128 * nd * 4, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "f32" if dtype == "f32" else "f16"}}}
    desc_text = (f"wgmma.mma_async m64n{n}k16 .{dtype}.{atype}: A from " +
                 ("registers" if a_regs else f"a descriptor (swizzle {SPANS[a_code] or 'none'}"
                  f"{', transposed' if trans_a else ''})") +
                 f", B from a descriptor (swizzle {SPANS[b_code] or 'none'}{', transposed' if trans_b else ''}), "
                 f"imm-scale-a {scale_a}, a first product with scale-d false and a second accumulating")
    write_case(out, cases, "wgmma", name, desc_text,
               wgmma_ptx(name, n, dtype, atype, a_regs, scale_a, trans_a, trans_b), f"k_{name}", [1, 1, 1],
               [128, 1, 1], params, buffers, {"img.bin": bytes(img[:used]), "areg.bin": areg})


def wgmma(out, cases):
    rnd = random.Random(94)
    wgmma_case(out, cases, rnd, 8, "f32", "f16", True, 0, 0, 0, 0, 1)
    wgmma_case(out, cases, rnd, 64, "f32", "f16", True, 0, 1, 0, 0, 1)
    wgmma_case(out, cases, rnd, 64, "f32", "f16", False, 0, 0, 0, 0, 1)
    wgmma_case(out, cases, rnd, 64, "f32", "f16", False, 1, 1, 0, 0, 1)
    wgmma_case(out, cases, rnd, 128, "f32", "f16", False, 2, 3, 0, 0, -1)
    wgmma_case(out, cases, rnd, 128, "f32", "f16", True, 0, 2, 0, 0, 1)
    wgmma_case(out, cases, rnd, 64, "f32", "bf16", False, 1, 1, 1, 1, 1)
    wgmma_case(out, cases, rnd, 32, "f32", "f16", False, 0, 0, 1, 1, 1)
    wgmma_case(out, cases, rnd, 64, "f16", "f16", False, 3, 1, 0, 1, 1)


# ---- sparse wgmma (wgmma.mma_async.sp): A is 64 x K structured-sparse, held as its non-zero half (64 x K/2, in
# registers or behind a descriptor laid out like a dense A of K/2 columns) plus one metadata word per thread.
SP_TYPES = {  # A type -> (bytes, dense K, values: a list of (bits, value) pairs)
    "f16": (2, 32), "bf16": (2, 32), "tf32": (4, 16), "e4m3": (1, 64), "s8": (1, 64), "u8": (1, 64)}


def e4m3_value(bits):
    e, m = (bits >> 3) & 15, bits & 7
    v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -v if bits & 0x80 else v


def sp_element(rnd, t):
    """A random element of type t as (bits, value): multiples of 1/8 in [-1, 1] for the floating types (every
    product and sum exact), any byte for the integer types."""
    if t in ("s8", "u8"):
        b = rnd.getrandbits(8)
        return b, (b - 256 if t == "s8" and b > 127 else b)
    v = rnd.randrange(-8, 9) / 8
    if t == "f16":
        return f16_bits(v), v
    if t == "bf16":
        return bf16_bits(v), v
    if t == "tf32":
        return struct.unpack("<I", struct.pack("<f", v))[0], v
    return next(b for b in range(256) if e4m3_value(b) == v and not (v == 0 and b)), v


def layout_k(img, start, rows, kcount, code, trans, mat, nbytes):
    """Places mat (rows x kcount element bits, MN x K) by the descriptor rules; returns (lbo, sbo, end offset)."""
    s, kb = SPANS[code], kcount * nbytes
    if not trans:  # K-major: LBO the next 16 bytes of K (no swizzle only), SBO the next 8 rows
        lbo, sbo = (128, 128 * (kb // 16)) if not s else (16, 8 * s)
    else:  # MN-major: no swizzle, LBO the next 8 K-rows and SBO the next 16 bytes of MN; swizzled, the reverse
        lbo, sbo = (128, 16 * kcount) if not s else (kcount * s, 8 * s)
    end = 0
    for mn in range(rows):
        for k in range(kcount):
            o = desc_offset(start, lbo, sbo, code, mn, k, nbytes, trans)
            img[o:o + nbytes] = mat[mn][k].to_bytes(nbytes, "little")
            end = max(end, o + nbytes)
    return lbo, sbo, end


def wgmma_sp_ptx(name, n, dtype, atype, btype, a_regs, sel, tail):
    nd = n // 2 if dtype in ("f32", "s32") else n // 4
    dl = ", ".join(f"%d{i}" for i in range(nd))
    k = SP_TYPES[atype][1]
    L = HEADER[:3] + [".version 8.4"] + HEADER[4:] + [
        f".visible .entry k_{name}(", "\t.param .u64 p_img,", "\t.param .u32 p_img_bytes,", "\t.param .u64 p_adesc,",
        "\t.param .u64 p_bdesc,", "\t.param .u64 p_areg,", "\t.param .u64 p_meta,", "\t.param .u64 p_out", ")", "{",
        "\t.reg .pred %p<4>;", "\t.reg .b32 %r<24>, %a<4>, %m;", f"\t.reg .b32 %d<{nd}>;", "\t.reg .b64 %rd<16>;",
        "\t.shared .align 1024 .b8 s_img[16384];", "\tmov.u32 %r1, %tid.x;", "\tld.param.u64 %rd1, [p_img];",
        "\tcvta.to.global.u64 %rd1, %rd1;", "\tld.param.u32 %r2, [p_img_bytes];", "\tmov.u32 %r3, s_img;",
        "\tshl.b32 %r4, %r1, 2;", "$L_copy:", "\tsetp.ge.u32 %p1, %r4, %r2;", "\t@%p1 bra $L_copied;",
        "\tcvt.u64.u32 %rd2, %r4;", "\tadd.u64 %rd3, %rd1, %rd2;", "\tld.global.u32 %r5, [%rd3];",
        "\tadd.u32 %r6, %r3, %r4;", "\tst.shared.u32 [%r6], %r5;", "\tadd.u32 %r4, %r4, 512;", "\tbra.uni $L_copy;",
        "$L_copied:", "\tfence.proxy.async.shared::cta;", "\tbar.sync 0;", "\tshr.u32 %r7, %r3, 4;",
        "\tcvt.u64.u32 %rd4, %r7;", "\tld.param.u64 %rd5, [p_adesc];", "\tadd.u64 %rd5, %rd5, %rd4;",
        "\tld.param.u64 %rd6, [p_bdesc];", "\tadd.u64 %rd6, %rd6, %rd4;", "\tld.param.u64 %rd7, [p_areg];",
        "\tcvta.to.global.u64 %rd7, %rd7;", "\tmul.wide.u32 %rd8, %r1, 16;", "\tadd.u64 %rd7, %rd7, %rd8;",
        "\tld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd7];", "\tld.param.u64 %rd11, [p_meta];",
        "\tcvta.to.global.u64 %rd11, %rd11;", "\tmul.wide.u32 %rd12, %r1, 4;", "\tadd.u64 %rd11, %rd11, %rd12;",
        "\tld.global.b32 %m, [%rd11];"]
    one = {"f32": "0x3F800000", "f16": "0x3C003C00", "s32": "7"}[dtype]
    L += [f"\tmov.b32 %d{i}, {one};" for i in range(nd)]
    a = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd5"
    instr = (f"wgmma.mma_async.sp.sync.aligned.m64n{n}k{k}.{dtype}.{atype}.{btype} {{{dl}}}, {a}, %rd6, %m, {sel}")
    L += ["\twgmma.fence.sync.aligned;", "\tsetp.ne.u32 %p2, %r1, %r1;", f"\t{instr}, %p2{tail};",
          "\tsetp.eq.u32 %p3, %r1, %r1;", f"\t{instr}, %p3{tail};", "\twgmma.commit_group.sync.aligned;",
          "\twgmma.wait_group.sync.aligned 0;", "\tld.param.u64 %rd9, [p_out];", "\tcvta.to.global.u64 %rd9, %rd9;",
          f"\tmul.wide.u32 %rd10, %r1, {nd * 4};", "\tadd.u64 %rd9, %rd9, %rd10;"]
    L += [f"\tst.global.b32 [%rd9+{4 * i}], %d{i};" for i in range(nd)]
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def wgmma_sp_case(out, cases, rnd, n, dtype, atype, btype, a_regs, a_code, b_code, trans_b, sel, scale_a=1):
    nbytes, k = SP_TYPES[atype]
    kc = k // 2
    A = [[sp_element(rnd, atype)[0] for _ in range(kc)] for _ in range(64)]  # the stored half, 64 x K/2
    Bt = [[sp_element(rnd, btype)[0] for _ in range(k)] for _ in range(n)]  # N x K
    img = bytearray(16384)
    alb, asb, _ = layout_k(img, 0, 64, kc, a_code, False, A, nbytes) if not a_regs else (0, 0, 0)
    blb, bsb, end = layout_k(img, 8192, n, k, b_code, trans_b, Bt, nbytes)
    used = (end + 511) // 512 * 512  # the swizzled layouts leave gaps: every byte the product reads is copied

    def desc(start, lbo, sbo, code):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | code << 62

    adesc = desc(0, alb, asb, a_code) if not a_regs else 0
    bdesc = desc(8192, blb, bsb, b_code)
    per = 4 // nbytes
    areg = b""
    for tid in range(128):  # the dense fragment layout of a 16 x K/2 slice per warp
        w, l = tid // 32, tid % 32
        g, t = l // 4, l % 4
        for r in range(4):
            row, col = 16 * w + g + 8 * (r % 2), t * per + (kc // 2) * (r // 2)
            areg += b"".join(A[row][col + e].to_bytes(nbytes, "little") for e in range(per))
    fields = [0x4, 0xE] if atype == "tf32" else [0x4, 0x8, 0xC, 0x9, 0xD, 0xE]
    meta = b"".join(struct.pack("<I", sum(rnd.choice(fields) << (4 * j) for j in range(8))) for _ in range(128))
    floating = atype not in ("s8", "u8")
    tail = ""
    if floating:
        tail = f", {scale_a}, 1" + ("" if a_regs or nbytes != 2 else ", 0") + (f", {trans_b}" if nbytes == 2 else "")
    tag = ("rs" if a_regs else f"ss_a{SPANS[a_code]}") + f"_b{SPANS[b_code]}" + ("_tb" if trans_b else "") + \
        f"_sel{sel}" + ("_nega" if scale_a < 0 else "")
    name = f"sp_m64n{n}k{k}_{atype}_{btype}_{dtype}_{tag}"
    nd = n // 2 if dtype in ("f32", "s32") else n // 4
    params = [{"type": "u64", "buffer": "img"}, {"type": "u32", "value": used}, {"type": "u64", "bits": f"{adesc:x}"},
              {"type": "u64", "bits": f"{bdesc:x}"}, {"type": "u64", "buffer": "areg"}, {"type": "u64", "buffer": "meta"},
              {"type": "u64", "buffer": "out"}]
    buffers = {"img": {"bytes": used, "init": "img.bin"}, "areg": {"bytes": len(areg), "init": "areg.bin"},
               "meta": {"bytes": len(meta), "init": "meta.bin"},
               "out": {"bytes": 128 * nd * 4, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": {"f32": "f32", "f16": "f16", "s32": "s32"}[dtype]}}}
    text = (f"wgmma.mma_async.sp m64n{n}k{k} .{dtype}.{atype}.{btype}, sparsity selector {sel}: the stored half of A "
            "from " + ("registers" if a_regs else f"a descriptor (swizzle {SPANS[a_code] or 'none'})") +
            f", B from a descriptor (swizzle {SPANS[b_code] or 'none'}{', transposed' if trans_b else ''})" +
            (f", imm-scale-a {scale_a}" if floating else "") + ", every thread's metadata valid; a first product "
            "with scale-d false and a second accumulating")
    write_case(out, cases, "wgmma", name, text, wgmma_sp_ptx(name, n, dtype, atype, btype, a_regs, sel, tail),
               f"k_{name}", [1, 1, 1], [128, 1, 1], params, buffers,
               {"img.bin": bytes(img[:used]), "areg.bin": areg, "meta.bin": meta}, version="8.4")


def wgmma_sparse(out, cases):
    rnd = random.Random(95)
    wgmma_sp_case(out, cases, rnd, 64, "f32", "f16", "f16", False, 1, 1, 0, 0)
    wgmma_sp_case(out, cases, rnd, 32, "f32", "f16", "f16", False, 0, 0, 0, 1, -1)
    wgmma_sp_case(out, cases, rnd, 32, "f32", "f16", "f16", True, 0, 2, 0, 1)
    wgmma_sp_case(out, cases, rnd, 64, "f32", "bf16", "bf16", False, 2, 1, 1, 0)
    wgmma_sp_case(out, cases, rnd, 16, "f16", "f16", "f16", True, 0, 0, 1, 0)
    wgmma_sp_case(out, cases, rnd, 32, "f32", "tf32", "tf32", False, 1, 0, 0, 1)
    wgmma_sp_case(out, cases, rnd, 16, "f32", "tf32", "tf32", False, 0, 1, 0, 0)
    wgmma_sp_case(out, cases, rnd, 32, "f32", "e4m3", "e4m3", False, 1, 1, 0, 0)
    wgmma_sp_case(out, cases, rnd, 32, "s32", "s8", "s8", False, 0, 1, 0, 0)
    wgmma_sp_case(out, cases, rnd, 16, "s32", "u8", "s8", False, 1, 0, 0, 0)


def generate(out, cases):
    tma_loads(out, cases)
    tma_store(out, cases)
    bulk(out, cases)
    wgmma(out, cases)
    wgmma_sparse(out, cases)
