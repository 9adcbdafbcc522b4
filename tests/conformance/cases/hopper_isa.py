"""Issue 20's Hopper ISA breadth for generate.py: the Tensor Memory Accelerator's im2col mode (3D-5D, with im2col
offsets, traversal strides, corners on both sides), multicast copies to a cluster's CTAs (tensor and bulk), and
tensormap.replace of a map in global or shared memory (tensormap.cp_fenceproxy, fence.proxy.tensormap::generic).
Every wait on an mbarrier is bounded and its outcome stored, so a transaction count the GPU disagreed with shows
as a 0 flag rather than a hang."""
import random
import struct

from hopper import write_case, tmap

HEADER = ["//", "// ptxforge conformance case (tests/conformance/cases/hopper_isa.py)", "//", ".version 8.3",
          ".target sm_90a", ".address_size 64", ""]


def im2col_map(buffer, dtype, dims, strides, lower, upper, cpp, ppc, estrides=None, swizzle=0):
    return {"type": "tensormap", "tensormap": {
        "mode": "im2col", "buffer": buffer, "data_type": dtype, "global_dim": dims, "global_strides": strides,
        "lower_corner": lower, "upper_corner": upper, "channels_per_pixel": cpp, "pixels_per_column": ppc,
        "element_strides": estrides or [1] * len(dims), "interleave": 0, "swizzle": swizzle, "l2_promotion": 0,
        "oob_fill": 0}}


def bounded_wait(bar, flag):
    """Polls the mbarrier at [bar] for phase 0 a bounded number of times; flag = 1 when it completed."""
    return ["\tmov.u32 %r30, 0;", "$L_poll:", f"\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [{bar}], 0;",
            "\t@%p2 bra $L_waited;", "\tadd.u32 %r30, %r30, 1;", "\tsetp.lt.u32 %p3, %r30, 100000;",
            "\t@%p3 bra $L_poll;", "$L_waited:", f"\tselp.u32 {flag}, 1, 0, %p2;"]


def copy_out(src, nbytes_reg, out, flag):
    """Every thread copies 4-byte words of shared memory [src, src + nbytes) to out (64-bit) and thread 0 stores
    the flag after them at out + 4096."""
    return ["\tshl.b32 %r10, %r1, 2;", "$L_copy:", f"\tsetp.ge.u32 %p4, %r10, {nbytes_reg};", "\t@%p4 bra $L_copied;",
            f"\tadd.u32 %r11, {src}, %r10;", "\tld.shared.u32 %r12, [%r11];", "\tcvt.u64.u32 %rd5, %r10;",
            f"\tadd.u64 %rd6, {out}, %rd5;", "\tst.global.u32 [%rd6], %r12;", "\tadd.u32 %r10, %r10, 512;",
            "\tbra.uni $L_copy;", "$L_copied:", "\tsetp.ne.u32 %p4, %r1, 0;", "\t@%p4 bra $L_end;",
            f"\tst.global.u32 [{out}+4096], {flag};", "$L_end:"]


def fill_shared(base, nbytes, value):
    return ["\tshl.b32 %r20, %r1, 2;", "$L_fill:", f"\tadd.u32 %r21, {base}, %r20;", f"\tst.shared.u32 [%r21], {value};",
            "\tadd.u32 %r20, %r20, 512;", f"\tsetp.lt.u32 %p5, %r20, {nbytes};", "\t@%p5 bra $L_fill;",
            "\tfence.proxy.async.shared::cta;"]


