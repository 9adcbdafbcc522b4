"""Writes conformance-format cases (../shared/conformance/FORMAT.md, tensormap parameters as in
tests/conformance/cases/README.md) of cp.async.bulk.tensor.2d .tile::gather4 into the directory argv[1], with the
output the PTX ISA defines: the four rows named by the coordinates {col, row0, row1, row2, row3}, each box[0]
elements wide from column col on, land as the rows of a 4-row box (swizzled by the shared address as tile loads
are); elements outside the tensor read as zeros. No GPU here has sm_100, so the expected bytes come from that
definition, not from a recording."""
import json
import os
import struct
import sys
from case_files import write_index

W, H, BOX = 40, 20, 16
SPANS = {0: 0, 1: 32, 2: 64, 3: 128}


def kernel(coords):
    co = ", ".join(str(c) for c in coords)
    return "\n".join([
        ".version 8.6", ".target sm_100a", ".address_size 64", "",
        ".visible .entry k_gather4(.param .align 64 .b8 p_map[128], .param .u64 p_out)", "{",
        "\t.reg .pred %p<4>;", "\t.reg .b32 %r<16>;", "\t.reg .b64 %rd<8>;",
        "\t.shared .align 1024 .b8 s_box[1024];", "\t.shared .align 8 .b64 s_bar;",
        "\tmov.u32 %r1, %tid.x;", "\tmov.u32 %r2, s_box;", "\tmov.u32 %r3, s_bar;",
        "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_wait;",
        "\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.proxy.async.shared::cta;",
        "\tmov.b64 %rd1, p_map;", "\tcvta.param.u64 %rd1, %rd1;",
        f"\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r3], {4 * BOX * 4};",
        "\tcp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes "
        f"[%r2], [%rd1, {{{co}}}], [%r3];",
        "$L_wait:", "\tbar.sync 0;", "$L_poll:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;",
        "\t@!%p2 bra $L_poll;", "\tsetp.ge.u32 %p3, %r1, 64;", "\t@%p3 bra $L_end;", "\tshl.b32 %r4, %r1, 2;",
        "\tadd.u32 %r5, %r2, %r4;", "\tld.shared.u32 %r6, [%r5];",
        "\tld.param.u64 %rd3, [p_out];", "\tcvta.to.global.u64 %rd3, %rd3;", "\tcvt.u64.u32 %rd4, %r4;",
        "\tadd.u64 %rd3, %rd3, %rd4;", "\tst.global.u32 [%rd3], %r6;", "$L_end:", "\tret;", "}", ""])


def case(root, name, coords, swizzle):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    src = [r * 1000 + c for r in range(H) for c in range(W)]
    with open(os.path.join(d, "src.bin"), "wb") as f:
        f.write(struct.pack(f"<{W * H}I", *src))
    span = SPANS[swizzle]
    out = bytearray(b"\xcd" * 512)  # the kernel copies out the box's 256 bytes
    for i, row in enumerate(coords[1:]):
        for j in range(BOX):
            col = coords[0] + j
            v = src[row * W + col] if 0 <= row < H and 0 <= col < W else 0
            off = i * max(BOX * 4, span) + 4 * j
            off ^= ((off >> 7) & (span // 16 - 1)) << 4 if span else 0
            out[off:off + 4] = struct.pack("<I", v)
    with open(os.path.join(d, "out.expect.bin"), "wb") as f:
        f.write(bytes(out))
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(kernel(coords))
    tmap = {"type": "tensormap", "tensormap": {
        "buffer": "src", "data_type": 2, "global_dim": [W, H], "global_strides": [W * 4], "box_dim": [BOX, 1],
        "element_strides": [1, 1], "interleave": 0, "swizzle": swizzle, "l2_promotion": 0, "oob_fill": 0}}
    c = {"name": f"tma/{name}", "description": "tile::gather4 from the ISA's definition", "ptx": "kernel.ptx",
         "entry": "k_gather4", "min_sm": 100, "grid": [1, 1, 1], "block": [128, 1, 1], "dynamic_shared_bytes": 0,
         "params": [tmap, {"type": "u64", "buffer": "out"}],
         "buffers": {"src": {"bytes": W * H * 4, "init": "src.bin"},
                     "out": {"bytes": 512, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                             "compare": {"as": "u32"}}}}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(c, f, indent=1)
    return {"name": c["name"], "dir": name, "min_sm": 100, "ptx_version": "8.6", "target": "sm_100a",
            "description": c["description"]}


root = sys.argv[1]
cases = [case(root, "gather4_rows", [30, 3, 19, -1, 25], 0), case(root, "gather4_swizzle_64b", [2, 7, 0, 11, 7], 2)]
write_index(root, cases)
