"""Writes conformance-format cases (../shared/conformance/FORMAT.md, tensormap parameters as in
tests/conformance/cases/README.md, "mode": "im2col_wide" for cuTensorMapEncodeIm2colWide) of cp.async.bulk.tensor's
.im2col::w and .im2col::w::128 loads (sm_100) into the directory argv[1]. No GPU here has sm_100, so the expected
bytes come from the PTX ISA's definition ("im2col::w and im2col::w::128 modes"), evaluated here:

- the pixels run along W alone: H and D stay at the instruction's coordinates (a bounding box of one in them);
- W starts at the instruction's W coordinate and steps by the map's W traversal stride over the bounding box
  [lower corner W, W size - 1 + upper corner W]; past its end the walk restarts at the lower corner in the next
  image (as im2col mode wraps); wOffset is added to the start and to both corners;
- .im2col::w loads pixels-per-column pixels and then wHalo more pixels of the walk, next to them;
  .im2col::w::128 loads 128 pixels in groups of 32, each group followed by the wHalo pixels that continue its walk;
- each pixel is a row of channels-per-pixel elements from the channel coordinate on, a swizzle span apart, the
  16-byte chunks swizzled by the shared address as tile loads are; what lies outside the tensor reads as zero."""
import json
import os
import struct
import sys
from case_files import write_index

SPANS = {2: 64, 3: 128}
FMT = {1: ("H", 2), 2: ("I", 4)}  # CUtensorMapDataType: UINT16, UINT32


def walk(start, lower, end, step, image):
    """The (w, n) positions of the wide walk, endlessly."""
    w, n = start, image
    while True:
        yield w, n
        w += step
        if w > end:
            w, n = lower, n + 1


def rows(t, coords, halo, offset):
    """The pixel positions (w, n) of the rows the load writes, in order."""
    main = 128 if t["w128"] else t["ppc"]
    group = 32 if t["w128"] else main
    pos = walk(coords[1] + offset, t["lower"] + offset, t["dims"][1] - 1 + t["upper"] + offset, t["estrides"][1],
               coords[-1])
    seq = [next(pos) for _ in range(main + halo)]
    out = []
    for g in range(0, main, group):
        out += seq[g:g + group + halo]
    return out