# ---- im2col: block b reads its coordinates and offsets from p_args[b * 8 ..] (u32s: coordinates 0..dims-1,
# offsets at 5..), loads one im2col column into shared memory (filled with 0xcdcdcdcd first) and copies it out.
def im2col_ptx(dims):
    co = ", ".join(f"%c{k}" for k in range(dims))
    offs = ", ".join(f"%o{k}" for k in range(dims - 2))
    L = HEADER + [
        f".visible .entry k_im2col_{dims}d(", "\t.param .align 64 .b8 p_map[128],", "\t.param .u64 p_args,",
        "\t.param .u64 p_out,", "\t.param .u32 p_bytes", ")", "{", "\t.reg .pred %p<8>;", "\t.reg .b32 %r<40>, %c<5>;",
        "\t.reg .b16 %o<3>;", "\t.reg .b64 %rd<8>;", "\t.shared .align 1024 .b8 s_box[4096];",
        "\t.shared .align 8 .b64 s_bar;", "\tmov.u32 %r1, %tid.x;", "\tld.param.u32 %r2, [p_bytes];",
        "\tmov.u32 %r3, s_bar;", "\tmov.u32 %r4, s_box;"] + fill_shared("%r4", 4096, "-842150451") + [
        "\tbar.sync 0;", "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_wait;",
        "\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.proxy.async.shared::cta;",
        "\tld.param.u64 %rd1, [p_args];", "\tcvta.to.global.u64 %rd1, %rd1;", "\tmov.u32 %r5, %ctaid.x;",
        "\tmul.wide.u32 %rd2, %r5, 32;", "\tadd.u64 %rd1, %rd1, %rd2;"]
    L += [f"\tld.global.u32 %c{k}, [%rd1+{4 * k}];" for k in range(dims)]
    for k in range(dims - 2):
        L += [f"\tld.global.u32 %r6, [%rd1+{20 + 4 * k}];", f"\tcvt.u16.u32 %o{k}, %r6;"]
    L += ["\tmov.b64 %rd3, p_map;", "\tcvta.param.u64 %rd3, %rd3;",
          "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], %r2;",
          f"\tcp.async.bulk.tensor.{dims}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r4], "
          f"[%rd3, {{{co}}}], [%r3], {{{offs}}};",
          "$L_wait:", "\tbar.sync 0;"] + bounded_wait("%r3", "%r7") + [
          "\tld.param.u64 %rd5, [p_out];", "\tcvta.to.global.u64 %rd5, %rd5;", "\tmov.u32 %r8, %ctaid.x;",
          "\tmul.wide.u32 %rd6, %r8, 8192;", "\tadd.u64 %rd7, %rd5, %rd6;"]
    L += copy_out("%r4", "%r2", "%rd7", "%r7")
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def im2col_case(out, cases, name, desc, dims, shape, elem, dtype, lower, upper, cpp, ppc, blocks, seed,
                estrides=None):
    """shape: (C, W, H, D, N) innermost first, only dims of them; blocks: (coordinates, offsets) per block."""
    rnd = random.Random(seed)
    count = 1
    for s in shape:
        count *= s
    src = bytes(rnd.getrandbits(8) for _ in range(count * elem))
    strides, acc = [], shape[0] * elem
    for s in shape[1:]:
        strides.append(acc)
        acc *= s
    args = b""
    for coords, offs in blocks:
        words = list(coords) + [0] * (5 - len(coords)) + list(offs) + [0] * (3 - len(offs))
        args += b"".join(struct.pack("<i", w) for w in words)
    nbytes = cpp * ppc * elem
    params = [im2col_map("src", dtype, list(shape), strides, lower, upper, cpp, ppc, estrides),
              {"type": "u64", "buffer": "args"}, {"type": "u64", "buffer": "out"},
              {"type": "u32", "value": nbytes}]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"}, "args": {"bytes": len(args), "init": "args.bin"},
               "out": {"bytes": 8192 * len(blocks), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}}}
    write_case(out, cases, "tma", name, desc, im2col_ptx(dims), f"k_im2col_{dims}d", [len(blocks), 1, 1],
               [128, 1, 1], params, buffers, {"src.bin": src, "args.bin": args})


