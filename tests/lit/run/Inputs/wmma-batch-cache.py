# Prints a kernel of long runs of full-warp wmma products, the warp-major batch's cases (exec/MmaBatch.cpp):
# a GEMM's k steps (each A tile against four B tiles, each B against two A tiles), accumulators chained in fresh
# registers and in place, more than 24 live accumulators (more than the batch's fragment cache once held: dirty
# ones left it and came back), two f16 D's read together as a later product's A, s8 products into s32 with and
# without .satfinite, f64 and tf32 chains, and fragment stores of every result. Usage:
#   wmma-batch-cache.py batched   the products unguarded: a few batches
#   wmma-batch-cache.py single    every product guarded by an always-true predicate: one collective each, the
#                                 reference
# Each warp stores its results at out + OutBytes * (2 * block + warp).
import sys

guard = "@%p1 " if sys.argv[1] == "single" else ""
regs = lambda p, first, n: "{" + ", ".join(f"%{p}{first + i}" for i in range(n)) + "}"
F16 = "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"
body = []
emit = body.append
next_r, next_f = [100], [100]


def fresh(kind, n):
    counter = next_r if kind == "r" else next_f
    first = counter[0]
    counter[0] += n
    return regs(kind, first, n)


def half_addr(k):  # a 16 x 16 tile of halves (rows of 16) in the first 4 KiB, per warp and k
    return f"[%r11+{(96 * k) % 3584 // 32 * 32}]"


# The f16 GEMM: 2 x 4 tiles, 4 k steps; accumulators in fresh registers except c[1][3], in place.
acc = [[fresh("f", 8) for _ in range(4)] for _ in range(2)]
for row in acc:
    for c in row:
        for r in c.strip("{}").split(", "):
            emit(f"  mov.f32 {r}, 0f3F800000;")
for k in range(4):
    a = [fresh("r", 8) for _ in range(2)]
    b = [fresh("r", 8) for _ in range(4)]
    for i in range(2):
        emit(f"  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {a[i]}, {half_addr(8 * k + i)}, 16;")
    for j in range(4):
        emit(f"  wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {b[j]}, {half_addr(8 * k + 2 + j)}, 16;")
    for i in range(2):
        for j in range(4):
            d = acc[i][j] if (i, j) == (1, 3) else fresh("f", 8)
            emit(f"  {guard}{F16} {d}, {a[i]}, {b[j]}, {acc[i][j]};")
            acc[i][j] = d
results = [("f32", 8, c) for row in acc for c in row]

# 28 independent products, then each accumulated again: more dirty accumulators than the cache's 24 entries.
a = fresh("r", 8)
emit(f"  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {a}, {half_addr(40)}, 16;")
bs = [fresh("r", 8) for _ in range(4)]
for j, b in enumerate(bs):
    emit(f"  wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {b}, {half_addr(41 + j)}, 16;")
many = []
for n in range(28):
    d = fresh("f", 8)
    emit(f"  {guard}{F16} {d}, {a}, {bs[n % 4]}, {acc[n % 2][n % 4]};")
    many.append(d)
for n in range(28):
    d = fresh("f", 8)
    emit(f"  {guard}{F16} {d}, {a}, {bs[(n + 1) % 4]}, {many[n]};")
    many[n] = d
results += [("f32", 8, d) for d in many[::3]]

# An A fragment whose lanes give different addresses: undefined on the GPU, but a batch that took the load over
# (lower/MatrixOps.cpp planMmaBatch) must do what each lane's own load does.
emit("  and.b32 %r14, %r1, 1;")
emit("  shl.b32 %r14, %r14, 5;")
emit("  add.u32 %r14, %r14, %r11;")
va = fresh("r", 8)
emit(f"  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {va}, [%r14+512], 16;")
vd, vd2 = fresh("f", 8), fresh("f", 8)
emit(f"  {guard}{F16} {vd}, {va}, {bs[0]}, {acc[0][1]};")
emit(f"  {guard}{F16} {vd2}, {va}, {bs[1]}, {vd};")
results.append(("f32", 8, vd2))

# f16 accumulators; two of their D's together are the next product's A.
h0, h1 = fresh("r", 4), fresh("r", 4)
zero_h = fresh("r", 4)
for r in zero_h.strip("{}").split(", "):
    emit(f"  mov.b32 {r}, 0x3C003C00;")
emit(f"  {guard}wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {h0}, {a}, {bs[0]}, {zero_h};")
emit(f"  {guard}wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {h1}, {a}, {bs[1]}, {h0};")
ha = "{" + h0.strip("{}") + ", " + h1.strip("{}") + "}"
dh = fresh("f", 8)
emit(f"  {guard}{F16} {dh}, {ha}, {bs[2]}, {acc[0][0]};")
results += [("f16", 4, h1), ("f32", 8, dh)]

# s8 into s32, wrapping and saturating, chained.
s32 = fresh("r", 8)
for r in s32.strip("{}").split(", "):
    emit(f"  mov.b32 {r}, 2147483000;")
sa, sb = fresh("r", 2), fresh("r", 2)
emit(f"  wmma.load.a.sync.aligned.row.m16n16k16.shared.s8 {sa}, {half_addr(50)}, 16;")
emit(f"  wmma.load.b.sync.aligned.col.m16n16k16.shared.s8 {sb}, {half_addr(51)}, 16;")
for sat in ("", ".satfinite", "", ".satfinite"):
    d = fresh("r", 8)
    emit(f"  {guard}wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32{sat} {d}, {sa}, {sb}, {s32};")
    s32 = d
    results.append(("s32", 8, d))

