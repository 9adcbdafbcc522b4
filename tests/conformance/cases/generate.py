#!/usr/bin/env python3
"""Writes the project's own conformance cases (kernel.ptx, inputs, case.json, index.json) in the format of
../shared/conformance/FORMAT.md. The golden outputs (*.expect.bin) are not made here: record.py beside this
file recorded them on a GPU from exactly these files. Rerunning this script must reproduce the committed
kernels and inputs byte for byte (the inputs are fixed edge-case tables and a seeded generator).

Usage: generate.py [OUTDIR]   (default: the directory of this script)
"""
import json
import os
import random
import struct
import sys

import hopper
import hopper_pipeline
import hopper_isa

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

# ---- edge-case values ----
F16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x7bff, 0xfbff, 0x7c00,
       0xfc00, 0x7e00, 0x7c01, 0xfe00, 0x3555, 0x4000, 0xc000, 0x0200]
BF16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3f81, 0x7f7f, 0xff7f, 0x7f80,
        0xff80, 0x7fc0, 0x7f81, 0xffc0, 0x3eab, 0x4000, 0xc000, 0x0040]
F32 = [0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x3f800000, 0xbf800000, 0x7f7fffff,
       0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 0x3eaaaaab, 0x4b800001,
       0x33800000, 0xc0000000, 0x00400000, 0x3f800001]
U32 = [0x00000000, 0xffffffff, 0x80000000, 0x7fffffff, 0x00000001, 0x80808080, 0x7f7f7f7f, 0x00ff00ff,
       0xff00ff00, 0x8000ffff, 0x7fff8000, 0x01020304, 0xfefdfcfb, 0x000000ff, 0x0000ffff, 0x0000001f,
       0x00000020, 0x00000021, 0xffffffe0, 0x12345678]

cases = []


def pairs(vals, n):
    """n (a, b) pairs: all pairs of vals first, then seeded random picks."""
    out = [(a, b) for a in vals for b in vals]
    return out[:n]


def pack16(vals):
    return b"".join(struct.pack("<H", v) for v in vals)


def pack32(vals):
    return b"".join(struct.pack("<I", v & 0xffffffff) for v in vals)


class Case:
    """A one-thread-per-tuple kernel: loads in_k[i] into %aK, runs BODY, stores %dK (or %eK for the u64 /
    vector outputs a body writes itself) to out_k[i]."""

    def __init__(self, cat, name, desc, target, version, min_sm, n, block=128):
        self.cat, self.name, self.desc = cat, name, desc
        self.target, self.version, self.min_sm, self.n, self.block = target, version, min_sm, n, block
        self.inputs = []   # (name, width_bytes, data bytes)
        self.outputs = []  # (name, width_bytes, compare_as, init)  stored from %dK
        self.mems = []     # (name, data bytes, compare_as, unordered): read-modify-write buffers, address in %mK
        self.body = []
        self.regs = []
        self.shared = []
        self.compare_extra = {}  # output name -> extra compare keys
        self.directives = ""     # performance-tuning directives after the entry's parameters

    def inp(self, width, data):
        self.inputs.append((f"in{len(self.inputs)}", width, data))
        return f"%a{len(self.inputs) - 1}"

    def out(self, width, compare="u32"):
        self.outputs.append((f"out{len(self.outputs)}", width, compare))
        return f"%d{len(self.outputs) - 1}"

    def mem(self, data, compare, unordered=False):
        self.mems.append((f"mem{len(self.mems)}", data, compare, unordered))
        return f"%m{len(self.mems) - 1}"

    def emit(self, *lines):
        self.body.extend(lines)

    def reg(self, decl):
        self.regs.append(decl)

    def ptx(self):
        entry = f"k_{self.name}"
        params = [f"\t.param .u64 p_{o[0]}" for o in self.outputs] + [f"\t.param .u64 p_{m[0]}" for m in self.mems] + \
                 [f"\t.param .u64 p_{i[0]}" for i in self.inputs] + ["\t.param .u32 p_n"]
        bits = {1: "b8", 2: "b16", 4: "b32", 8: "b64", 16: "b32"}
        L = ["//", "// ptxforge conformance case (tests/conformance/cases/generate.py): one thread per input tuple", "//",
             f".version {self.version}", f".target {self.target}", ".address_size 64", ""]
        L += self.shared
        L.append(f".visible .entry {entry}(")
        L.append(",\n".join(params))
        L.append(f"){self.directives}\n{{")
        L += ["\t.reg .pred %pg, %p<8>, %q<8>;", "\t.reg .u32 %gi, %gt, %gc, %gn, %gm, %t<8>;", "\t.reg .u64 %ga, %gb;",
              "\t.reg .b16 %h<16>;", "\t.reg .b32 %r<16>, %acc;", "\t.reg .b64 %rd<8>;", "\t.reg .f32 %f<16>;"]
        for k, (_, w, _) in enumerate(self.inputs):
            if w < 16:
                L.append(f"\t.reg .{bits[w]} %a{k};")
        for k, (_, w, _) in enumerate(self.outputs):
            if w < 16:
                L.append(f"\t.reg .{bits[w]} %d{k};")
        for k in range(len(self.mems)):
            L.append(f"\t.reg .u64 %m{k};")
        L += [f"\t{r}" for r in self.regs]
        L += ["\tmov.u32 %gt, %tid.x;", "\tmov.u32 %gc, %ctaid.x;", "\tmov.u32 %gn, %ntid.x;",
              "\tmad.lo.u32 %gi, %gc, %gn, %gt;", "\tld.param.u32 %gm, [p_n];", "\tsetp.ge.u32 %pg, %gi, %gm;",
              "\t@%pg bra $L_done;"]
        for k, (nm, w, _) in enumerate(self.inputs):
            if w == 16:  # vector inputs: the body loads them
                continue
            L += [f"\tld.param.u64 %ga, [p_{nm}];", "\tcvta.to.global.u64 %ga, %ga;",
                  f"\tmul.wide.u32 %gb, %gi, {w};", "\tadd.u64 %ga, %ga, %gb;", f"\tld.global.{bits[w]} %a{k}, [%ga];"]
        for k, (nm, _, _, _) in enumerate(self.mems):
            L += [f"\tld.param.u64 %m{k}, [p_{nm}];", f"\tcvta.to.global.u64 %m{k}, %m{k};"]
        L.append("\t// ---- operations under test ----")
        L += [f"\t{b}" if not b.endswith(":") else b for b in self.body]
        for k, (nm, w, _) in enumerate(self.outputs):
            if w == 16:  # vector outputs: the body stores them
                continue
            L += [f"\tld.param.u64 %ga, [p_{nm}];", "\tcvta.to.global.u64 %ga, %ga;",
                  f"\tmul.wide.u32 %gb, %gi, {w};", "\tadd.u64 %ga, %ga, %gb;", f"\tst.global.{bits[w]} [%ga], %d{k};"]
        L += ["$L_done:", "\tret;", "}", ""]
        return "\n".join(L)

    def write(self):
        d = os.path.join(OUT, self.cat, self.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "kernel.ptx"), "w") as f:
            f.write(self.ptx())
        params = [{"type": "u64", "buffer": o[0]} for o in self.outputs] + \
                 [{"type": "u64", "buffer": m[0]} for m in self.mems] + \
                 [{"type": "u64", "buffer": i[0]} for i in self.inputs] + [{"type": "u32", "value": self.n}]
        buffers = {}
        for nm, w, cmp in self.outputs:
            buffers[nm] = {"bytes": w * self.n, "init": {"fill_byte": 205}, "expect": f"{nm}.expect.bin",
                           "compare": {"as": cmp, **self.compare_extra.get(nm, {})}}
        for nm, data, cmp, unordered in self.mems:
            with open(os.path.join(d, f"{nm}.init.bin"), "wb") as f:
                f.write(data)
            c = {"as": cmp}
            if unordered:
                c["unordered"] = True
            buffers[nm] = {"bytes": len(data), "init": f"{nm}.init.bin", "expect": f"{nm}.expect.bin", "compare": c}
        for nm, w, data in self.inputs:
            assert len(data) == w * self.n, (self.name, nm)
            with open(os.path.join(d, f"{nm}.bin"), "wb") as f:
                f.write(data)
            buffers[nm] = {"bytes": len(data), "init": f"{nm}.bin"}
        grid = (self.n + self.block - 1) // self.block
        case = {"name": f"{self.cat}/{self.name}", "description": self.desc, "ptx": "kernel.ptx",
                "entry": f"k_{self.name}", "min_sm": self.min_sm, "grid": [grid, 1, 1], "block": [self.block, 1, 1],
                "dynamic_shared_bytes": 0, "params": params, "buffers": buffers}
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
            f.write("\n")
        cases.append({"name": case["name"], "dir": case["name"], "min_sm": self.min_sm,
                      "ptx_version": self.version, "target": self.target, "description": self.desc})


CMP = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def setp_mask(c, instr_fmt, dst, pair):
    """ORs bit k (pair: bits 2k and 2k+1 for p|q) of dst for each compare op k, using instr_fmt.format(op=)."""
    c.emit(f"mov.u32 {dst}, 0;")
    for k, op in enumerate(CMP):
        if pair:
            c.emit(instr_fmt.format(op=op, p="%p0|%p1"),
                   f"selp.u32 %t0, {1 << (2 * k)}, 0, %p0;", f"or.b32 {dst}, {dst}, %t0;",
                   f"selp.u32 %t0, {1 << (2 * k + 1)}, 0, %p1;", f"or.b32 {dst}, {dst}, %t0;")
        else:
            c.emit(instr_fmt.format(op=op, p="%p0"), f"selp.u32 %t0, {1 << k}, 0, %p0;", f"or.b32 {dst}, {dst}, %t0;")


def half_setp_scalar():
    n = 400
    pf, pb = pairs(F16, n), pairs(BF16, n)
    c = Case("half", "setp_set_f16_bf16", "setp/set on .f16 and .bf16: every compare op (ordered, unordered, num/nan), "
             ".ftz, .and/.or/.xor with a predicate, set into u32/s32/u16/f16/bf16 destinations (f32 sources too)",
             "sm_90", "7.8", 90, n)
    a, b = c.inp(2, pack16(x for x, _ in pf)), c.inp(2, pack16(y for _, y in pf))
    ab, bb = c.inp(2, pack16(x for x, _ in pb)), c.inp(2, pack16(y for _, y in pb))
    o0, o1, o2, o3 = c.out(4), c.out(4), c.out(4), c.out(4)
    setp_mask(c, "setp.{op}.f16 {p}, " + f"{a}, {b};", o0, False)
    setp_mask(c, "setp.{op}.ftz.f16 {p}, " + f"{a}, {b};", o1, False)
    setp_mask(c, "setp.{op}.bf16 {p}, " + f"{ab}, {bb};", o2, False)
    # Combining forms with q = bit 0 of the thread index.
    c.emit("and.b32 %t1, %gi, 1;", "setp.ne.u32 %q0, %t1, 0;", f"mov.u32 {o3}, 0;")
    combos = [f"setp.lt.and.f16 %p0, {a}, {b}, %q0;", f"setp.geu.or.f16 %p0, {a}, {b}, !%q0;",
              f"setp.ne.xor.ftz.f16 %p0, {a}, {b}, %q0;", f"setp.nan.and.f16 %p0, {a}, {b}, !%q0;",
              f"setp.le.or.bf16 %p0, {ab}, {bb}, %q0;", f"setp.neu.xor.bf16 %p0, {ab}, {bb}, %q0;",
              f"setp.gt.and.bf16 %p0, {ab}, {bb}, %q0;", f"setp.num.or.bf16 %p0, {ab}, {bb}, !%q0;"]
    for k, s in enumerate(combos):
        c.emit(s, f"selp.u32 %t0, {1 << k}, 0, %p0;", f"or.b32 {o3}, {o3}, %t0;")
    # set: one 32-bit slot each (16-bit results zero-extended).
    sets = [("u32", f"set.lt.u32.f16 %r0, {a}, {b};", "%r0"),
            ("s32", f"set.gtu.ftz.s32.f16 %r0, {a}, {b};", "%r0"),
            ("u16", f"set.ne.u16.f16 %h0, {a}, {b};", "%h0"),
            ("f16", f"set.equ.f16.f16 %h0, {a}, {b};", "%h0"),
            ("f16", f"set.le.ftz.f16.f16 %h0, {a}, {b};", "%h0"),
            ("u32", f"set.num.u32.bf16 %r0, {ab}, {bb};", "%r0"),
            ("s16", f"set.leu.s16.bf16 %h0, {ab}, {bb};", "%h0"),
            ("bf16", f"set.ge.bf16.bf16 %h0, {ab}, {bb};", "%h0"),
            ("f16", f"set.lt.and.f16.f16 %h0, {a}, {b}, %q0;", "%h0"),
            ("u32", f"set.eq.or.u32.bf16 %r0, {ab}, {bb}, %q0;", "%r0"),
            ("f16", f"cvt.f32.f16 %f0, {a};\n\tcvt.f32.f16 %f1, {b};\n\tset.lt.f16.f32 %h0, %f0, %f1;", "%h0"),
            ("bf16", f"cvt.f32.bf16 %f0, {ab};\n\tcvt.f32.bf16 %f1, {bb};\n\tset.gtu.bf16.f32 %h0, %f0, %f1;", "%h0"),
            ("f16", f"set.gt.f16.s32 %h0, %gi, 200;", "%h0")]
    for _, s, r in sets:
        # 16-bit results are stored as 16 bits: ptxas compiles `cvt.u32.u16` of a set.f16 result that an HSET2
        # computed as a plain move, so a 32-bit slot would show the instruction's unused upper lane.
        o = c.out(2, "u16") if r.startswith("%h") else c.out(4)
        c.emit(s)
        c.emit(f"mov.b16 {o}, {r};" if r.startswith("%h") else f"mov.b32 {o}, {r};")
    c.write()