def im2col(out, cases):
    im2col_case(out, cases, "im2col_4d_pad1", "cp.async.bulk.tensor.4d .im2col loads of 32 pixels x 4 u32 channels "
                "from an NHWC tensor (2x5x6x8) with corners (-1,-1)/(-1,-1), at 8 starting points (across rows and "
                "images, from both channel halves) with im2col offsets 0-2", 4, (8, 6, 5, 2), 4, 2, [-1, -1],
                [-1, -1], 4, 32, [((0, -1, -1, 0), (0, 0)), ((4, 2, -1, 0), (1, 0)), ((0, 3, 1, 0), (2, 1)),
                                  ((4, -1, 2, 0), (1, 2)), ((0, 4, 3, 0), (0, 2)), ((0, 0, 0, 1), (2, 2)),
                                  ((4, 1, 3, 1), (1, 1)), ((0, 4, 3, 1), (0, 0))], 301)
    im2col_case(out, cases, "im2col_3d", "cp.async.bulk.tensor.3d .im2col loads of 24 pixels x 4 f32 channels from an "
                "NWC tensor (3x10x4) with corners -2/+1, at 5 starting points with im2col offsets 0-3", 3,
                (4, 10, 3), 4, 7, [-2], [1], 4, 24, [((0, -2, 0), (0,)), ((0, 5, 0), (3,)), ((0, 0, 1), (1,)),
                                                      ((0, 9, 1), (2,)), ((0, 3, 2), (0,))], 302)
    im2col_case(out, cases, "im2col_5d", "cp.async.bulk.tensor.5d .im2col loads of 40 pixels x 8 f16 channels from an "
                "NDHWC tensor (2x3x4x4x8) with corners (-1,-1,-1)/(-1,-1,-1), at 4 starting points with im2col "
                "offsets", 5, (8, 4, 4, 3, 2), 2, 6, [-1, -1, -1], [-1, -1, -1], 8, 40,
                [((0, -1, -1, -1, 0), (0, 0, 0)), ((0, 1, 2, 0, 0), (1, 2, 0)), ((0, 2, -1, 1, 1), (2, 1, 1)),
                 ((0, 0, 0, 0, 1), (1, 0, 2))], 303)
    im2col_case(out, cases, "im2col_4d_stride2", "cp.async.bulk.tensor.4d .im2col loads with traversal (element) "
                "strides 2 in W and H: 16 pixels x 4 u32 channels from an NHWC tensor (2x7x8x4), corners (-1,-1)/"
                "(-1,-1), 4 starting points", 4, (4, 8, 7, 2), 4, 2, [-1, -1], [-1, -1], 4, 16,
                [((0, -1, -1, 0), (0, 0)), ((0, 1, 1, 0), (1, 2)), ((0, 3, 3, 0), (2, 0)), ((0, -1, 1, 1), (1, 1))],
                304, estrides=[1, 2, 2, 1])


# ---- multicast: a cluster of 4; rank r loads box r of a 2D u32 tensor to offset r * 512 of every CTA in
# TMASKS[r], and copies 256 bytes with a plain bulk copy to offset 2048 + r * 256 of itself and its successor.
TMASKS = [0b1111, 0b0011, 0b1010, 0b1000]


