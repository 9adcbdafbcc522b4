# wmma products of random inputs in every element type, shape and memory layout, checked bit for bit against D =
# C + a0*b0 + a1*b1 + ... summed in k order in double and rounded once (f16, bf16 and tf32 products are exact in
# double; f64 products round before their sum; integer sums wrap to s32, or saturate with .satfinite).
# Usage: wmma-random.py ptx | names | gen PREFIX | check PREFIX
import random, struct, sys

# name: (m, n, k, input type, accumulator type, A layout, B layout, C/D layout, leading-dimension padding, satfinite)
CASES = {
    "f16_16x16x16": (16, 16, 16, "f16", "f32", "row", "col", "row", 0, False),
    "f16_32x8x16_cols": (32, 8, 16, "f16", "f32", "col", "row", "col", 8, False),
    "f16_8x32x16_f16acc": (8, 32, 16, "f16", "f16", "row", "col", "row", 0, False),
    "bf16_16x16x16": (16, 16, 16, "bf16", "f32", "row", "col", "row", 4, False),
    "bf16_8x32x16": (8, 32, 16, "bf16", "f32", "col", "col", "row", 0, False),
    "s8_16x16x16": (16, 16, 16, "s8", "s32", "row", "col", "row", 0, False),
    "s8_32x8x16_sat": (32, 8, 16, "s8", "s32", "row", "col", "col", 0, True),
    "u8_8x32x16": (8, 32, 16, "u8", "s32", "row", "row", "row", 0, False),
    "tf32_16x16x8": (16, 16, 8, "tf32", "f32", "row", "col", "row", 0, False),
    "f64_8x8x4": (8, 8, 4, "f64", "f64", "row", "col", "row", 0, False),
    "f64_8x8x4_cols": (8, 8, 4, "f64", "f64", "col", "row", "col", 2, False),
}
BYTES = {"f16": 2, "bf16": 2, "s8": 1, "u8": 1, "tf32": 4, "f32": 4, "s32": 4, "f64": 8}


def regs(kind, case):
    """The fragment's register count, as the PTX ISA gives it."""
    m, n, k, t, acc = case[:5]
    if kind == "c":
        return {"f16": 4, "f32": 8, "s32": 8, "f64": 2}[acc]
    rows, cols = (m, k) if kind == "a" else (k, n)
    per = {"f16": 2, "bf16": 2, "s8": 4, "u8": 4, "tf32": 1, "f64": 1}[t]
    return max(1, rows * cols // 32 // per) if t not in ("f16",) else 8


def dims(kind, case):
    m, n, k = case[:3]
    return {"a": (m, k), "b": (k, n), "c": (m, n)}[kind]


def layout(kind, case):
    return {"a": case[5], "b": case[6], "c": case[7]}[kind]


def ld(kind, case):
    rows, cols = dims(kind, case)
    return (cols if layout(kind, case) == "row" else rows) + case[8]


def size(kind, case):
    rows, cols = dims(kind, case)
    lines = rows if layout(kind, case) == "row" else cols
    t = case[4] if kind == "c" else case[3]
    return lines * ld(kind, case) * BYTES[t]


def offset(kind, case, r, c):
    return r * ld(kind, case) + c if layout(kind, case) == "row" else c * ld(kind, case) + r


def ptx():
    out = [".version 7.0", ".target sm_80", ".address_size 64"]
    for name, case in CASES.items():
        m, n, k, t, acc, la, lb, lc, pad, sat = case
        reg = {"f64": "%fc", "f32": "%f", "s32": "%s", "f16": "%h"}[acc]
        ireg = "%fd" if t == "f64" else "%r"
        na, nb, nc = regs("a", case), regs("b", case), regs("c", case)
        fa = "{" + ", ".join(f"{ireg}{i}" for i in range(na)) + "}"
        fb = "{" + ", ".join(f"{ireg}{na + i}" for i in range(nb)) + "}"
        fc = "{" + ", ".join(f"{reg}{i}" for i in range(nc)) + "}"
        fd = "{" + ", ".join(f"{reg}{nc + i}" for i in range(nc)) + "}"
        shape = f"m{m}n{n}k{k}"
        types = ".f16.f16" if (t == "f16" and acc == "f16") else ".f32.f32" if t == "f16" else f".{acc}.{t}.{t}.{acc}"
        rn = ".rn" if t == "f64" else ""
        out += [f".visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)", "{",
                "  .reg .b32 %r<40>;", "  .reg .b32 %h<16>;", "  .reg .f32 %f<16>;", "  .reg .s32 %s<16>;",
                "  .reg .f64 %fd<8>;", "  .reg .f64 %fc<8>;", "  .reg .b64 %rd<5>;"]
        out += [f"  ld.param.u64 %rd{i + 1}, [p{x}];" for i, x in enumerate("abcd")]
        out += [f"  wmma.load.a.sync.aligned.{la}.{shape}.global.{t} {fa}, [%rd1], {ld('a', case)};",
                f"  wmma.load.b.sync.aligned.{lb}.{shape}.global.{t} {fb}, [%rd2], {ld('b', case)};",
                f"  wmma.load.c.sync.aligned.{lc}.{shape}.global.{acc} {fc}, [%rd3], {ld('c', case)};",
                f"  wmma.mma.sync.aligned.{la}.{lb}.{shape}{rn}{types}{'.satfinite' if sat else ''} {fd}, {fa}, {fb}, {fc};",
                f"  wmma.store.d.sync.aligned.{lc}.{shape}.global.{acc} [%rd4], {fd}, {ld('c', case)};", "  ret;", "}"]
    print("\n".join(out))


def pack(t, v):
    if t in ("f16", "bf16"):
        return struct.pack("<H", v)
    return struct.pack({"s8": "<b", "u8": "<B", "tf32": "<I", "f32": "<f", "s32": "<i", "f64": "<d"}[t], v)


def value(t, bits):
    """The value the product uses for an element stored as bits (ints: the int; floats: a Python float)."""
    if t == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if t == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if t == "tf32":
        return struct.unpack("<f", struct.pack("<I", bits & ~0x1FFF))[0]
    return bits


def random_element(rng, t, big):
    if t == "f16":
        return struct.unpack("<H", struct.pack("<e", rng.uniform(-3, 3) * rng.choice([1, 1, 1, 2**-20])))[0]
    if t == "bf16":
        return struct.unpack("<I", struct.pack("<f", rng.uniform(-3, 3)))[0] >> 16
    if t == "tf32":
        return struct.unpack("<I", struct.pack("<f", rng.uniform(-3, 3)))[0]
    if t == "s8":
        return rng.randint(-128, 127)
    if t == "u8":
        return rng.randint(0, 255)
    if t == "s32":
        return rng.randint(-(2**31), 2**31 - 1) if big else rng.randint(-1000, 1000)
    if t == "f32":
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-3, 3)))[0]
    return rng.uniform(-3, 3)  # f64: every mantissa bit in use