def x2(vals, n):
    """n packed lane pairs: lane 0 from all pairs of vals, lane 1 from a shuffled order."""
    p = pairs(vals, n)
    q = [(vals[(i * 7 + 3) % len(vals)], vals[(i * 11 + 5) % len(vals)]) for i in range(n)]
    a = [p[i][0] | q[i][0] << 16 for i in range(n)]
    b = [p[i][1] | q[i][1] << 16 for i in range(n)]
    return a, b


def half_setp_x2():
    n = 400
    fa, fb = x2(F16, n)
    ba, bb = x2(BF16, n)
    c = Case("half", "setp_set_f16x2_bf16x2", "setp p|q and set on .f16x2 and .bf16x2: every compare op, .ftz, "
             ".and/.or/.xor, set into f16x2/bf16x2/u32/s32", "sm_90", "7.8", 90, n)
    a, b = c.inp(4, pack32(fa)), c.inp(4, pack32(fb))
    a2, b2 = c.inp(4, pack32(ba)), c.inp(4, pack32(bb))
    o0, o1, o2, o3 = c.out(4), c.out(4), c.out(4), c.out(4)
    setp_mask(c, "setp.{op}.f16x2 {p}, " + f"{a}, {b};", o0, True)
    setp_mask(c, "setp.{op}.ftz.f16x2 {p}, " + f"{a}, {b};", o1, True)
    setp_mask(c, "setp.{op}.bf16x2 {p}, " + f"{a2}, {b2};", o2, True)
    c.emit("and.b32 %t1, %gi, 1;", "setp.ne.u32 %q0, %t1, 0;", f"mov.u32 {o3}, 0;")
    combos = [f"setp.lt.and.f16x2 %p0|%p1, {a}, {b}, %q0;", f"setp.geu.or.ftz.f16x2 %p0|%p1, {a}, {b}, !%q0;",
              f"setp.ne.xor.bf16x2 %p0|%p1, {a2}, {b2}, %q0;", f"setp.nan.or.bf16x2 %p0|%p1, {a2}, {b2}, %q0;"]
    for k, s in enumerate(combos):
        c.emit(s, f"selp.u32 %t0, {1 << (2 * k)}, 0, %p0;", f"or.b32 {o3}, {o3}, %t0;",
               f"selp.u32 %t0, {1 << (2 * k + 1)}, 0, %p1;", f"or.b32 {o3}, {o3}, %t0;")
    sets = [f"set.lt.f16x2.f16x2 %r0, {a}, {b};", f"set.gtu.ftz.u32.f16x2 %r0, {a}, {b};",
            f"set.num.s32.f16x2 %r0, {a}, {b};", f"set.ne.bf16x2.bf16x2 %r0, {a2}, {b2};",
            f"set.leu.u32.bf16x2 %r0, {a2}, {b2};", f"set.eq.and.f16x2.f16x2 %r0, {a}, {b}, %q0;",
            f"set.ge.xor.s32.bf16x2 %r0, {a2}, {b2}, !%q0;"]
    for s in sets:
        o = c.out(4)
        c.emit(s, f"mov.b32 {o}, %r0;")
    c.write()


def half_minmax_fma():
    n = 400
    pf, pb = pairs(F16, n), pairs(BF16, n)
    cf = [F16[(i * 13 + 7) % 20] for i in range(n)]
    cb = [BF16[(i * 13 + 7) % 20] for i in range(n)]
    fa, fb = x2(F16, n)
    ba, bb = x2(BF16, n)
    fc = [F16[(i * 3 + 1) % 20] | F16[(i * 17 + 2) % 20] << 16 for i in range(n)]
    bc = [BF16[(i * 3 + 1) % 20] | BF16[(i * 17 + 2) % 20] << 16 for i in range(n)]
    c = Case("half", "minmax_xorsign_fma_relu", "min/max .xorsign.abs and .NaN (.ftz) on f16/bf16/f16x2/bf16x2, "
             "fma.rn with .relu/.sat/.ftz on f16/bf16 and their x2 forms", "sm_90", "7.8", 90, n)
    a, b, cc = c.inp(2, pack16(x for x, _ in pf)), c.inp(2, pack16(y for _, y in pf)), c.inp(2, pack16(cf))
    ab, bbr, cb_ = c.inp(2, pack16(x for x, _ in pb)), c.inp(2, pack16(y for _, y in pb)), c.inp(2, pack16(cb))
    a2, b2, c2 = c.inp(4, pack32(fa)), c.inp(4, pack32(fb)), c.inp(4, pack32(fc))
    a3, b3, c3 = c.inp(4, pack32(ba)), c.inp(4, pack32(bb)), c.inp(4, pack32(bc))
    scalar = [f"min.xorsign.abs.f16 %h0, {a}, {b};", f"max.xorsign.abs.f16 %h0, {a}, {b};",
              f"min.NaN.xorsign.abs.f16 %h0, {a}, {b};", f"max.ftz.NaN.xorsign.abs.f16 %h0, {a}, {b};",
              f"min.ftz.NaN.f16 %h0, {a}, {b};", f"max.ftz.f16 %h0, {a}, {b};",
              f"min.xorsign.abs.bf16 %h0, {ab}, {bbr};", f"max.NaN.xorsign.abs.bf16 %h0, {ab}, {bbr};",
              f"fma.rn.relu.f16 %h0, {a}, {b}, {cc};", f"fma.rn.ftz.relu.f16 %h0, {a}, {b}, {cc};",
              f"fma.rn.sat.ftz.f16 %h0, {a}, {b}, {cc};", f"fma.rn.relu.bf16 %h0, {ab}, {bbr}, {cb_};"]
    for s in scalar:
        o = c.out(4)
        c.emit(s, f"cvt.u32.u16 {o}, %h0;")
    packed = [f"min.xorsign.abs.f16x2 %r0, {a2}, {b2};", f"max.NaN.xorsign.abs.f16x2 %r0, {a2}, {b2};",
              f"min.ftz.NaN.f16x2 %r0, {a2}, {b2};", f"max.xorsign.abs.bf16x2 %r0, {a3}, {b3};",
              f"min.NaN.xorsign.abs.bf16x2 %r0, {a3}, {b3};", f"fma.rn.relu.f16x2 %r0, {a2}, {b2}, {c2};",
              f"fma.rn.ftz.sat.f16x2 %r0, {a2}, {b2}, {c2};", f"fma.rn.ftz.relu.f16x2 %r0, {a2}, {b2}, {c2};",
              f"fma.rn.relu.bf16x2 %r0, {a3}, {b3}, {c3};"]
    for s in packed:
        o = c.out(4)
        c.emit(s, f"mov.b32 {o}, %r0;")
    c.write()


def atomic_half():
    """Each thread its own element (edge values, deterministic old/new), plus contended counters."""
    n = 400
    pf, pb = pairs(F16, n), pairs(BF16, n)
    fa, fb = x2(F16, n)
    ba, bb = x2(BF16, n)
    c = Case("atomic", "half_add", "atom/red .global and .shared add on .f16/.bf16/.f16x2/.bf16x2 "
             "with edge values (each thread its own element: old and new value exact), and contended counters",
             "sm_90", "8.0", 90, n)
    a16, b16 = [x for x, _ in pf], [y for _, y in pf]
    ab16, bb16 = [x for x, _ in pb], [y for _, y in pb]
    vf, vb = c.inp(2, pack16(b16)), c.inp(2, pack16(bb16))
    vf2, vb2 = c.inp(4, pack32(fb)), c.inp(4, pack32(bb))
    # Scalar and x2 half atomics have .add only (min/max exist in the vector forms, atomic_vector below).
    scalar = [("f16", "atom.global.add.noftz.f16", a16, vf), ("bf16", "atom.global.add.noftz.bf16", ab16, vb),
              ("bf16", "atom.add.noftz.bf16", ab16, vb), ("f16", "red.global.add.noftz.f16", a16, vf),
              ("bf16", "red.global.add.noftz.bf16", ab16, vb)]
    for cmp, ins, init, v in scalar:
        m = c.mem(pack16(init), cmp)
        c.emit(f"mul.wide.u32 %gb, %gi, 2;", f"add.u64 %rd0, {m}, %gb;")
        if ins.startswith("red"):
            c.emit(f"{ins} [%rd0], {v};")
        else:
            o = c.out(4)
            c.emit(f"{ins} %h0, [%rd0], {v};", f"cvt.u32.u16 {o}, %h0;")
    packed = [("f16", "atom.global.add.noftz.f16x2", fa, vf2), ("bf16", "atom.global.add.noftz.bf16x2", ba, vb2),
              ("f16", "red.global.add.noftz.f16x2", fa, vf2), ("bf16", "red.add.noftz.bf16x2", ba, vb2)]
    for cmp, ins, init, v in packed:
        m = c.mem(pack32(init), cmp)
        c.emit(f"mul.wide.u32 %gb, %gi, 4;", f"add.u64 %rd0, {m}, %gb;")
        if ins.startswith("red"):
            c.emit(f"{ins} [%rd0], {v};")
        else:
            o = c.out(4)
            c.emit(f"{ins} %r0, [%rd0], {v};", f"mov.b32 {o}, %r0;")
    # Shared memory: per-thread element staged through shared.
    c.shared.append(".shared .align 4 .b8 s_half[512];")
    o = c.out(4)
    c.emit("mov.u32 %t2, s_half;", "shl.b32 %t3, %gt, 2;", "add.u32 %t2, %t2, %t3;",
           f"mov.b32 %r1, {{{vf}, {vf}}};", "st.shared.b32 [%t2], %r1;",
           f"atom.shared.add.noftz.f16 %h1, [%t2], {vf};", f"atom.shared.add.noftz.bf16x2 %r2, [%t2], {vb2};",
           "ld.shared.b32 %r3, [%t2];", f"cvt.u32.u16 %t4, %h1;", f"xor.b32 {o}, %r3, %t4;")
    o = c.out(4)
    c.emit(f"mov.b32 {o}, %r2;")
    # Contended counters: f16 +1.0 (400 is exact), bf16 +1.0 (sticks at 256: 257 rounds to even), x2 lanes.
    m = c.mem(pack16([0, 0, 0, 0]) + pack32([0, 0]), "b16")
    c.emit("mov.b16 %h2, 0x3c00;", "mov.b16 %h3, 0x3f80;", "mov.b32 %r4, 0x3c00bc00;", "mov.b32 %r5, 0x3f80bf80;",
           f"red.global.add.noftz.f16 [{m}], %h2;", f"red.global.add.noftz.bf16 [{m}+2], %h3;",
           "mov.b16 %h4, 0xbc00;", f"red.global.add.noftz.f16 [{m}+4], %h4;", f"atom.global.add.noftz.bf16 %h5, [{m}+6], %h3;",
           f"red.global.add.noftz.f16x2 [{m}+8], %r4;", f"red.global.add.noftz.bf16x2 [{m}+12], %r5;")
    c.write()