def multicast_ptx():
    L = HEADER + [
        ".visible .entry k_multicast(", "\t.param .align 64 .b8 p_map[128],", "\t.param .u64 p_src,",
        "\t.param .u64 p_masks,", "\t.param .u64 p_out", ")", ".reqnctapercluster 4, 1, 1", "{", "\t.reg .pred %p<8>;",
        "\t.reg .b32 %r<40>;", "\t.reg .b16 %m<4>;", "\t.reg .b64 %rd<12>;", "\t.shared .align 1024 .b8 s_buf[3072];",
        "\t.shared .align 8 .b64 s_bar;", "\tmov.u32 %r1, %tid.x;", "\tmov.u32 %r3, s_bar;", "\tmov.u32 %r4, s_buf;",
        "\tmov.u32 %r13, %cluster_ctarank;"] + fill_shared("%r4", 3072, "-842150451") + [
        "\tld.param.u64 %rd1, [p_masks];", "\tcvta.to.global.u64 %rd1, %rd1;", "\tmul.wide.u32 %rd2, %r13, 16;",
        "\tadd.u64 %rd1, %rd1, %rd2;", "\tld.global.u32 %r14, [%rd1];", "\tld.global.u32 %r15, [%rd1+4];",
        "\tld.global.u32 %r16, [%rd1+8];", "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_init_done;",
        "\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.mbarrier_init.release.cluster;",
        "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r3], %r16;", "$L_init_done:",
        "\tbarrier.cluster.arrive.release.aligned;", "\tbarrier.cluster.wait.acquire.aligned;",
        "\t@%p1 bra $L_wait;",
        "\tcvt.u16.u32 %m1, %r14;", "\tcvt.u16.u32 %m2, %r15;",
        "\tshl.b32 %r5, %r13, 9;", "\tadd.u32 %r5, %r4, %r5;",
        "\tand.b32 %r6, %r13, 1;", "\tshl.b32 %r6, %r6, 4;", "\tshl.b32 %r7, %r13, 3;",
        "\tmov.b64 %rd4, p_map;", "\tcvta.param.u64 %rd4, %rd4;",
        "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%r5], [%rd4, {%r6, %r7}], [%r3], %m1;",
        "\tshl.b32 %r8, %r13, 8;", "\tadd.u32 %r9, %r8, 2048;", "\tadd.u32 %r9, %r4, %r9;",
        "\tld.param.u64 %rd5, [p_src];", "\tcvta.to.global.u64 %rd5, %rd5;", "\tcvt.u64.u32 %rd6, %r8;",
        "\tadd.u64 %rd5, %rd5, %rd6;",
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r9], [%rd5], 256, "
        "[%r3], %m2;",
        "$L_wait:"] + bounded_wait("%r3", "%r17") + [
        "\tld.param.u64 %rd7, [p_out];", "\tcvta.to.global.u64 %rd7, %rd7;", "\tmov.u32 %r19, %ctaid.x;",
        "\tmul.wide.u32 %rd8, %r19, 8192;", "\tadd.u64 %rd9, %rd7, %rd8;", "\tmov.u32 %r18, 3072;"] + copy_out("%r4", "%r18", "%rd9", "%r17") + [
        "\tbarrier.cluster.arrive.release.aligned;", "\tbarrier.cluster.wait.acquire.aligned;", "\tret;", "}", ""]
    return "\n".join(L)


def multicast(out, cases):
    rnd = random.Random(305)
    w, h = 32, 32
    src = b"".join(struct.pack("<I", rnd.getrandbits(32)) for _ in range(w * h))
    bulk = bytes(rnd.getrandbits(8) for _ in range(1024))
    bmasks = [(1 << r) | (1 << ((r + 1) % 4)) for r in range(4)]
    masks = b""
    for r in range(4):
        tx = 512 * sum(1 for q in range(4) if TMASKS[q] >> r & 1) + 256 * sum(1 for q in range(4) if bmasks[q] >> r & 1)
        masks += struct.pack("<IIII", TMASKS[r], bmasks[r], tx, 0)
    params = [tmap("src", 2, [w, h], [w * 4], [16, 8]), {"type": "u64", "buffer": "bulk"},
              {"type": "u64", "buffer": "masks"}, {"type": "u64", "buffer": "out"}]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"}, "bulk": {"bytes": len(bulk), "init": "bulk.bin"},
               "masks": {"bytes": len(masks), "init": "masks.bin"},
               "out": {"bytes": 8192 * 4, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}}}
    write_case(out, cases, "tma", "multicast_cluster4",
               "cp.async.bulk.tensor.2d and cp.async.bulk .multicast::cluster in a cluster of 4: each rank's box "
               "lands at the same offset in every CTA of its ctaMask (1111, 0011, 1010, 1000), each plain bulk "
               "copy in the rank and its successor, completing transactions on each receiver's mbarrier",
               multicast_ptx(), "k_multicast", [4, 1, 1], [128, 1, 1], params, buffers,
               {"src.bin": src, "bulk.bin": bulk, "masks.bin": masks})