# tf32 (from f32 bits) into f32, three k steps.
tacc = fresh("f", 8)
for r in tacc.strip("{}").split(", "):
    emit(f"  mov.f32 {r}, 0f40000000;")
for k in range(3):
    ta, tb = fresh("r", 4), fresh("r", 4)
    emit(f"  wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {ta}, {half_addr(60 + 2 * k)}, 8;")
    emit(f"  wmma.load.b.sync.aligned.col.m16n16k8.shared.tf32 {tb}, {half_addr(61 + 2 * k)}, 8;")
    d = fresh("f", 8)
    emit(f"  {guard}wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 {d}, {ta}, {tb}, {tacc};")
    tacc = d
results.append(("f32", 8, tacc))

# f64 m8n8k4: 2 x 2 tiles over 4 k steps, in place, from the doubles at 4096.
dacc = [[f"{{%fd{20 + 4 * i + 2 * j}, %fd{21 + 4 * i + 2 * j}}}" for j in range(2)] for i in range(2)]
for row in dacc:
    for c in row:
        for r in c.strip("{}").split(", "):
            emit(f"  mov.f64 {r}, 0d3FF8000000000000;")
for k in range(4):  # A tile i of step k in %fd(4k + i), B tile j in %fd(4k + 2 + j)
    for i in range(2):
        emit(f"  wmma.load.a.sync.aligned.row.m8n8k4.shared.f64 {{%fd{4 * k + i}}}, [%r12+{256 * k + 64 * i}], 4;")
    for j in range(2):
        emit(f"  wmma.load.b.sync.aligned.col.m8n8k4.shared.f64 {{%fd{4 * k + 2 + j}}}, "
             f"[%r12+{256 * k + 128 + 64 * j}], 4;")
    for i in range(2):
        for j in range(2):
            emit(f"  {guard}wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64 {dacc[i][j]}, {{%fd{4 * k + i}}}, "
                 f"{{%fd{4 * k + 2 + j}}}, {dacc[i][j]};")
results += [("f64", 2, c) for row in dacc for c in row]

out_bytes = sum({"f32": 1024, "s32": 1024, "f16": 512, "f64": 512}[t] for t, _, _ in results)
print(f""".version 8.0
.target sm_80
.address_size 64

.visible .entry products(.param .u64 out)
{{
  .shared .align 32 .b8 sm[8192];
  .reg .pred %p<4>;
  .reg .b16 %h<2>;
  .reg .b32 %r<{next_r[0]}>;
  .reg .f32 %f<{next_f[0]}>;
  .reg .f64 %fd<40>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  shr.u32 %r3, %r1, 5;
  setp.eq.u32 %p1, %r2, %r2;
  // 2048 halves (thread t: 32t ... 32t + 31, half e = (5e + block) mod 11 - 5), then 512 doubles at 4096
  // (thread t: 8t ... 8t + 7, double e = (3e + block) mod 7 - 3).
  mov.u32 %r4, 0;
$L_fill:
  mad.lo.u32 %r5, %r1, 32, %r4;
  mad.lo.u32 %r6, %r5, 5, %r2;
  rem.u32 %r6, %r6, 11;
  sub.s32 %r6, %r6, 5;
  cvt.rn.f16.s32 %h1, %r6;
  mov.u32 %r7, sm;
  shl.b32 %r8, %r5, 1;
  add.u32 %r7, %r7, %r8;
  st.shared.b16 [%r7], %h1;
  setp.lt.u32 %p2, %r4, 8;
  @!%p2 bra $L_next;
  mad.lo.u32 %r5, %r1, 8, %r4;
  mad.lo.u32 %r6, %r5, 3, %r2;
  rem.u32 %r6, %r6, 7;
  sub.s32 %r6, %r6, 3;
  cvt.rn.f64.s32 %fd39, %r6;
  mov.u32 %r7, sm;
  shl.b32 %r8, %r5, 3;
  add.u32 %r7, %r7, %r8;
  st.shared.f64 [%r7+4096], %fd39;
$L_next:
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, 32;
  @%p2 bra $L_fill;
  bar.sync 0;
  // Warp w reads halves from byte 128w and doubles from 4096 + 64w.
  mov.u32 %r9, sm;
  shl.b32 %r10, %r3, 7;
  add.u32 %r11, %r9, %r10;
  shr.u32 %r10, %r10, 1;
  add.u32 %r12, %r11, 4096;
  sub.u32 %r12, %r12, %r10;""")
print("\n".join(body))
print(f"""  shl.b32 %r13, %r2, 1;
  add.u32 %r13, %r13, %r3;
  mul.wide.u32 %rd2, %r13, {out_bytes};
  add.s64 %rd3, %rd1, %rd2;""")
at = 0
for t, n, d in results:
    shape = "m8n8k4" if t == "f64" else "m16n16k16"
    ld = 8 if t == "f64" else 16
    emit_t = t
    print(f"  wmma.store.d.sync.aligned.row.{shape}.global.{emit_t} [%rd3+{at}], {d}, {ld};")
    at += {"f32": 1024, "s32": 1024, "f16": 512, "f64": 512}[t]
print("""  ret;
}""")