def expected(t, src, coords, halo, offset, nbytes):
    fmt, elem = FMT[t["dtype"]]
    dims, strides, span = t["dims"], t["strides"], SPANS[t["swizzle"]]
    pitch = max(t["cpp"] * elem, span)
    out = bytearray(nbytes)
    for r, (w, n) in enumerate(rows(t, coords, halo, offset)):
        pos = [None, w] + list(coords[2:-1]) + [n]
        inside = all(0 <= pos[i] < dims[i] for i in range(1, len(dims)))
        base = sum(pos[i] * strides[i - 1] for i in range(1, len(dims))) if inside else 0
        for k in range(t["cpp"]):
            ch = coords[0] + k
            v = src[(base + ch * elem) // elem] if inside and 0 <= ch < dims[0] else 0
            off = r * pitch + k * elem
            off ^= ((off >> 7) & (span // 16 - 1)) << 4
            out[off:off + elem] = struct.pack("<" + fmt, v)
    return bytes(out)


def kernel(t, coords, halo, offset, nbytes, tx):
    dims = len(t["dims"])
    mode = "im2col::w::128" if t["w128"] else "im2col::w"
    co = ", ".join(str(c) for c in coords)
    return "\n".join([
        ".version 8.6", ".target sm_100a", ".address_size 64", "",
        ".visible .entry k_im2col_w(.param .align 64 .b8 p_map[128], .param .u64 p_out)", "{",
        "\t.reg .pred %p<4>;", "\t.reg .b16 %h<2>;", "\t.reg .b32 %r<8>;", "\t.reg .b64 %rd<8>;",
        f"\t.shared .align 1024 .b8 s_box[{nbytes}];", "\t.shared .align 8 .b64 s_bar;",
        "\tmov.u32 %r1, %tid.x;", "\tmov.u32 %r2, s_box;", "\tmov.u32 %r3, s_bar;",
        "\tshl.b32 %r4, %r1, 2;", "$L_zero:", f"\tsetp.ge.u32 %p1, %r4, {nbytes};", "\t@%p1 bra $L_zeroed;",
        "\tadd.u32 %r5, %r2, %r4;", "\tst.shared.u32 [%r5], 0;", "\tadd.u32 %r4, %r4, 512;", "\tbra.uni $L_zero;",
        "$L_zeroed:", "\tbar.sync 0;", "\tsetp.ne.u32 %p1, %r1, 0;", "\t@%p1 bra $L_wait;",
        "\tmbarrier.init.shared::cta.b64 [%r3], 1;", "\tfence.proxy.async.shared::cta;",
        "\tmov.b64 %rd1, p_map;", "\tcvta.param.u64 %rd1, %rd1;",
        f"\tmov.b16 %h0, {halo};", f"\tmov.b16 %h1, {offset};",
        f"\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r3], {tx};",
        f"\tcp.async.bulk.tensor.{dims}d.shared::cta.global.{mode}.mbarrier::complete_tx::bytes "
        f"[%r2], [%rd1, {{{co}}}], [%r3], {{%h0, %h1}};",
        "$L_wait:", "\tbar.sync 0;", "$L_poll:", "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;",
        "\t@!%p2 bra $L_poll;", "\tld.param.u64 %rd3, [p_out];", "\tcvta.to.global.u64 %rd3, %rd3;",
        "\tshl.b32 %r4, %r1, 2;", "$L_copy:", f"\tsetp.ge.u32 %p1, %r4, {nbytes};", "\t@%p1 bra $L_end;",
        "\tadd.u32 %r5, %r2, %r4;", "\tld.shared.u32 %r6, [%r5];", "\tcvt.u64.u32 %rd4, %r4;",
        "\tadd.u64 %rd5, %rd3, %rd4;", "\tst.global.u32 [%rd5], %r6;", "\tadd.u32 %r4, %r4, 512;",
        "\tbra.uni $L_copy;", "$L_end:", "\tret;", "}", ""])


def case(root, name, t, coords, halo, offset):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    fmt, elem = FMT[t["dtype"]]
    size = t["strides"][-1] * t["dims"][-1]
    # Every element its own value; the padding past the channels of a pixel a marker no load may show.
    src = [(i + 1) % (1 << (8 * elem)) for i in range(size // elem)]
    for i in range(len(src)):
        if (i * elem) % t["strides"][0] >= t["dims"][0] * elem:
            src[i] = (1 << (8 * elem)) - 2
    with open(os.path.join(d, "src.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(src)}{fmt}", *src))
    nrows = len(rows(t, coords, halo, offset))
    pitch = max(t["cpp"] * elem, SPANS[t["swizzle"]])
    nbytes = nrows * pitch
    with open(os.path.join(d, "out.expect.bin"), "wb") as f:
        f.write(expected(t, src, coords, halo, offset, nbytes))
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(kernel(t, coords, halo, offset, nbytes, nrows * t["cpp"] * elem))
    tmap = {"type": "tensormap", "tensormap": {
        "mode": "im2col_wide", "buffer": "src", "data_type": t["dtype"], "global_dim": t["dims"],
        "global_strides": t["strides"], "lower_corner_w": t["lower"], "upper_corner_w": t["upper"],
        "channels_per_pixel": t["cpp"], "pixels_per_column": t["ppc"], "wide_mode": int(t["w128"]),
        "element_strides": t["estrides"], "interleave": 0, "swizzle": t["swizzle"], "l2_promotion": 0,
        "oob_fill": 0}}
    c = {"name": f"tma/{name}", "description": "wide im2col load from the ISA's definition", "ptx": "kernel.ptx",
         "entry": "k_im2col_w", "min_sm": 100, "grid": [1, 1, 1], "block": [128, 1, 1], "dynamic_shared_bytes": 0,
         "params": [tmap, {"type": "u64", "buffer": "out"}],
         "buffers": {"src": {"bytes": size, "init": "src.bin"},
                     "out": {"bytes": nbytes, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                             "compare": {"as": "u32"}}}}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(c, f, indent=1)
    return {"name": c["name"], "dir": name, "min_sm": 100, "ptx_version": "8.6", "target": "sm_100a",
            "description": c["description"]}


# im2col::w on an NHWC u32 tensor of 10 channels (pixels padded to 48 bytes): 20 pixels of channels 4-11 (10 and
# 11 past the tensor) from W = -2 + wOffset 1 in steps of 2 over the box [-1 + 1, 6 + 1], then 3 halo pixels;
# the walk leaves the tensor at W = -1 and 7 and runs into image 4, past the last.
NHWC = {"dtype": 2, "dims": [10, 7, 3, 4], "strides": [48, 48 * 7, 48 * 21], "estrides": [1, 2, 1, 1],
        "lower": -1, "upper": 0, "cpp": 8, "ppc": 20, "swizzle": 2, "w128": False}
# im2col::w::128 on an NWC u16 tensor of 32 channels (the map's 64 pixels per column are ignored): four groups of
# 32 pixels, each followed by 2 halo pixels, from W = 3 + wOffset 5 over the box [0 + 5, 37 + 5], past W's end.
NWC = {"dtype": 1, "dims": [32, 40, 5], "strides": [64, 64 * 40], "estrides": [1, 1, 1],
       "lower": 0, "upper": -2, "cpp": 32, "ppc": 64, "swizzle": 2, "w128": True}
root = sys.argv[1]
cases = [case(root, "im2col_w_nhwc", NHWC, [4, -2, 1, 0], 3, 1),
         case(root, "im2col_w128_nwc", NWC, [0, 3, 0], 2, 5)]
write_index(root, cases)