# ---- tensormap.replace: block b copies the parameter map (2D u32, 64x32 over `a`, box 16x8) to a 128-byte slot
# of global (or shared) memory, replaces fields as REPLACE[b] says, publishes it to the tensormap proxy and loads
# a box at (4, 2) through it.
G = "tensormap.replace.tile.{f}.global.b1024.{t} [{{m}}], {v};"
S = "tensormap.replace.tile.{f}.shared::cta.b1024.{t} [{{m}}], {v};"
REPLACE = [  # (name, description, replacement instructions with {m} the map's address, transaction bytes, space)
    ("none", "no field replaced", [], 512, "global"),
    ("global_address", "global_address <- b", [G.format(f="global_address", t="b64", v="%rd20")], 512, "global"),
    ("global_stride", "global_address <- b, global_stride 0 <- 512",
     [G.format(f="global_address", t="b64", v="%rd20"), G.format(f="global_stride", t="b64", v="0, 512")], 512, "global"),
    ("swizzle", "swizzle_mode <- 1 (32B), box_dim 0 <- 8",
     [G.format(f="swizzle_mode", t="b32", v="1"), G.format(f="box_dim", t="b32", v="0, 8")], 256, "global"),
    ("fill_mode", "elemtype <- 7 (f32), fill_mode <- 1 (NaN), global_dim 0 <- 10",
     [G.format(f="elemtype", t="b32", v="7"), G.format(f="fill_mode", t="b32", v="1"),
      G.format(f="global_dim", t="b32", v="0, 10")], 512, "global"),
    ("box_dim", "box_dim 0 <- 8, box_dim 1 <- 4",
     [G.format(f="box_dim", t="b32", v="0, 8"), G.format(f="box_dim", t="b32", v="1, 4")], 128, "global"),
    ("global_dim", "global_dim 0 <- 14, global_dim 1 <- 6",
     [G.format(f="global_dim", t="b32", v="0, 14"), G.format(f="global_dim", t="b32", v="1, 6")], 512, "global"),
    ("element_stride", "element_stride 1 <- 2", [G.format(f="element_stride", t="b32", v="1, 2")], 256, "global"),
    ("rank", "rank <- 1", [G.format(f="rank", t="b32", v="1")], 512, "global"),
    ("shared_global_address", "global_address <- b", [S.format(f="global_address", t="b64", v="%rd20")], 512,
     "shared"),
    ("shared_box_dim", "box_dim 1 <- 4", [S.format(f="box_dim", t="b32", v="1, 4")], 256, "shared"),
]
# elemtype replacements by 4- and 8-byte types, back and forth (the map is u32). An H200 stopped every copy
# through a map given a 1- or 2-byte type (u8, u16, f16, bf16; with or without a new box size or global dimension,
# in global or shared memory, on a u16 map too), and ran it once the type was a 4-byte one again (README.md).
ELEMTYPE = [
    ("elemtype_s32", "elemtype <- 3 (s32)", [G.format(f="elemtype", t="b32", v="3")], 512, "global"),
    ("elemtype_u64", "elemtype <- 4 (u64), global_dim 0 <- 32",
     [G.format(f="elemtype", t="b32", v="4"), G.format(f="global_dim", t="b32", v="0, 32")], 1024, "global"),
    ("elemtype_f64_nan", "elemtype <- 9 (f64), fill_mode <- 1 (NaN), global_dim 0 <- 10",
     [G.format(f="elemtype", t="b32", v="9"), G.format(f="fill_mode", t="b32", v="1"),
      G.format(f="global_dim", t="b32", v="0, 10")], 1024, "global"),
    ("elemtype_u64_u32", "elemtype <- 4 (u64), then elemtype <- 2 (u32)",
     [G.format(f="elemtype", t="b32", v="4"), G.format(f="elemtype", t="b32", v="2")], 512, "global"),
    ("elemtype_u16_u32", "elemtype <- 1 (u16), then elemtype <- 2 (u32)",
     [G.format(f="elemtype", t="b32", v="1"), G.format(f="elemtype", t="b32", v="2")], 512, "global"),
]
# The same on a map encoded as u16 (64x32 over a, box 16x8): a larger type.
ELEMTYPE_U16 = [
    ("u16_elemtype_u32", "elemtype <- 2 (u32)", [G.format(f="elemtype", t="b32", v="2")], 512, "global"),
]