def matrices(name, case):
    rng = random.Random(name)
    m, n, k, t, acc = case[:5]
    a = [[random_element(rng, t, False) for _ in range(k)] for _ in range(m)]
    b = [[random_element(rng, t, False) for _ in range(n)] for _ in range(k)]
    c = [[random_element(rng, acc if acc != "f16" else "f16", case[9]) for _ in range(n)] for _ in range(m)]
    return a, b, c


def image(kind, case, mat, t):
    buf = bytearray(size(kind, case))
    width = BYTES[t]
    for r, row in enumerate(mat):
        for col, v in enumerate(row):
            o = offset(kind, case, r, col) * width
            buf[o:o + width] = pack(t, v)
    return bytes(buf)


def expected(case, a, b, c):
    m, n, k, t, acc, sat = case[0], case[1], case[2], case[3], case[4], case[9]
    d = [[0] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            s = value(acc, c[i][j]) if acc == "f16" else c[i][j]
            for kk in range(k):
                s = s + value(t, a[i][kk]) * value(t, b[kk][j])
            if acc == "s32":
                s = max(-(2**31), min(2**31 - 1, s)) if sat else (s + 2**31) % 2**32 - 2**31
            elif acc == "f16":
                s = struct.unpack("<H", struct.pack("<e", s))[0]
            d[i][j] = s
    return d


mode = sys.argv[1]
if mode == "ptx":
    ptx()
elif mode == "names":
    print(" ".join(CASES))
else:
    prefix, wrong = sys.argv[2], 0
    for name, case in CASES.items():
        a, b, c = matrices(name, case)
        t, acc = case[3], case[4]
        if mode == "gen":
            for kind, mat, ty in (("a", a, t), ("b", b, t), ("c", c, acc)):
                open(f"{prefix}.{name}.{kind}", "wb").write(image(kind, case, mat, ty))
            print(name, *(size(kind, case) for kind in "abc"))
        else:
            want = image("c", case, expected(case, a, b, c), acc)
            got = open(f"{prefix}.{name}.d", "rb").read()
            bad = sum(want[i] != got[i] for i in range(len(want))) if len(got) == len(want) else len(want)
            print(name, bad, "wrong bytes")
            wrong += bad
    if mode == "check":
        print("total", wrong, "wrong bytes")