def atomic_vector():
    n = 256
    rnd = random.Random(20)
    f32s = F32 + [rnd.getrandbits(32) & 0xbfffffff for _ in range(12)]
    c = Case("atomic", "vector_red_atom_sm90", "vector red/atom on global memory (sm_90): .v2/.v4 .f32 add, "
             ".v2/.v4/.v8 .f16/.bf16 and .v2/.v4 .f16x2/.bf16x2 add/min/max, each thread its own vector",
             "sm_90", "8.1", 90, n)
    def f32vals(k):
        return [f32s[(i * 5 + k * 3) % len(f32s)] for i in range(n * 4)]
    def f16vals(k, tbl):
        return [tbl[(i * 7 + k) % len(tbl)] for i in range(n * 8)]
    inits = [pack32(f32vals(0)), pack32(f32vals(1)), pack16(f16vals(2, F16)), pack16(f16vals(3, BF16)),
             pack16(f16vals(4, F16)), pack16(f16vals(5, BF16)), pack16(f16vals(6, F16)), pack16(f16vals(10, F16)),
             pack16(f16vals(11, BF16)), pack32(f32vals(12))]
    vin = c.inp(16, pack32(f32vals(7)[::-1]))
    vh = c.inp(16, pack16(f16vals(8, F16)))
    vbh = c.inp(16, pack16(f16vals(9, BF16)))
    c.reg(".reg .b32 %v<8>;")
    c.reg(".reg .b32 %w<8>;")
    c.reg(".reg .b16 %x<8>;")
    c.reg(".reg .b16 %y<8>;")
    # The 16-byte inputs are loaded again as vectors (the generic loader reads only 4 bytes of them).
    def load_vec(param, dst, cnt, bits):
        c.emit(f"ld.param.u64 %ga, [p_{param}];", "cvta.to.global.u64 %ga, %ga;", "mul.wide.u32 %gb, %gi, 16;",
               "add.u64 %ga, %ga, %gb;", f"ld.global.v{cnt}.{bits} {{{', '.join(dst)}}}, [%ga];")
    F = [f"%f{k}" for k in range(8)]
    W = [f"%w{k}" for k in range(4)]
    X = [f"%x{k}" for k in range(8)]
    c.emit("// vector operands", "mov.b32 %r15, 0;", "mov.b16 %h15, 0;")
    load_vec("in0", F[:4], 4, "f32")
    c.emit("ld.param.u64 %ga, [p_in1];", "cvta.to.global.u64 %ga, %ga;", "mul.wide.u32 %gb, %gi, 16;",
           "add.u64 %ga, %ga, %gb;", "ld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%ga];",
           "mov.b32 {%x0, %x1}, %v0;", "mov.b32 {%x2, %x3}, %v1;", "mov.b32 {%x4, %x5}, %v2;", "mov.b32 {%x6, %x7}, %v3;")
    c.emit("ld.param.u64 %ga, [p_in2];", "cvta.to.global.u64 %ga, %ga;", "add.u64 %ga, %ga, %gb;",
           "ld.global.v4.b32 {%w0, %w1, %w2, %w3}, [%ga];", "mov.b32 {%y0, %y1}, %w0;", "mov.b32 {%y2, %y3}, %w1;")
    ops = [("f32", 0, "red.global.add.v2.f32 [%rd0], {%f0, %f1};", None),
           ("f32", 1, "atom.global.add.v4.f32 {%f8, %f9, %f10, %f11}, [%rd0], {%f0, %f1, %f2, %f3};",
            ["%f8", "%f9", "%f10", "%f11"]),
           ("f16", 2, "atom.global.min.noftz.v8.f16 {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, [%rd0], "
                      "{%x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7};", ["%h0", "%h1", "%h2", "%h3", "%h4", "%h5", "%h6", "%h7"]),
           ("bf16", 3, "red.global.max.noftz.v4.bf16 [%rd0], {%y0, %y1, %y2, %y3};", None),
           ("f16", 4, "red.global.add.noftz.v4.f16x2 [%rd0], {%v0, %v1, %v2, %v3};", None),
           ("bf16", 5, "atom.global.add.noftz.v2.bf16x2 {%r0, %r1}, [%rd0], {%w0, %w1};", ["%r0", "%r1"]),
           ("f16", 6, "atom.global.max.noftz.v2.f16 {%h8, %h9}, [%rd0], {%x0, %x7};", ["%h8", "%h9"]),
           ("f16", 7, "atom.global.min.noftz.v2.f16x2 {%r2, %r3}, [%rd0], {%v1, %v2};", ["%r2", "%r3"]),
           ("bf16", 8, "red.global.max.noftz.v4.bf16x2 [%rd0], {%w3, %w2, %w1, %w0};", None),
           ("f32", 9, "atom.global.add.v2.f32 {%f12, %f13}, [%rd0], {%f3, %f2};", ["%f12", "%f13"])]
    for cmp, k, ins, olds in ops:
        m = c.mem(inits[k], cmp)
        c.emit("mul.wide.u32 %gb, %gi, 16;", f"add.u64 %rd0, {m}, %gb;", ins)
        if olds:
            # Old values, packed into one 16-byte slot of an output.
            o = c.out(16, "b32")
            if olds[0].startswith("%h"):  # pairs of 16-bit olds into 32-bit words
                hs = olds + ["%h15"] * (len(olds) % 2)
                vals = [f"%r{8 + j}" for j in range(len(hs) // 2)]
                for j, r in enumerate(vals):
                    c.emit(f"mov.b32 {r}, {{{hs[2 * j]}, {hs[2 * j + 1]}}};")
            elif olds[0].startswith("%f"):
                vals = [f"%r{8 + j}" for j in range(len(olds))]
                for r, f in zip(vals, olds):
                    c.emit(f"mov.b32 {r}, {f};")
            else:
                vals = list(olds)
            vals += ["%r15"] * (4 - len(vals))  # %r15 = 0: the slot's unused words
            c.emit(f"ld.param.u64 %ga, [p_out{len(c.outputs) - 1}];", "cvta.to.global.u64 %ga, %ga;",
                   "mul.wide.u32 %gb, %gi, 16;", "add.u64 %ga, %ga, %gb;",
                   f"st.global.v4.b32 [%ga], {{{', '.join(vals)}}};")
    c.write()


def atomic_f32_add():
    """Whether f32 atomic adds flush subnormals, by state space (each thread its own element)."""
    n = 400
    p = pairs(F32, n)
    f64 = [0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x0010000000000000, 0x3ff0000000000000,
           0xbff0000000000000, 0x8000000000000000, 0x0000000000000000, 0x7ff8000000000000, 0x7ff0000000000000,
           0xfff0000000000000, 0x7fefffffffffffff, 0x0008000000000000, 0x3cb0000000000000, 0xc000000000000000,
           0x3fe5555555555555, 0x800fffffffffffff, 0x7ff0000000000001, 0x0000000000000002, 0x4340000000000001]
    q = pairs(f64, n)
    c = Case("atomic", "f32_add_subnormal", "atom/red add .f32 on .global, generic and .shared addresses and .f64, "
             "with subnormal, zero, infinite and NaN operands (each thread its own element)", "sm_90", "7.8", 90, n)
    va = c.inp(4, pack32(y for _, y in p))
    vd = c.inp(8, b"".join(struct.pack("<Q", y) for _, y in q))
    init = pack32(x for x, _ in p)
    for ins in ["atom.global.add.f32", "red.global.add.f32", "atom.add.f32", "red.add.f32"]:
        m = c.mem(init, "f32")
        c.emit("mul.wide.u32 %gb, %gi, 4;", f"add.u64 %rd0, {m}, %gb;")
        if ins.startswith("red"):
            c.emit(f"{ins} [%rd0], {va};")
        else:
            o = c.out(4, "f32")
            c.emit(f"{ins} %f0, [%rd0], {va};", f"mov.b32 {o}, %f0;")
    # Shared: the element staged through shared memory, the sum written back out.
    c.shared.append(".shared .align 8 .b8 s_f[1024];")
    m = c.mem(init, "f32")
    o = c.out(4, "f32")
    c.emit("mul.wide.u32 %gb, %gi, 4;", f"add.u64 %rd0, {m}, %gb;", "ld.global.b32 %r0, [%rd0];",
           "mov.u32 %t2, s_f;", "shl.b32 %t3, %gt, 2;", "add.u32 %t2, %t2, %t3;", "st.shared.b32 [%t2], %r0;",
           f"atom.shared.add.f32 %f1, [%t2], {va};", f"red.shared.add.f32 [%t2], {va};",
           "ld.shared.b32 %r1, [%t2];", "st.global.b32 [%rd0], %r1;", f"mov.b32 {o}, %f1;")
    m = c.mem(b"".join(struct.pack("<Q", x) for x, _ in q), "f64")
    o = c.out(8, "f64")
    c.emit("mul.wide.u32 %gb, %gi, 8;", f"add.u64 %rd0, {m}, %gb;", f"atom.global.add.f64 %rd1, [%rd0], {vd};",
           f"mov.b64 {o}, %rd1;")
    c.write()


def cache_policy():
    n = 256
    rnd = random.Random(4)
    c = Case("memory", "createpolicy_cache_hint_sm80", "createpolicy .fractional/.range (evict_last/first/"
             "unchanged/normal), the .L2::cache_hint policy operand on ld/st/atom/red/cp.async", "sm_80", "7.4", 80, n)
    src = c.inp(4, pack32(rnd.getrandbits(32) for _ in range(n)))
    c.reg(".reg .b64 %pol<8>;")
    c.shared.append(".shared .align 16 .b8 s_buf[4096];")
    c.emit("createpolicy.fractional.L2::evict_last.b64 %pol0, 1.0;",
           "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %pol1, 0.5;",
           "createpolicy.fractional.L2::evict_first.b64 %pol2;",
           "createpolicy.fractional.L2::evict_normal.L2::evict_first.b64 %pol3, 0.25;",
           "ld.param.u64 %rd1, [p_in0];", "cvta.to.global.u64 %rd1, %rd1;",
           "createpolicy.range.L2::evict_last.L2::evict_first.b64 %pol4, [%rd1], 256, 1024;",
           "createpolicy.range.global.L2::evict_unchanged.b64 %pol5, [%rd1], 512, 512;",
           "mul.wide.u32 %gb, %gi, 4;", "add.u64 %rd2, %rd1, %gb;")
    o = c.out(4)
    c.emit("ld.global.L2::cache_hint.b32 %r0, [%rd2], %pol0;",
           "ld.global.nc.L2::cache_hint.b32 %r1, [%rd2], %pol4;",
           "ld.global.L1::evict_last.L2::cache_hint.u32 %r2, [%rd2], %pol1;",
           f"add.u32 %r3, %r0, %r1;", f"xor.b32 {o}, %r3, %r2;")
    m = c.mem(pack32(rnd.getrandbits(32) for _ in range(n)), "u32")
    c.emit(f"add.u64 %rd3, {m}, %gb;", "st.global.L2::cache_hint.b32 [%rd3], %r0, %pol2;")
    m2 = c.mem(pack32([0] * 4), "u32")
    o = c.out(4)
    c.emit(f"red.global.add.L2::cache_hint.u32 [{m2}], %r0, %pol3;",
           f"atom.global.add.L2::cache_hint.u32 %r5, [{m2}+4], 1, %pol5;", f"and.b32 %r5, %r5, 0;",
           f"atom.global.or.L2::cache_hint.b32 %r6, [{m2}+8], %r1, %pol0;", f"and.b32 %r6, %r6, 0;",
           f"add.u32 {o}, %r5, %r6;")
    # cp.async with a cache hint: 4-byte and 16-byte copies into shared, read back.
    o = c.out(4)
    c.emit("mov.u32 %t2, s_buf;", "shl.b32 %t3, %gt, 2;", "add.u32 %t4, %t2, %t3;",
           "cp.async.ca.shared.global.L2::cache_hint [%t4], [%rd2], 4, %pol1;",
           "and.b32 %t5, %gt, 0xfffffffc;", "shl.b32 %t5, %t5, 2;", "add.u32 %t6, %t2, 2048;", "add.u32 %t6, %t6, %t5;",
           "and.b32 %t7, %gi, 0xfffffffc;", "mul.wide.u32 %rd4, %t7, 4;", "add.u64 %rd4, %rd1, %rd4;",
           "and.b32 %t1, %gt, 3;", "setp.eq.u32 %p2, %t1, 0;",
           "@%p2 cp.async.cg.shared.global.L2::cache_hint [%t6], [%rd4], 16, %pol2;",
           "cp.async.commit_group;", "cp.async.wait_all;", "bar.sync 0;",
           "ld.shared.u32 %r7, [%t4];", "add.u32 %t6, %t2, 2048;", "add.u32 %t6, %t6, %t3;",
           "ld.shared.u32 %r8, [%t6];", f"add.u32 {o}, %r7, %r8;")
    c.write()


def video_inputs(n, k):
    rnd = random.Random(k)
    vals = U32 + [rnd.getrandbits(32) for _ in range(n - len(U32))]
    return [vals[(i * (2 * k + 1)) % n] for i in range(n)]


def video_case(name, desc, ins, ptxv="7.0", target="sm_75", min_sm=75, tolerate=None):
    """tolerate: {instruction: mismatches} allowed in that instruction's output (see README.md)."""
    n = 256
    c = Case("video", name, desc, target, ptxv, min_sm, n)
    a, b, cc = (c.inp(4, pack32(video_inputs(n, k))) for k in (1, 2, 3))
    for s in ins:
        o = c.out(4)
        c.emit(s.format(d=o, a=a, b=b, c=cc))
        if tolerate and s in tolerate:
            c.compare_extra[f"out{len(c.outputs) - 1}"] = {"max_mismatches": tolerate[s]}
    c.write()


def video():
    scalar = []
    for op in ["vadd", "vsub", "vabsdiff", "vmin", "vmax"]:
        scalar += [f"{op}.s32.s32.s32 {{d}}, {{a}}, {{b}};", f"{op}.u32.u32.u32.sat {{d}}, {{a}}, {{b}};",
                   f"{op}.s32.s32.s32.sat {{d}}, {{a}}, {{b}};", f"{op}.s32.u32.s32.sat {{d}}, {{a}}.b0, {{b}}.h1;",
                   f"{op}.u32.s32.u32.sat.add {{d}}, {{a}}.b3, {{b}}.b2, {{c}};",
                   f"{op}.s32.s32.u32.min {{d}}, {{a}}.h0, {{b}}, {{c}};",
                   f"{op}.u32.u32.s32.sat.max {{d}}, {{a}}.b1, {{b}}.h0, {{c}};",
                   f"{op}.u32.u32.u32 {{d}}.h1, {{a}}.b1, {{b}}.b0, {{c}};",
                   f"{op}.s32.s32.s32.sat {{d}}.b2, {{a}}.h0, {{b}}.h1, {{c}};",
                   f"{op}.u32.s32.s32.sat {{d}}.b0, {{a}}.b2, {{b}}.b3, {{c}};"]
    video_case("scalar_arith", "vadd/vsub/vabsdiff/vmin/vmax: signed/unsigned operand and result types, .sat, "
               "byte/half selectors, secondary .add/.min/.max, merge into a byte/half of c", scalar)
    shifts = []
    for op in ["vshl", "vshr"]:
        for t in ["s32", "u32"]:
            shifts += [f"{op}.{t}.{t}.u32.clamp {{d}}, {{a}}, {{b}};", f"{op}.{t}.{t}.u32.wrap {{d}}, {{a}}, {{b}};",
                       f"{op}.{t}.{t}.u32.sat.clamp {{d}}, {{a}}.h1, {{b}}.b0;",
                       f"{op}.{t}.s32.u32.wrap.add {{d}}, {{a}}.b2, {{b}}.b1, {{c}};",
                       f"{op}.{t}.u32.u32.sat.clamp.max {{d}}, {{a}}.h0, {{b}}.b3, {{c}};",
                       f"{op}.{t}.{t}.u32.wrap {{d}}.h0, {{a}}, {{b}}.b0, {{c}};",
                       f"{op}.{t}.{t}.u32.sat.clamp {{d}}.b3, {{a}}.b1, {{b}}, {{c}};"]
    vmad = ["vmad.s32.s32.s32 {d}, {a}.b0, {b}.b1, {c};", "vmad.u32.u32.u32 {d}, {a}.h0, {b}.h1, {c};",
            "vmad.u32.u32.u32.sat {d}, {a}, {b}.h0, {c};", "vmad.s32.s32.s32.sat {d}, {a}.h1, {b}.h0, {c};",
            "vmad.s32.u32.s32.shr7 {d}, {a}.b2, {b}.b3, {c};", "vmad.s32.s32.s32.sat.shr15 {d}, {a}.h0, {b}.h1, {c};",
            "vmad.s32.s32.s32 {d}, -{a}.h0, {b}.h1, {c};", "vmad.s32.s32.u32 {d}, {a}.b1, -{b}.b0, {c};", "vmad.s32.u32.s32 {d}, {a}.b1, {b}.h0, -{c};",
            "vmad.u32.u32.u32.sat {d}, -{a}.b3, {b}.b3, {c};", "vmad.u32.u32.u32.po {d}, {a}.b0, {b}.b1, {c};",
            "vmad.s32.s32.s32.po.sat.shr7 {d}, {a}.h1, {b}.h1, {c};", "vmad.s32.s32.s32 {d}, {a}, {b}, {c};",
            "vmad.u32.s32.s32.sat {d}, {a}.h1, {b}.b2, -{c};"]
    vset = ["vset.s32.u32.lt {d}, {a}, {b};", "vset.u32.u32.ne {d}, {a}.b0, {b}.b1;",
            "vset.s32.s32.ge.add {d}, {a}.h1, {b}.h0, {c};", "vset.u32.s32.gt.min {d}, {a}.b3, {b}, {c};",
            "vset.s32.s32.le.max {d}, {a}.b2, {b}.b2, {c};", "vset.u32.u32.eq {d}.b1, {a}.h0, {b}.h0, {c};",
            "vset.s32.s32.lt {d}.h1, {a}, {b}.b3, {c};"]
    video_case("scalar_shift_mad_set", "vshl/vshr (.clamp/.wrap, .sat, secondary ops, merge), vmad (negated "
               "operands, .po, .sat, .shr7/.shr15), vset (compare, secondary ops, merge)", shifts + vmad + vset,
               tolerate={"vshl.u32.u32.u32.sat.clamp.max {d}, {a}.h0, {b}.b3, {c};": 1})
    simd2 = []
    for op in ["vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2"]:
        simd2 += [f"{op}.u32.u32.u32 {{d}}, {{a}}, {{b}}, {{c}};", f"{op}.s32.s32.s32.sat {{d}}, {{a}}, {{b}}, {{c}};",
                  f"{op}.u32.u32.u32.sat {{d}}.h0, {{a}}.h01, {{b}}.h32, {{c}};",
                  f"{op}.s32.u32.s32 {{d}}.h1, {{a}}.h13, {{b}}.h20, {{c}};",
                  f"{op}.u32.s32.u32.add {{d}}, {{a}}.h11, {{b}}.h03, {{c}};",
                  f"{op}.s32.s32.s32.add {{d}}.h0, {{a}}, {{b}}, {{c}};"]
    simd2 += ["vset2.u32.u32.lt {d}, {a}, {b}, {c};", "vset2.s32.s32.ne {d}.h1, {a}.h21, {b}.h03, {c};",
              "vset2.s32.u32.ge.add {d}, {a}, {b}, {c};", "vset2.u32.s32.eq.add {d}.h0, {a}.h00, {b}.h33, {c};"]
    video_case("simd2", "vadd2/vsub2/vavrg2/vabsdiff2/vmin2/vmax2/vset2: types, .sat, half selectors from a:b, "
               "merge masks, .add accumulate", simd2)
    simd4 = []
    for op in ["vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4"]:
        simd4 += [f"{op}.u32.u32.u32 {{d}}, {{a}}, {{b}}, {{c}};", f"{op}.s32.s32.s32.sat {{d}}, {{a}}, {{b}}, {{c}};",
                  f"{op}.u32.u32.u32.sat {{d}}.b10, {{a}}.b3210, {{b}}.b7654, {{c}};",
                  f"{op}.s32.u32.s32 {{d}}.b31, {{a}}.b0415, {{b}}.b2367, {{c}};",
                  f"{op}.u32.s32.u32.add {{d}}, {{a}}.b7531, {{b}}.b6420, {{c}};",
                  f"{op}.s32.s32.s32.add {{d}}.b2, {{a}}, {{b}}, {{c}};"]
    simd4 += ["vset4.u32.u32.lt {d}, {a}, {b}, {c};", "vset4.s32.s32.ne {d}.b320, {a}.b1357, {b}.b0246, {c};",
              "vset4.s32.u32.ge.add {d}, {a}, {b}, {c};", "vset4.u32.s32.le.add {d}.b3, {a}.b4444, {b}.b3210, {c};"]
    video_case("simd4", "vadd4/vsub4/vavrg4/vabsdiff4/vmin4/vmax4/vset4: types, .sat, byte selectors from a:b, "
               "merge masks, .add accumulate", simd4)


def progress():
    """Execution guarantees: a spin-wait between threads of a block (independent thread scheduling) and warp
    lockstep in legacy warp-synchronous code (shared memory stored by some lanes and loaded by others with no
    __syncwarp: the volatile reduction and scan, a plain read)."""
    n = 512
    c = Case("progress", "spin_chain_block", "thread t of each block spins on a volatile load until thread t+1 "
             "has written its slot, then writes one more: the block's last thread must run first", "sm_70", "7.0",
             70, n)
    m = c.mem(pack32([0] * n), "u32")
    o = c.out(4)
    c.emit("mul.wide.u32 %gb, %gi, 4;", f"add.u64 %rd1, {m}, %gb;", "add.u32 %t1, %gt, 1;",
           "setp.eq.u32 %p1, %t1, %gn;", "@%p1 bra $L_last;",
           "$L_wait:", "ld.volatile.global.u32 %r1, [%rd1+4];", "setp.eq.u32 %p2, %r1, 0;", "@%p2 bra $L_wait;",
           "add.u32 %r1, %r1, 1;", "bra.uni $L_store;",
           "$L_last:", "mov.u32 %r1, 1;",
           "$L_store:", "st.volatile.global.u32 [%rd1], %r1;", f"mov.u32 {o}, %r1;")
    c.write()

    rnd = random.Random(23)
    n, block = 256, 64

    def shared_slot(c, name):
        c.shared.append(f".shared .align 4 .b32 {name}[64];")
        c.emit(f"mov.u32 %r1, {name};", "shl.b32 %r2, %gt, 2;", "add.u32 %r2, %r1, %r2;")

    c = Case("progress", "warp_reduce_volatile", "the classic reduction's warp-synchronous tail: lanes 0-31 add "
             "s[t+32], s[t+16] ... s[t+1] through volatile shared memory with no __syncwarp (every lane's partial "
             "sum is stored)", "sm_70", "7.0", 70, n, block)
    a = c.inp(4, pack32(rnd.getrandbits(20) for _ in range(n)))
    o = c.out(4)
    shared_slot(c, "s_red")
    c.emit(f"st.shared.u32 [%r2], {a};", "bar.sync 0;", f"mov.u32 {o}, 0;", "setp.ge.u32 %p1, %gt, 32;",
           "@%p1 bra $L_red_end;")
    for off in (32, 16, 8, 4, 2, 1):
        c.emit("ld.volatile.shared.u32 %r3, [%r2];", f"ld.volatile.shared.u32 %r4, [%r2+{4 * off}];",
               "add.u32 %r3, %r3, %r4;", "st.volatile.shared.u32 [%r2], %r3;")
    c.emit(f"ld.volatile.shared.u32 {o}, [%r2];", "$L_red_end:")
    c.write()

    c = Case("progress", "warp_scan_volatile", "a warp-synchronous inclusive scan (Hillis-Steele) through volatile "
             "shared memory, no barrier: each step's loads see the previous step's stores and not this step's",
             "sm_70", "7.0", 70, n, block)
    a = c.inp(4, pack32(rnd.getrandbits(20) for _ in range(n)))
    o = c.out(4)
    shared_slot(c, "s_scan")
    c.emit("and.b32 %t1, %gt, 31;", f"st.volatile.shared.u32 [%r2], {a};")
    for off in (1, 2, 4, 8, 16):
        c.emit(f"setp.lt.u32 %p1, %t1, {off};", f"@%p1 bra $L_scan{off};",
               f"ld.volatile.shared.u32 %r3, [%r2+-{4 * off}];", "ld.volatile.shared.u32 %r4, [%r2];",
               "add.u32 %r3, %r3, %r4;", "st.volatile.shared.u32 [%r2], %r3;", f"$L_scan{off}:")
    c.emit(f"ld.volatile.shared.u32 {o}, [%r2];")
    c.write()

    c = Case("progress", "warp_read_plain", "plain shared stores by every lane, then lane 0 of each warp reads "
             "lanes 1-16's values with plain loads, no barrier or __syncwarp", "sm_70", "7.0", 70, n, block)
    a = c.inp(4, pack32(rnd.getrandbits(20) for _ in range(n)))
    o = c.out(4)
    shared_slot(c, "s_read")
    c.emit(f"st.shared.u32 [%r2], {a};", f"mov.u32 {o}, 0;", "and.b32 %t1, %gt, 31;", "setp.ne.u32 %p1, %t1, 0;",
           "@%p1 bra $L_read_end;")
    for k in range(1, 17):
        c.emit(f"ld.shared.u32 %r3, [%r2+{4 * k}];", f"mad.lo.u32 {o}, %r3, {k}, {o};")
    c.emit("$L_read_end:")
    c.write()

    c = Case("progress", "warp_reduce_loop", "the warp-synchronous reduction tail as a loop (s[t] += s[t+k] for "
             "k = 16, 8, ... 1 through volatile shared memory, no __syncwarp): a step's store reaches the next "
             "step's load through the back edge", "sm_70", "7.0", 70, n, block)
    loop_rnd = random.Random(24)
    a = c.inp(4, pack32(loop_rnd.getrandbits(20) for _ in range(n)))
    o = c.out(4)
    shared_slot(c, "s_loop")
    c.emit(f"st.shared.u32 [%r2], {a};", "bar.sync 0;", f"mov.u32 {o}, 0;", "setp.ge.u32 %p1, %gt, 32;",
           "@%p1 bra $L_loop_end;", "mov.u32 %r5, 64;",
           "$L_loop:", "add.u32 %r6, %r2, %r5;", "ld.volatile.shared.u32 %r3, [%r2];",
           "ld.volatile.shared.u32 %r4, [%r6];", "add.u32 %r3, %r3, %r4;", "st.volatile.shared.u32 [%r2], %r3;",
           "shr.u32 %r5, %r5, 1;", "setp.ge.u32 %p2, %r5, 4;", "@%p2 bra $L_loop;",
           f"ld.volatile.shared.u32 {o}, [%r2];", "$L_loop_end:")
    c.write()


def matrix_region(c, name):
    """Each thread stores its four input words into its warp's 512-byte region of shared array NAME (word
    k * 32 + lane), then %r9 = the region's address and %r8 = the row address this lane gives: row (5 * lane + 3)
    mod 32 of the region, so matrix rows come from scattered places."""
    c.shared.append(f".shared .align 16 .b32 {name}[256];")
    c.emit(f"mov.u32 %r8, {name};", "shr.u32 %t1, %gt, 5;", "shl.b32 %t1, %t1, 9;", "add.u32 %r9, %r8, %t1;",
           "and.b32 %t2, %gt, 31;", "shl.b32 %t3, %t2, 2;", "add.u32 %t3, %r9, %t3;",
           "mad.lo.u32 %t4, %t2, 5, 3;", "and.b32 %t4, %t4, 31;", "shl.b32 %t4, %t4, 4;", "add.u32 %r8, %r9, %t4;")
    return "%t3"


def matrix():
    """ldmatrix/stmatrix/movmatrix m8n8 .b16 in every count and .trans: rows gathered from (or scattered to)
    per-lane addresses, fragments in the documented lane order."""
    n, block = 256, 64
    rnd = random.Random(31)
    words = lambda: pack32(rnd.getrandbits(32) for _ in range(n))
    forms = [("x1", 1, ""), ("x2", 2, ""), ("x4", 4, ""), ("x1", 1, ".trans"), ("x2", 2, ".trans"),
             ("x4", 4, ".trans")]

    c = Case("matrix", "ldmatrix_m8n8_b16", "ldmatrix.sync.aligned.m8n8 .x1/.x2/.x4 with and without .trans, "
             ".shared and .shared::cta: every lane's fragment registers, rows read from scattered lane addresses",
             "sm_75", "7.8", 75, n, block)
    ins = [c.inp(4, words()) for _ in range(4)]
    slot = matrix_region(c, "s_ld")
    c.emit(*[f"st.shared.u32 [{slot}+{128 * k}], {a};" for k, a in enumerate(ins)], "bar.warp.sync -1;")
    for k, (x, cnt, trans) in enumerate(forms):
        outs = [c.out(4) for _ in range(cnt)]
        space = ".shared::cta" if k % 2 else ".shared"
        c.emit(f"ldmatrix.sync.aligned.m8n8.{x}{trans}{space}.b16 {{{', '.join(outs)}}}, [%r8];")
    c.write()

    c = Case("matrix", "stmatrix_m8n8_b16", "stmatrix.sync.aligned.m8n8 .x1/.x2/.x4 with and without .trans: "
             "every lane's fragment registers scattered to rows at per-lane addresses, the warp's 512 bytes read "
             "back", "sm_90", "7.8", 90, n, block)
    ins = [c.inp(4, words()) for _ in range(4)]
    slot = matrix_region(c, "s_st")
    for k, (x, cnt, trans) in enumerate(forms):
        outs = [c.out(4) for _ in range(4)]
        space = ".shared::cta" if k % 2 else ".shared"
        c.emit(*[f"st.shared.u32 [{slot}+{128 * j}], 0;" for j in range(4)], "bar.warp.sync -1;",
               f"stmatrix.sync.aligned.m8n8.{x}{trans}{space}.b16 [%r8], {{{', '.join(ins[:cnt])}}};",
               "bar.warp.sync -1;", *[f"ld.shared.u32 {o}, [{slot}+{128 * j}];" for j, o in enumerate(outs)],
               "bar.warp.sync -1;")
    c.write()

    c = Case("matrix", "movmatrix_m8n8_trans_b16", "movmatrix.sync.aligned.m8n8.trans.b16: the warp's 8x8 matrix "
             "of halves transposed across lanes", "sm_75", "7.8", 75, n, block)
    a = c.inp(4, words())
    o = c.out(4)
    c.emit(f"movmatrix.sync.aligned.m8n8.trans.b16 {o}, {a};")
    c.write()


def elect():
    """elect.sync: the leader is the lowest lane of the member mask, with a full mask and with the odd and even
    lanes electing apart; the sink and predicate-only forms."""
    n, block = 256, 64
    c = Case("warp", "elect_sync", "elect.sync d|p, membermask with a full warp and with the odd and even lanes as "
             "two separate member sets; elect.sync _|p", "sm_90", "8.0", 90, n, block)
    o0, o1, o2 = c.out(4), c.out(4), c.out(4)
    c.emit("elect.sync %r1|%p1, -1;", "selp.u32 %t0, 1, 0, %p1;", f"mad.lo.u32 {o0}, %r1, 2, %t0;",
           "and.b32 %t1, %gt, 1;", "setp.ne.u32 %p2, %t1, 0;", "@%p2 bra $L_odd;",
           "elect.sync %r2|%p3, 0x55555555;", "bra.uni $L_joined;",
           "$L_odd:", "elect.sync %r2|%p3, 0xaaaaaaaa;",
           "$L_joined:", "bar.warp.sync -1;", "selp.u32 %t0, 1, 0, %p3;", f"mad.lo.u32 {o1}, %r2, 2, %t0;",
           "elect.sync _|%p4, -1;", f"selp.u32 {o2}, 7, 9, %p4;")
    c.write()


def mbarrier():
    """mbarrier in all its forms. Each thread drives a barrier of its own through a fixed sequence (so results
    do not depend on scheduling): init, arrive (with counts), expect_tx, arrive.expect_tx, complete_tx,
    test_wait/try_wait by state and by .parity (with a time limit), arrive.noComplete, arrive_drop,
    pending_count and inval. A second case is a real barrier of the block with a transaction count."""
    n, block = 256, 64
    rnd = random.Random(37)
    c = Case("mbarrier", "forms_per_thread", "every mbarrier operation on a barrier per thread: phase completion "
             "by arrivals and transaction bytes, waits by state and parity, noComplete, arrive_drop, pending_count "
             "of each arrival's state, inval and re-init", "sm_90", "8.6", 90, n, block)
    tx = c.inp(4, pack32(1 + rnd.randrange(200) for _ in range(n)))
    cnt = c.inp(4, pack32(3 + rnd.randrange(3) for _ in range(n)))
    outs = [c.out(4) for _ in range(6)]
    c.shared.append(".shared .align 8 .b64 s_bar[64];")
    c.reg(".reg .b64 %st<8>;")
    bits = []

    def test(instr):
        bits.append(len(bits))
        c.emit(instr, f"selp.u32 %t0, {1 << (len(bits) - 1)}, 0, %p1;", f"or.b32 %acc, %acc, %t0;")

    c.emit("mov.u32 %r8, s_bar;", "shl.b32 %t1, %gt, 3;", "add.u32 %r8, %r8, %t1;", "mov.u32 %acc, 0;",
           "sub.u32 %r7, " + cnt + ", 1;",
           # phase 0 (cnt in 3..5): cnt arrivals (cnt - 2 of them in one arrive with a count) and tx + 4 transaction bytes
           f"mbarrier.init.shared.b64 [%r8], {cnt};",
           "mbarrier.arrive.shared.b64 %st0, [%r8];",
           f"mbarrier.pending_count.b64 {outs[0]}, %st0;")
    test("mbarrier.test_wait.shared.b64 %p1, [%r8], %st0;")
    c.emit(f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r8], {tx};",
           "sub.u32 %r6, %r7, 1;", "mbarrier.arrive.release.cta.shared::cta.b64 %st1, [%r8], %r6;",
           "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %st1, [%r8], 4;",
           f"mbarrier.pending_count.b64 {outs[1]}, %st1;")
    test("mbarrier.test_wait.shared.b64 %p1, [%r8], %st1;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 0;")
    c.emit(f"mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r8], {tx};")
    test("mbarrier.test_wait.acquire.cta.shared::cta.b64 %p1, [%r8], %st1;")
    c.emit("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r8], 4;")
    test("mbarrier.test_wait.shared.b64 %p1, [%r8], %st1;")
    test("mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r8], 0;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 1;")
    test("mbarrier.try_wait.shared::cta.b64 %p1, [%r8], %st1;")
    test("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r8], 1, 100;")
    test("mbarrier.try_wait.relaxed.cta.shared::cta.b64 %p1, [%r8], %st0, 1000;")
    # phase 1: an arrive_drop that does not complete, cnt - 2 arrivals without completing, then an arrive_drop
    # completes it; phase 2 expects cnt - 2 arrivals
    c.emit("mbarrier.arrive_drop.noComplete.shared.b64 %st4, [%r8], 1;", "sub.u32 %r6, %r7, 1;",
           "mbarrier.arrive.noComplete.shared.b64 %st2, [%r8], %r6;",
           f"mbarrier.pending_count.b64 {outs[2]}, %st2;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 1;")
    c.emit("mbarrier.arrive_drop.shared.b64 %st3, [%r8];", f"mbarrier.pending_count.b64 {outs[3]}, %st3;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 1;")
    test("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r8], 0;")
    c.emit("sub.u32 %r6, %r7, 2;", "setp.eq.u32 %p2, %r6, 0;", "@%p2 bra $L_phase2_left;",
           "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r8], %r6;",
           "$L_phase2_left:")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 0;")
    c.emit("mbarrier.arrive.shared.b64 %st5, [%r8];", f"mbarrier.pending_count.b64 {outs[4]}, %st5;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 0;")
    test("mbarrier.test_wait.shared.b64 %p1, [%r8], %st5;")
    # inval, then the same memory as a new barrier of one arrival
    c.emit("mbarrier.inval.shared.b64 [%r8];", "mbarrier.init.shared::cta.b64 [%r8], 1;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 0;")
    c.emit("mbarrier.arrive.expect_tx.shared.b64 %st6, [%r8], 8;",
           f"mbarrier.complete_tx.shared::cta.b64 [%r8], 8;")
    test("mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 0;")
    c.emit("mbarrier.inval.shared::cta.b64 [%r8];", f"mov.u32 {outs[5]}, %acc;")
    c.write()

    c = Case("mbarrier", "block_expect_tx", "an mbarrier of the whole block: thread 0 initialises it for the block "
             "and arrives with an expected transaction count, thread 37 stores the shared data and completes the "
             "transaction bytes, every thread waits with try_wait.parity and reads another thread's slot",
             "sm_90", "8.0", 90, n, block)
    a = c.inp(4, pack32(rnd.getrandbits(32) for _ in range(n)))
    o0, o1 = c.out(4), c.out(4)
    c.shared += [".shared .align 8 .b64 s_bbar;", ".shared .align 4 .b32 s_data[64];"]
    c.emit("mov.u32 %r8, s_bbar;", "mov.u32 %r9, s_data;", "shl.b32 %t1, %gt, 2;", "add.u32 %r5, %r9, %t1;",
           "setp.ne.u32 %p2, %gt, 0;", "@%p2 bra $L_inited;", "mbarrier.init.shared.b64 [%r8], 64;",
           "$L_inited:", "bar.sync 0;",
           f"st.shared.u32 [%r5], {a};",
           "@%p2 bra $L_plain_arrive;", "mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r8], 256;", "bra.uni $L_arrived;",
           "$L_plain_arrive:", "mbarrier.arrive.shared.b64 %rd1, [%r8];",
           "$L_arrived:",
           "setp.ne.u32 %p3, %gt, 37;", "@%p3 bra $L_wait;",
           "mbarrier.complete_tx.shared.b64 [%r8], 256;",
           "$L_wait:", "mbarrier.try_wait.parity.shared.b64 %p1, [%r8], 0;", "@!%p1 bra $L_wait;",
           "sub.u32 %t2, 63, %gt;", "shl.b32 %t2, %t2, 2;", "add.u32 %t2, %r9, %t2;", f"ld.shared.u32 {o0}, [%t2];",
           "mbarrier.test_wait.parity.shared.b64 %p1, [%r8], 1;", f"selp.u32 {o1}, 1, 2, %p1;")
    c.write()


def fp8_bytes(rnd, kind, count):
    """count random finite fp8 bytes of kind e4m3 or e5m2, subnormals and zeros of both signs included."""
    out = []
    while len(out) < count:
        v = rnd.getrandbits(8)
        if (kind == "e4m3" and v & 0x7f == 0x7f) or (kind == "e5m2" and v & 0x7c == 0x7c):
            continue
        out.append(v)
    return out


def mma_fp8():
    """mma.sync m16n8k32 on fp8 (e4m3, e5m2 and mixed) into f32, as cuBLASLt uses it."""
    n, block = 128, 64
    rnd = random.Random(41)
    c = Case("matrix", "mma_m16n8k32_fp8", "mma.sync.aligned.m16n8k32.row.col.f32 with .e4m3/.e5m2 A and B "
             "(both kinds and mixed), f32 accumulators, random finite operands with subnormals", "sm_89", "8.4", 89,
             n, block)
    variants = [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2")]
    for ta, tb in variants:
        a = [c.inp(4, bytes(fp8_bytes(rnd, ta, 4 * n))) for _ in range(4)]
        b = [c.inp(4, bytes(fp8_bytes(rnd, tb, 4 * n))) for _ in range(2)]
        cc = [c.inp(4, b"".join(struct.pack("<f", rnd.uniform(-4, 4)) for _ in range(n))) for _ in range(4)]
        d = [c.out(4, "f32") for _ in range(4)]
        for o in d:  # the GPU's fp8 accumulation truncates somewhere inside; ptxforge rounds the exact sum once
            c.compare_extra[f"out{int(o[2:])}"] = {"rel_tol": 1e-4}
        c.emit(f"mma.sync.aligned.m16n8k32.row.col.f32.{ta}.{tb}.f32 {{{', '.join(d)}}}, {{{', '.join(a)}}}, "
               f"{{{', '.join(b)}}}, {{{', '.join(cc)}}};")
    c.write()


def sparse_meta(rnd, kind, n):
    """n random 32-bit sparsity metadata words, every 4-bit field valid: two increasing 2-bit indices for 2:4
    sparsity (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110), 0b0100 or 0b1110 for tf32's 1:2."""
    fields = [0x4, 0xE] if kind == "tf32" else [0x4, 0x8, 0xC, 0x9, 0xD, 0xE]
    return [sum(rnd.choice(fields) << (4 * k) for k in range(8)) for _ in range(n)]


def sparse_values(rnd, t, count):
    """count non-zero elements of type t as bits: multiples of 1/8 in [-2, 2] (every product and sum exact) for
    f16/bf16/tf32, random bytes for the integer types, random finite fp8."""
    if t in ("s8", "u8"):
        return [rnd.getrandbits(8) for _ in range(count)]
    if t in ("s4", "u4"):
        return [rnd.getrandbits(4) for _ in range(count)]
    if t in ("e4m3", "e5m2"):
        return fp8_bytes(rnd, t, count)
    vals = [rnd.choice([v for v in range(-16, 17) if v]) / 8 for _ in range(count)]
    if t == "f16":
        return [struct.unpack("<H", struct.pack("<e", v))[0] for v in vals]
    bits = [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
    return [b >> 16 for b in bits] if t == "bf16" else bits


def pack_regs(vals, bits):
    per = 32 // bits
    return [sum(v << (bits * k) for k, v in enumerate(vals[i:i + per])) for i in range(0, len(vals), per)]


SPARSE_SHAPES = {  # (shape, A type) -> (A registers, B registers)
    ("m16n8k16", "f16"): (2, 2), ("m16n8k32", "f16"): (4, 4), ("m16n8k8", "tf32"): (2, 2),
    ("m16n8k16", "tf32"): (4, 4), ("m16n8k32", "s8"): (2, 2), ("m16n8k64", "s8"): (4, 4), ("m16n8k64", "e4m3"): (4, 4),
    ("m16n8k64", "s4"): (2, 2), ("m16n8k128", "s4"): (4, 4)}


def mma_sparse_case(name, desc, target, version, min_sm, variants, seed, tol=None):
    """One warp-level case of mma.sp variants (form, shape, dtype, atype, btype, ctype, selector): each lane
    loads its A, B, C fragments and metadata word, every lane's metadata valid (unselected lanes' too)."""
    n, block = 128, 64
    rnd = random.Random(seed)
    c = Case("matrix", name, desc, target, version, min_sm, n, block)
    bits = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s4": 4, "u4": 4}
    for form, shape, td, ta, tb, tc, sel in variants:
        key = (shape, {"bf16": "f16", "u8": "s8", "e5m2": "e4m3", "u4": "s4"}.get(ta, ta))
        na, nb = SPARSE_SHAPES[key]
        def frag(t, nregs):
            words = [pack_regs(sparse_values(rnd, t, 32 // bits[t]), bits[t])[0] for _ in range(nregs * n)]
            return [c.inp(4, pack32(words[k * n:(k + 1) * n])) for k in range(nregs)]
        a, b = frag(ta, na), frag(tb, nb)
        if tc == "f16":
            cc = [c.inp(4, pack32(pack_regs(sparse_values(rnd, "f16", 2 * n), 16))) for _ in range(2)]
        elif tc == "s32":
            cc = [c.inp(4, pack32([rnd.randrange(-2**31, 2**31) if sat else rnd.randrange(-5000, 5000)
                                   for _ in range(n)])) for sat in [form.endswith("satfinite")] * 4]
        else:
            cc = [c.inp(4, pack32(sparse_values(rnd, "tf32", n))) for _ in range(4)]
        e = c.inp(4, pack32(sparse_meta(rnd, "tf32" if ta == "tf32" else "24", n)))
        d = [c.out(4, "f32" if td == "f32" else td if td == "s32" else "u32") for _ in range(len(cc))]
        if tol:
            for o in d:
                c.compare_extra[f"out{int(o[2:])}"] = tol
        mod, sat = form.split(".")[0], ".satfinite" if form.endswith("satfinite") else ""
        c.emit(f"mma.{mod}.sync.aligned.{shape}.row.col{sat}.{td}.{ta}.{tb}.{tc} {{{', '.join(d)}}}, "
               f"{{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(cc)}}}, {e}, {sel};")
    c.write()


def mma_sparse():
    """mma.sp and mma.sp::ordered_metadata (2:4 / 1:2 structured-sparse A with its metadata and sparsity
    selector) for every shape and type cuSPARSELt and CUTLASS use up to sm_90."""
    O = "sp::ordered_metadata"
    mma_sparse_case("mma_sp_m16n8k16_f16", "mma.sp(::ordered_metadata) m16n8k16 f16/bf16 A and B, f32 and f16 "
                    "accumulators, sparsity selectors 0-3", "sm_80", "8.5", 80,
                    [("sp", "m16n8k16", "f32", "f16", "f16", "f32", 0), ("sp", "m16n8k16", "f32", "f16", "f16", "f32", 1),
                     (O, "m16n8k16", "f32", "f16", "f16", "f32", 2), (O, "m16n8k16", "f32", "bf16", "bf16", "f32", 3),
                     ("sp", "m16n8k16", "f16", "f16", "f16", "f16", 2), (O, "m16n8k16", "f32", "bf16", "bf16", "f32", 0)],
                    201)
    mma_sparse_case("mma_sp_m16n8k32_f16", "mma.sp(::ordered_metadata) m16n8k32 f16/bf16 A and B, f32 and f16 "
                    "accumulators, sparsity selectors 0 and 1", "sm_80", "8.5", 80,
                    [("sp", "m16n8k32", "f32", "f16", "f16", "f32", 0), (O, "m16n8k32", "f32", "f16", "f16", "f32", 1),
                     (O, "m16n8k32", "f32", "bf16", "bf16", "f32", 0), ("sp", "m16n8k32", "f16", "f16", "f16", "f16", 1)],
                    202)
    mma_sparse_case("mma_sp_tf32", "mma.sp(::ordered_metadata) m16n8k8 and m16n8k16 tf32 (1:2 sparsity), f32 "
                    "accumulators, sparsity selectors 0-3 and 0-1", "sm_80", "8.5", 80,
                    [("sp", "m16n8k8", "f32", "tf32", "tf32", "f32", 0), (O, "m16n8k8", "f32", "tf32", "tf32", "f32", 3),
                     ("sp", "m16n8k16", "f32", "tf32", "tf32", "f32", 0), (O, "m16n8k16", "f32", "tf32", "tf32", "f32", 1)],
                    203)
    mma_sparse_case("mma_sp_int8", "mma.sp(::ordered_metadata) m16n8k32 and m16n8k64 s8/u8 A and B (mixed too), "
                    "s32 accumulators, .satfinite, sparsity selectors 0-1 and 0", "sm_80", "8.5", 80,
                    [("sp", "m16n8k32", "s32", "s8", "s8", "s32", 0), (O, "m16n8k32", "s32", "u8", "u8", "s32", 1),
                     (O + ".satfinite", "m16n8k32", "s32", "s8", "u8", "s32", 1),
                     ("sp", "m16n8k64", "s32", "s8", "s8", "s32", 0), (O, "m16n8k64", "s32", "u8", "s8", "s32", 0),
                     (O + ".satfinite", "m16n8k64", "s32", "u8", "u8", "s32", 0)], 204)
    mma_sparse_case("mma_sp_fp8", "mma.sp::ordered_metadata m16n8k64 e4m3/e5m2 A and B (mixed too), f32 "
                    "accumulators, random finite operands", "sm_89", "8.5", 89,
                    [(O, "m16n8k64", "f32", "e4m3", "e4m3", "f32", 0), (O, "m16n8k64", "f32", "e5m2", "e5m2", "f32", 0),
                     (O, "m16n8k64", "f32", "e4m3", "e5m2", "f32", 0)], 205, tol={"rel_tol": 1e-4})
    mma_sparse_case("mma_sp_int4", "mma.sp(::ordered_metadata) m16n8k64 and m16n8k128 s4/u4 A and B (mixed too), "
                    "s32 accumulators, .satfinite, sparsity selectors 0-1 and 0", "sm_80", "8.5", 80,
                    [("sp", "m16n8k64", "s32", "s4", "s4", "s32", 0), (O, "m16n8k64", "s32", "u4", "u4", "s32", 1),
                     (O + ".satfinite", "m16n8k64", "s32", "s4", "u4", "s32", 1),
                     ("sp", "m16n8k128", "s32", "s4", "s4", "s32", 0), (O, "m16n8k128", "s32", "u4", "s4", "s32", 0),
                     (O + ".satfinite", "m16n8k128", "s32", "u4", "u4", "s32", 0)], 206)


LOP3_LUTS = [0x00, 0xff, 0xf0, 0xcc, 0xaa, 0x96, 0xe8, 0xca, 0x1e, 0x6a, 0x80, 0xfe, 0x01, 0x5b]


def int24_lop3():
    """mul24/mad24 (.lo/.hi, .s32/.u32, mad24.hi.sat) and lop3 with a spread of look-up tables, plus lop3's
    predicate form (PTX 8.2): d|p = lut(a, b, c) combined with q by .and/.or."""
    n = 400
    p = pairs(U32, n)
    c = Case("int", "mul24_mad24_lop3", "mul24/mad24 .lo/.hi on .u32/.s32 (mad24.hi.sat.s32), lop3.b32 with 14 "
             "look-up tables and lop3.and/.or.b32 d|p with a predicate", "sm_90", "8.2", 90, n)
    a, b = c.inp(4, pack32(x for x, _ in p)), c.inp(4, pack32(y for _, y in p))
    cc = c.inp(4, pack32(U32[(i * 7 + 3) % len(U32)] for i in range(n)))
    ops = [f"mul24.{h}.{t} {{d}}, {a}, {b};" for t in ("u32", "s32") for h in ("lo", "hi")]
    ops += [f"mad24.{h}.{t} {{d}}, {a}, {b}, {cc};" for t in ("u32", "s32") for h in ("lo", "hi")]
    ops.append(f"mad24.hi.sat.s32 {{d}}, {a}, {b}, {cc};")
    ops += [f"lop3.b32 {{d}}, {a}, {b}, {cc}, {lut:#04x};" for lut in LOP3_LUTS]
    for s in ops:
        c.emit(s.format(d=c.out(4)))
    c.emit("and.b32 %t1, %gi, 1;", "setp.ne.u32 %q0, %t1, 0;")
    for k, (op, lut) in enumerate([("and", 0x96), ("or", 0xe8), ("and", 0x00), ("or", 0xff)]):
        o, f = c.out(4), c.out(4)
        c.emit(f"lop3.{op}.b32 {o}|%p{k}, {a}, {b}, {cc}, {lut:#04x}, {'!' if k % 2 else ''}%q0;",
               f"selp.u32 {f}, 1, 0, %p{k};")
    c.write()


def ldu():
    """ldu.global of every width from addresses common to a warp (the instruction's premise): warp w reads the
    w-th element, pair or quad of a table."""
    n, rnd = 256, random.Random(31)
    c = Case("memory", "ldu_uniform", "ldu.global .u8/.s8/.s16/.u32/.f32/.u64/.f64 and .v2/.v4 of .u32, .v2.u64 "
             "from a per-warp address", "sm_90", "8.2", 90, n)
    m = c.mem(pack32(U32 + [rnd.getrandbits(32) for _ in range(108)]), "u32")
    c.reg(".reg .u64 %lw, %lp;")
    c.emit("shr.u32 %t1, %gi, 5;", "cvt.u64.u32 %lw, %t1;")
    c.reg(".reg .f64 %fd0;")
    loads = [("u8", 1, "%r0"), ("s8", 1, "%r0"), ("s16", 2, "%r0"), ("u32", 4, "%r0"), ("f32", 4, "%f0"),
             ("u64", 8, "%rd1"), ("f64", 8, "%fd0")]
    for t, size, reg in loads:
        width = max(size, 4)
        o = c.out(width, {"u8": "u32", "s8": "s32", "s16": "s32"}.get(t, t))
        c.emit(f"mad.lo.u64 %lp, %lw, {2 * size}, {m};", f"ldu.global.{t} {reg}, [%lp];",
               f"mov.b{8 * width} {o}, {reg};")
    for vec, t, size in (("v2", "u32", 8), ("v4", "u32", 16), ("v2", "u64", 16)):
        regs = ["%r1", "%r2", "%r3", "%r4"] if t == "u32" else ["%rd2", "%rd3"]
        regs = regs[:int(vec[1])]
        c.emit(f"mad.lo.u64 %lp, %lw, {size}, {m};", f"ldu.global.{vec}.{t} {{{', '.join(regs)}}}, [%lp];")
        for r in regs:
            o = c.out(8 if t == "u64" else 4, t)
            c.emit(f"mov.b{64 if t == 'u64' else 32} {o}, {r};")
    c.write()


def stack():
    """alloca of a per-thread size (4-64 bytes, 16-byte aligned) and of a constant, between stacksave and
    stackrestore: the memory holds what the thread stores, the alignment holds, and after the restore the stack
    pointer is the saved one again."""
    n = 256
    c = Case("memory", "alloca_stacksave", "alloca.u64 with a register size and .align 16, and with an immediate "
             "size; stacksave/stackrestore around them (the restored pointer equals the saved one)", "sm_90", "8.2",
             90, n)
    a = c.inp(4, pack32(video_inputs(n, 5)))
    o_sum, o_align, o_back, o_imm = c.out(4), c.out(4), c.out(4), c.out(4)
    c.reg(".reg .u64 %ss0, %ss1, %sz, %buf, %cur, %end, %imm;")
    c.emit("stacksave.u64 %ss0;", f"and.b32 %t1, {a}, 60;", "add.u32 %t1, %t1, 4;", "cvt.u64.u32 %sz, %t1;",
           "alloca.u64 %buf, %sz, 16;", "mov.u64 %cur, %buf;", "add.u64 %end, %buf, %sz;", f"mov.u32 %t2, {a};",
           "$L_fill:", "st.local.u32 [%cur], %t2;", "add.u32 %t2, %t2, 0x01010101;", "add.u64 %cur, %cur, 4;",
           "setp.lt.u64 %p1, %cur, %end;", "@%p1 bra $L_fill;",
           f"mov.u32 {o_sum}, 0;", "mov.u64 %cur, %buf;",
           "$L_sum:", "ld.local.u32 %t2, [%cur];", f"xor.b32 %t3, {o_sum}, %t2;", f"shf.l.wrap.b32 {o_sum}, %t3, %t3, 5;",
           "add.u64 %cur, %cur, 4;", "setp.lt.u64 %p1, %cur, %end;", "@%p1 bra $L_sum;",
           "cvt.u32.u64 %t4, %buf;", f"and.b32 {o_align}, %t4, 15;",
           "stackrestore.u64 %ss0;", "stacksave.u64 %ss1;", "setp.eq.u64 %p2, %ss0, %ss1;", f"selp.u32 {o_back}, 1, 0, %p2;",
           "alloca.u64 %imm, 24;", f"st.local.v2.u32 [%imm], {{{a}, %t1}};", "st.local.u32 [%imm+8], %gi;",
           "ld.local.v2.u32 {%t5, %t6}, [%imm];", "ld.local.u32 %t7, [%imm+8];", "add.u32 %t5, %t5, %t6;",
           f"add.u32 {o_imm}, %t5, %t7;", "stackrestore.u64 %ss0;")
    c.write()


def hints():
    """Instructions with no effect on a single grid's results, run where the GPU accepts them: griddepcontrol
    (no dependent or prerequisite grid), pmevent, applypriority, setmaxnreg (one warpgroup, sm_90a, .maxnreg so
    that ptxas knows the count at entry) and discard (lane 0 of each warp discards its warp's 128-byte line, a
    barrier orders that before the warp's stores, which must all land)."""
    n = 128
    c = Case("memory", "hints_discard_setmaxnreg", "griddepcontrol.launch_dependents/.wait, pmevent(.mask), "
             "applypriority.global.L2::evict_normal, setmaxnreg.dec/.inc.sync.aligned, and discard.global.L2 of a "
             "line before the block's stores to it", "sm_90a", "8.2", 90, n)
    c.directives = " .maxntid 128, 1, 1 .maxnreg 128"
    a = c.inp(4, pack32(video_inputs(n, 7)))
    m = c.mem(pack32([0xdeadbeef] * n), "u32")
    o_calc, o_peer = c.out(4), c.out(4)
    c.reg(".reg .u64 %line, %mine, %peer;")
    c.emit("griddepcontrol.wait;", "pmevent 3;", "pmevent.mask 0x0081;",
           "setmaxnreg.dec.sync.aligned.u32 64;", f"mad.lo.u32 {o_calc}, {a}, 3, 1;",
           "setmaxnreg.inc.sync.aligned.u32 96;",
           "and.b32 %t1, %gt, 0xffffffe0;", "mul.wide.u32 %gb, %t1, 4;", f"add.u64 %line, {m}, %gb;",
           "and.b32 %t2, %gt, 31;", "setp.eq.u32 %p1, %t2, 0;", "@%p1 discard.global.L2 [%line], 128;",
           "bar.sync 0;", "mul.wide.u32 %gb, %gt, 4;", f"add.u64 %mine, {m}, %gb;", f"st.global.u32 [%mine], {a};",
           "bar.sync 0;", "xor.b32 %t3, %gt, 1;", "mul.wide.u32 %gb, %t3, 4;", f"add.u64 %peer, {m}, %gb;",
           f"ld.global.u32 {o_peer}, [%peer];", "@%p1 applypriority.global.L2::evict_normal [%line], 128;",
           "griddepcontrol.launch_dependents;")
    c.write()


def raw_case(cat, name, desc, ptx, grid, block, params, buffers, inputs=()):
    """A case whose kernel.ptx is written out whole: params in .entry order, buffers as case.json has them,
    inputs (file name, bytes) written beside it."""
    d = os.path.join(OUT, cat, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(ptx)
    for fname, data in inputs:
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)
    case = {"name": f"{cat}/{name}", "description": desc, "ptx": "kernel.ptx", "entry": f"k_{name}", "min_sm": 90,
            "grid": list(grid), "block": list(block), "dynamic_shared_bytes": 0, "params": params,
            "buffers": buffers}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    cases.append({"name": case["name"], "dir": f"{cat}/{name}", "min_sm": 90, "ptx_version": "8.0",
                  "target": "sm_90", "description": desc})


CLUSTER_HEADER = ["//", "// ptxforge conformance case (tests/conformance/cases/generate.py): thread-block clusters", "//",
                  ".version 8.0", ".target sm_90", ".address_size 64", ""]
# Stores %r<k> to out[k * N + gid] (gid in %gid, N threads in the grid, out's address in %out).
def store_outputs(regs, n):
    L = []
    for k, r in enumerate(regs):
        L += [f"\tmad.lo.u32 %t0, {k}, {n}, %gid;", "\tmul.wide.u32 %ta, %t0, 4;", "\tadd.u64 %ta, %out, %ta;",
              f"\tst.global.u32 [%ta], {r};"]
    return L


def cluster_kernel(name, directive, shared, body, outs, n, extra_params=()):
    params = ["\t.param .u64 p_out"] + [f"\t.param .u64 {p}" for p in extra_params]
    L = CLUSTER_HEADER + shared + [f".visible .entry k_{name}(", ",\n".join(params), f"){directive}", "{",
                                   "\t.reg .pred %p<8>;", "\t.reg .b32 %r<48>, %t<4>, %gid, %tx, %rank, %peer;",
                                   "\t.reg .b64 %rd<16>, %ta, %out;",
                                   "\tmov.u32 %tx, %tid.x;", "\tmov.u32 %t1, %ntid.x;",
                                   "\tmov.u32 %t2, %ctaid.y;", "\tmov.u32 %t3, %nctaid.x;",
                                   "\tmov.u32 %t0, %ctaid.z;", "\tmov.u32 %gid, %nctaid.y;",
                                   "\tmad.lo.u32 %t2, %t0, %gid, %t2;",
                                   "\tmov.u32 %t0, %ctaid.x;", "\tmad.lo.u32 %t0, %t2, %t3, %t0;",
                                   "\tmad.lo.u32 %gid, %t0, %t1, %tx;",
                                   "\tld.param.u64 %out, [p_out];", "\tcvta.to.global.u64 %out, %out;",
                                   "\tmov.u32 %rank, %cluster_ctarank;"]
    L += [f"\t{b}" if not b.endswith(":") else b for b in body]
    L += store_outputs(outs, n)
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def out_buffer(nouts, n):
    return {"bytes": 4 * nouts * n, "init": {"fill_byte": 205}, "expect": "out.expect.bin", "compare": {"as": "u32"}}


CLUSTER_SREGS = ["%cluster_ctarank", "%cluster_nctarank", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
                 "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%clusterid.x", "%clusterid.y",
                 "%clusterid.z", "%nclusterid.x", "%nclusterid.y", "%nclusterid.z", "%is_explicit_cluster"]


def clusters():
    """Thread-block clusters (.reqnctapercluster, so a plain cuLaunchKernel launches them): distributed shared
    memory through mapa and .shared::cluster accesses and atomics, barrier.cluster, generic addresses of another
    block's shared memory, getctarank, isspacep and cvta, the cluster registers, and a remote mbarrier arrive."""
    rnd = random.Random(53)
    # -- a cluster of 2: each block reads its peer's data, writes into its peer's inbox, updates its counters
    n, block = 512, 64
    body = ["mov.u32 %r5, s_data;", "shl.b32 %r6, %tx, 2;", "add.u32 %r7, %r5, %r6;",
            "ld.param.u64 %rd1, [p_in];", "cvta.to.global.u64 %rd1, %rd1;", "mul.wide.u32 %rd2, %gid, 4;",
            "add.u64 %rd1, %rd1, %rd2;", "ld.global.u32 %r4, [%rd1];", "st.shared.u32 [%r7], %r4;",
            "setp.ne.u32 %p1, %tx, 0;", "@%p1 bra $L_zeroed;", "st.shared.u32 [s_count], 0;",
            "st.shared.u32 [s_ticket], 0;", "st.shared.u32 [s_mask], 0;", "st.shared.u32 [s_mask+4], 0;",
            "$L_zeroed:",
            "barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;",
            "xor.b32 %peer, %rank, 1;",
            "sub.u32 %r10, 63, %tx;", "shl.b32 %r10, %r10, 2;", "add.u32 %r10, %r5, %r10;",
            "mapa.shared::cluster.u32 %r11, %r10, %peer;", "ld.shared::cluster.u32 %r12, [%r11];",
            "getctarank.shared::cluster.u32 %r13, %r11;",
            "mov.u32 %r14, s_inbox;", "add.u32 %r14, %r14, %r6;", "mapa.shared::cluster.u32 %r15, %r14, %peer;",
            "mad.lo.u32 %r16, %rank, 1000, %r4;", "st.shared::cluster.u32 [%r15], %r16;",
            "mov.u32 %r17, s_count;", "mapa.shared::cluster.u32 %r18, %r17, %peer;", "add.u32 %r19, %tx, 1;",
            "red.shared::cluster.add.u32 [%r18], %r19;", "atom.shared.add.u32 %r20, [s_count], 2;",
            "atom.shared::cluster.max.u32 %r20, [%r18], 0;",
            # tickets: each thread takes one from the peer's counter (atom.shared::cluster's old value) and sets
            # that bit of the peer's mask: all 64 bits are set exactly when the tickets are 0..63
            "mov.u32 %r21, s_ticket;", "mapa.shared::cluster.u32 %r21, %r21, %peer;",
            "atom.shared::cluster.add.u32 %r30, [%r21], 1;", "shr.u32 %r31, %r30, 5;", "shl.b32 %r31, %r31, 2;",
            "mov.u32 %r32, s_mask;", "add.u32 %r32, %r32, %r31;", "mapa.shared::cluster.u32 %r32, %r32, %peer;",
            "and.b32 %r33, %r30, 31;", "shl.b32 %r33, 1, %r33;", "atom.shared::cluster.or.b32 %r34, [%r32], %r33;",
            "barrier.cluster.arrive.aligned;", "barrier.cluster.wait.aligned;",
            "ld.shared.u32 %r22, [%r14];", "ld.shared.u32 %r23, [s_count];", "ld.shared.u32 %r24, [s_ticket];",
            "getctarank.shared::cluster.u32 %r25, %r7;", "and.b32 %r35, %tx, 1;", "shl.b32 %r35, %r35, 2;",
            "mov.u32 %r36, s_mask;", "add.u32 %r36, %r36, %r35;", "ld.shared.u32 %r26, [%r36];"]
    shared = [".shared .align 4 .b32 s_data[64];", ".shared .align 4 .b32 s_inbox[64];",
              ".shared .align 4 .b32 s_count;", ".shared .align 4 .b32 s_ticket;", ".shared .align 4 .b32 s_mask[2];",
              ""]
    outs = ["%r12", "%r13", "%r22", "%r23", "%r24", "%r25", "%rank", "%peer", "%r26"]
    ptx = cluster_kernel("dsmem_exchange_2", " .reqnctapercluster 2, 1, 1", shared, body, outs, n, ["p_in"])
    data = pack32(rnd.getrandbits(20) for _ in range(n))
    raw_case("cluster", "dsmem_exchange_2", "a cluster of 2 blocks: each reads its peer's shared memory (mapa, "
             "ld.shared::cluster), writes into the peer's (st.shared::cluster), updates the peer's counters "
             "(red/atom.shared::cluster, beside the peer's own atom.shared; unique atom tickets), barrier.cluster between; "
             "getctarank",
             ptx, [n // block, 1, 1], [block, 1, 1], [{"type": "u64", "buffer": "out"}, {"type": "u64", "buffer": "in"}],
             {"out": out_buffer(len(outs), n), "in": {"bytes": 4 * n, "init": "in.bin"}}, [("in.bin", data)])

    # -- clusters of 2x2 in a 4x4 grid: the registers, and the next rank's memory through generic addresses
    n, block = 16 * 32, 32
    body = ["mad.lo.u32 %r4, %t2, 100, %tx;", "mov.u32 %t0, %ctaid.x;", "mad.lo.u32 %r4, %t0, 1000, %r4;",
            "mov.u32 %r5, s_val;", "shl.b32 %r6, %tx, 2;", "add.u32 %r7, %r5, %r6;", "st.shared.u32 [%r7], %r4;",
            "barrier.cluster.arrive;", "barrier.cluster.wait;",
            "mov.u32 %r8, %cluster_nctarank;", "add.u32 %peer, %rank, 1;", "rem.u32 %peer, %peer, %r8;",
            "mov.u64 %rd0, s_val;", "cvta.shared.u64 %rd1, %rd0;",
            "mul.wide.u32 %rd2, %tx, 4;", "add.u64 %rd1, %rd1, %rd2;",
            "mapa.u64 %rd3, %rd1, %peer;", "ld.u32 %r10, [%rd3];", "getctarank.u64 %r11, %rd3;",
            "isspacep.shared::cluster %p1, %rd3;", "selp.u32 %r12, 1, 0, %p1;",
            "isspacep.global %p2, %rd3;", "selp.u32 %r13, 1, 0, %p2;",
            "isspacep.shared::cluster %p3, %rd1;", "selp.u32 %r14, 1, 0, %p3;",
            "cvta.to.shared::cluster.u64 %rd4, %rd3;", "ld.shared::cluster.u32 %r15, [%rd4];",
            "getctarank.shared::cluster.u64 %r16, %rd4;",
            "mapa.shared::cluster.u32 %r17, %r7, %peer;",
            "cvt.u64.u32 %rd5, %r17;", "cvta.shared::cluster.u64 %rd6, %rd5;", "ld.u32 %r19, [%rd6];",
            "getctarank.u64 %r20, %rd1;",
            "barrier.cluster.arrive.release;", "barrier.cluster.wait.acquire;"]
    sreg_regs = []
    for k, sreg in enumerate(CLUSTER_SREGS):
        body.append(f"mov.pred %p7, {sreg};" if sreg == "%is_explicit_cluster" else f"mov.u32 %r{21 + k}, {sreg};")
        if sreg == "%is_explicit_cluster":
            body.append(f"selp.u32 %r{21 + k}, 1, 0, %p7;")
        sreg_regs.append(f"%r{21 + k}")
    outs = ["%r10", "%r11", "%r12", "%r13", "%r14", "%r15", "%r16", "%r19", "%r20"] + sreg_regs
    ptx = cluster_kernel("dsmem_ring_2x2", " .reqnctapercluster 2, 2, 1", [".shared .align 4 .b32 s_val[32];", ""],
                         body, outs, n)
    raw_case("cluster", "dsmem_ring_2x2", "clusters of 2x2 blocks in a 4x4 grid: the cluster registers; each "
             "block reads the next rank's shared memory through generic addresses (mapa.u64, ld), and back through "
             "cvta.to.shared::cluster and cvta.shared::cluster; getctarank and isspacep.shared::cluster on them",
             ptx, [4, 4, 1], [block, 1, 1], [{"type": "u64", "buffer": "out"}], {"out": out_buffer(len(outs), n)})

    # -- no cluster launch: every block a cluster of its own
    n, block = 6 * 32, 32
    body = ["mov.u32 %r5, s_val;", "shl.b32 %r6, %tx, 2;", "add.u32 %r7, %r5, %r6;", "st.shared.u32 [%r7], %gid;",
            "barrier.cluster.arrive;", "barrier.cluster.wait;",
            "xor.b32 %r8, %tx, 31;", "shl.b32 %r8, %r8, 2;", "add.u32 %r8, %r5, %r8;",
            "mapa.shared::cluster.u32 %r9, %r8, 0;", "ld.shared::cluster.u32 %r10, [%r9];",
            "getctarank.shared::cluster.u32 %r11, %r9;", "barrier.cluster.arrive;", "barrier.cluster.wait;"]
    sreg_regs = []
    for k, sreg in enumerate(CLUSTER_SREGS):
        body.append(f"mov.pred %p7, {sreg};" if sreg == "%is_explicit_cluster" else f"mov.u32 %r{21 + k}, {sreg};")
        if sreg == "%is_explicit_cluster":
            body.append(f"selp.u32 %r{21 + k}, 1, 0, %p7;")
        sreg_regs.append(f"%r{21 + k}")
    outs = ["%r10", "%r11"] + sreg_regs
    ptx = cluster_kernel("no_cluster", "", [".shared .align 4 .b32 s_val[32];", ""], body, outs, n)
    raw_case("cluster", "no_cluster", "a launch without clusters (3x2 blocks): each block is a cluster of 1 for "
             "the cluster registers, mapa to rank 0, getctarank and barrier.cluster", ptx, [3, 2, 1], [block, 1, 1],
             [{"type": "u64", "buffer": "out"}], {"out": out_buffer(len(outs), n)})
    # the same kernel in clusters of 2x2x2 (a 4x2x2 grid): every block reads rank 0's memory
    n = 16 * 32
    ptx = cluster_kernel("rank0_2x2x2", " .reqnctapercluster 2, 2, 2", [".shared .align 4 .b32 s_val[32];", ""],
                         body, outs, n)
    raw_case("cluster", "rank0_2x2x2", "clusters of 2x2x2 blocks in a 4x2x2 grid: the cluster registers in three "
             "dimensions; every block reads rank 0's shared memory (mapa, ld.shared::cluster, getctarank)", ptx,
             [4, 2, 2], [block, 1, 1], [{"type": "u64", "buffer": "out"}], {"out": out_buffer(len(outs), n)})

    # -- a cluster of 4: ranks 1-3 store into rank 0's shared memory and arrive on its mbarrier remotely
    n, block = 8 * 32, 32
    body = ["mov.u32 %r5, s_bar;", "mov.u32 %r6, s_slot;", "setp.ne.u32 %p1, %tx, 0;", "@%p1 bra $L_inited;",
            "mbarrier.init.shared::cta.b64 [%r5], 4;", "$L_inited:", "fence.mbarrier_init.release.cluster;",
            "barrier.cluster.arrive.relaxed.aligned;", "barrier.cluster.wait.aligned;",
            "@%p1 bra $L_arrived;", "shl.b32 %r7, %rank, 2;", "add.u32 %r7, %r6, %r7;",
            "mapa.shared::cluster.u32 %r8, %r7, 0;", "mov.u32 %t0, %ctaid.x;", "mad.lo.u32 %r9, %t0, 7, 1;",
            "st.shared::cluster.u32 [%r8], %r9;", "mapa.shared::cluster.u32 %r10, %r5, 0;",
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r10];", "$L_arrived:",
            "mov.u32 %r12, 0;", "setp.ne.u32 %p2, %rank, 0;", "@%p2 bra $L_done;",
            "$L_wait:", "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [%r5], 0;",
            "@!%p3 bra $L_wait;", "and.b32 %r11, %tx, 3;", "shl.b32 %r11, %r11, 2;", "add.u32 %r11, %r6, %r11;",
            "ld.shared.u32 %r12, [%r11];", "$L_done:", "barrier.cluster.arrive.aligned;",
            "barrier.cluster.wait.aligned;"]
    outs = ["%r12"]
    ptx = cluster_kernel("mbarrier_remote_arrive", " .reqnctapercluster 4, 1, 1",
                         [".shared .align 8 .b64 s_bar;", ".shared .align 4 .b32 s_slot[4];", ""], body, outs, n)
    raw_case("cluster", "mbarrier_remote_arrive", "clusters of 4: thread 0 of each block stores into rank 0's "
             "shared memory and arrives on rank 0's mbarrier (mbarrier.arrive.release.cluster.shared::cluster); "
             "rank 0 waits with try_wait.parity.acquire.cluster and reads the 4 slots", ptx, [8, 1, 1], [block, 1, 1],
             [{"type": "u64", "buffer": "out"}], {"out": out_buffer(len(outs), n)})


half_setp_scalar()
half_setp_x2()
half_minmax_fma()
atomic_half()
atomic_vector()
atomic_f32_add()
cache_policy()
video()
progress()
matrix()
elect()
mbarrier()
mma_fp8()
mma_sparse()
int24_lop3()
ldu()
stack()
hints()
hopper.generate(OUT, cases)
hopper_pipeline.generate(OUT, cases)
hopper_isa.generate(OUT, cases)
clusters()
with open(os.path.join(OUT, "index.json"), "w") as f:
    json.dump({"format": "ptx-conformance-1", "cases": sorted(cases, key=lambda c: c["name"])}, f, indent=1)
    f.write("\n")