def replace_ptx(instrs, space):
    """Warp 0 copies the parameter map to a global slot and to shared memory; lane 0 replaces fields (instrs, {m}
    the map's address in space) and publishes the map to the tensormap proxy (tensormap.cp_fenceproxy from shared
    memory, a whole warp's instruction), then loads a box at (4, 2) through it."""
    m = "%rd10" if space == "global" else "%r14"
    L = HEADER + [
        ".visible .entry k_tensormap_replace(", "\t.param .align 64 .b8 p_map[128],", "\t.param .u64 p_b,",
        "\t.param .u64 p_maps,", "\t.param .u32 p_tx,", "\t.param .u64 p_out", ")", "{", "\t.reg .pred %p<8>;",
        "\t.reg .b32 %r<40>;", "\t.reg .b64 %rd<32>;", "\t.shared .align 1024 .b8 s_box[4096];",
        "\t.shared .align 128 .b8 s_map[128];", "\t.shared .align 8 .b64 s_bar;", "\tmov.u32 %r1, %tid.x;",
        "\tmov.u32 %r3, s_bar;", "\tmov.u32 %r4, s_box;"] + fill_shared("%r4", 4096, "-842150451") + [
        "\tld.param.u32 %r2, [p_tx];", "\tld.param.u64 %rd20, [p_b];", "\tld.param.u64 %rd10, [p_maps];",
        "\tcvta.to.global.u64 %rd10, %rd10;", "\tmov.u32 %r14, s_map;", "\tbar.sync 0;",
        "\tsetp.ge.u32 %p7, %r1, 32;", "\t@%p7 bra $L_wait;", "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_replaced;"]
    for k in range(16):
        L += [f"\tld.param.b64 %rd12, [p_map+{8 * k}];", f"\tst.global.b64 [%rd10+{8 * k}], %rd12;",
              f"\tst.shared.b64 [%r14+{8 * k}], %rd12;"]
    L += ["\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.proxy.async.shared::cta;"]
    L += ["\t" + i.format(m=m) for i in instrs]
    if space == "global":
        L += ["\tfence.proxy.tensormap::generic.release.gpu;"]
    L += ["$L_replaced:", "\tbar.warp.sync -1;"]
    if space == "shared":
        L += ["\ttensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
              "[%rd10], [%r14], 128;"]
    L += ["\t@%p1 bra $L_wait;", "\tfence.proxy.tensormap::generic.acquire.gpu [%rd10], 128;",
          "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd13, [%r3], %r2;", "\tmov.u32 %r5, 4;", "\tmov.u32 %r6, 2;",
          "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], "
          "[%rd10, {%r5, %r6}], [%r3];",
          "$L_wait:", "\tbar.sync 0;"] + bounded_wait("%r3", "%r17") + [
          "\tld.param.u64 %rd9, [p_out];", "\tcvta.to.global.u64 %rd9, %rd9;", "\tmov.u32 %r18, 1024;"] + \
        copy_out("%r4", "%r18", "%rd9", "%r17") + ["\tret;", "}", ""]
    return "\n".join(L)


def tensormap_replace(out, cases):
    rnd = random.Random(306)
    a = b"".join(struct.pack("<I", rnd.getrandbits(32)) for _ in range(64 * 32))
    # The GPU recorded these with b 128 KiB long, in case it read strides in other units than bytes; the loads
    # read 4.7 KiB of it at most, so the cases keep the first 8 KiB.
    b = b"".join(struct.pack("<I", rnd.getrandbits(32)) for _ in range(32768))[:8192]
    for tag, desc, instrs, tx, space in REPLACE + ELEMTYPE + ELEMTYPE_U16:
        base = 1 if tag.startswith("u16_") else 2
        params = [tmap("a", base, [64, 32], [256], [16, 8]), {"type": "u64", "buffer": "b"},
                  {"type": "u64", "buffer": "maps"}, {"type": "u32", "value": tx}, {"type": "u64", "buffer": "out"}]
        buffers = {"a": {"bytes": len(a), "init": "a.bin"}, "b": {"bytes": len(b), "init": "b.bin"},
                   "maps": {"bytes": 128, "init": "zero"},
                   "out": {"bytes": 8192, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                           "compare": {"as": "u32"}}}
        write_case(out, cases, "tma", f"tensormap_replace_{tag}",
                   f"tensormap.replace on a copy of a 2D {'u16' if base == 1 else 'u32'} map (64x32 over a, box 16x8) in "
                   f"{space} memory ({desc}), "
                   f"published to the tensormap proxy, then a TMA load of the box at (4, 2) through it",
                   replace_ptx(instrs, space), "k_tensormap_replace", [1, 1, 1], [128, 1, 1], params, buffers,
                   {"a.bin": a, "b.bin": b})


# ---- interleaved tensor maps: block b loads the 3D box at the coordinates args[b * 4 ..] (dimension 0 the
# interleaved channel group) into shared memory (filled with 0xcdcdcdcd first) and copies it out.
def interleave_ptx():
    L = HEADER + [
        ".visible .entry k_interleave(", "\t.param .align 64 .b8 p_map[128],", "\t.param .u64 p_args,",
        "\t.param .u64 p_out,", "\t.param .u32 p_bytes", ")", "{", "\t.reg .pred %p<8>;", "\t.reg .b32 %r<40>, %c<3>;",
        "\t.reg .b64 %rd<8>;", "\t.shared .align 1024 .b8 s_box[4096];", "\t.shared .align 8 .b64 s_bar;",
        "\tmov.u32 %r1, %tid.x;", "\tld.param.u32 %r2, [p_bytes];", "\tmov.u32 %r3, s_bar;",
        "\tmov.u32 %r4, s_box;"] + fill_shared("%r4", 4096, "-842150451") + [
        "\tbar.sync 0;", "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_wait;",
        "\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.proxy.async.shared::cta;",
        "\tld.param.u64 %rd1, [p_args];", "\tcvta.to.global.u64 %rd1, %rd1;", "\tmov.u32 %r5, %ctaid.x;",
        "\tmul.wide.u32 %rd2, %r5, 16;", "\tadd.u64 %rd1, %rd1, %rd2;"]
    L += [f"\tld.global.u32 %c{k}, [%rd1+{4 * k}];" for k in range(3)]
    L += ["\tmov.b64 %rd3, p_map;", "\tcvta.param.u64 %rd3, %rd3;",
          "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], %r2;",
          "\tcp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], "
          "[%rd3, {%c0, %c1, %c2}], [%r3];",
          "$L_wait:", "\tbar.sync 0;"] + bounded_wait("%r3", "%r7") + [
          "\tld.param.u64 %rd5, [p_out];", "\tcvta.to.global.u64 %rd5, %rd5;", "\tmov.u32 %r8, %ctaid.x;",
          "\tmul.wide.u32 %rd6, %r8, 8192;", "\tadd.u64 %rd7, %rd5, %rd6;", "\tmov.u32 %r9, 4096;"]
    L += copy_out("%r4", "%r9", "%rd7", "%r7")
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def interleave_case(out, cases, name, desc, dtype, elem, dims, box, interleave, swizzle, blocks, seed):
    rnd = random.Random(seed)
    src = bytes(rnd.getrandbits(8) for _ in range(dims[0] * dims[1] * dims[2] * elem))
    strides = [dims[0] * elem, dims[0] * dims[1] * elem]
    args = b"".join(struct.pack("<iiii", *c, 0) for c in blocks)
    m = tmap("src", dtype, list(dims), strides, list(box), swizzle=swizzle)
    m["tensormap"]["interleave"] = interleave
    params = [m, {"type": "u64", "buffer": "args"}, {"type": "u64", "buffer": "out"},
              {"type": "u32", "value": box[0] * box[1] * box[2] * elem}]
    buffers = {"src": {"bytes": len(src), "init": "src.bin"}, "args": {"bytes": len(args), "init": "args.bin"},
               "out": {"bytes": 8192 * len(blocks), "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                       "compare": {"as": "u32"}}}
    write_case(out, cases, "tma", name, desc, interleave_ptx(), "k_interleave", [len(blocks), 1, 1], [128, 1, 1],
               params, buffers, {"src.bin": src, "args.bin": args})


def interleave(out, cases):
    """Boxes of at most 8 rows: with 12 or 16 rows (u16 16B and u32 32B interleave, with and without a swizzle) an
    H200 landed 8 rows per plane and never completed the transaction count; an 8-byte inner box was refused by
    cuTensorMapEncodeTiled (README.md)."""
    corners = [(0, 0, 0), (0, 6, 3), (0, -2, 1), (0, 3, -1)]
    interleave_case(out, cases, "interleave_16b", "cp.async.bulk.tensor.3d tile loads through a map with "
                    "CU_TENSOR_MAP_INTERLEAVE_16B (u16, 8 channels x 12 x 5, box 8x8x2), boxes partly out of bounds",
                    1, 2, (8, 12, 5), (8, 8, 2), 1, 0, corners, 311)
    interleave_case(out, cases, "interleave_32b_swizzle_32b", "cp.async.bulk.tensor.3d tile loads through a map with "
                    "CU_TENSOR_MAP_INTERLEAVE_32B and the 32-byte swizzle (u32, 8 channels x 12 x 5, box 8x8x2)",
                    2, 4, (8, 12, 5), (8, 8, 2), 2, 1, corners, 313)
    interleave_case(out, cases, "interleave_16b_swizzle_64b", "cp.async.bulk.tensor.3d tile loads through a map with "
                    "CU_TENSOR_MAP_INTERLEAVE_16B and the 64-byte swizzle (u16, 8 channels x 16 x 4, box 8x8x2)",
                    1, 2, (8, 16, 4), (8, 8, 2), 1, 2, corners, 314)
    interleave_case(out, cases, "interleave_16b_swizzle_128b_box8", "cp.async.bulk.tensor.3d tile loads through a "
                    "map with CU_TENSOR_MAP_INTERLEAVE_16B and the 128-byte swizzle (u16, 8 channels x 16 x 4, box "
                    "8x8x2)", 1, 2, (8, 16, 4), (8, 8, 2), 1, 3, corners, 316)
    interleave_case(out, cases, "interleave_16b_edges", "cp.async.bulk.tensor.3d tile loads through a map with "
                    "CU_TENSOR_MAP_INTERLEAVE_16B (u16, 8 channels x 12 x 5, box 8x8x2) starting at the last row, "
                    "one past it, in the last plane and before the first", 1, 2, (8, 12, 5), (8, 8, 2), 1, 0,
                    [(0, 11, 1), (0, 12, 1), (0, 2, 4), (0, 4, -1), (0, -1, 2)], 318)


def generate(out, cases):
    im2col(out, cases)
    multicast(out, cases)
    tensormap_replace(out, cases)
    interleave(out, cases)
