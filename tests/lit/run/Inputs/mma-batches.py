# Prints a kernel whose products exercise the batching of matrix collectives (codegen/lib/MatrixBatches.h):
# per-lane fragment loads and unrelated arithmetic between products (some in a scope, as inline asm is) run
# before them, a product takes an earlier one's D as its C (in place, and across wmma and mma.sync), a load into
# registers a product read (the next A) and a read of a product's D each end a batch, and two chained f64
# products travel in 64-bit words. Usage:
#   mma-batches.py batched   the products unguarded: batched
#   mma-batches.py single    every product guarded by an always-true predicate: one collective each, the reference
# Each thread writes 8 + 4 + 1 + 2 results (wmma D, mma D, their sum, the f64 D) to 80 bytes at
# out + 80 (64 * block + tid).
import sys

guard = "@%p1 " if sys.argv[1] == "single" else ""
regs = lambda p, first, n: "{" + ", ".join(f"%{p}{first + i}" for i in range(n)) + "}"
a, b, b2 = regs("r", 20, 8), regs("r", 30, 8), regs("r", 40, 8)
zero, d, d2 = regs("f", 0, 8), regs("f", 10, 8), regs("f", 30, 8)
wmma = "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"
print(f""".version 8.0
.target sm_80
.address_size 64

.visible .entry products(.param .u64 out)
{{
  .shared .align 16 .b8 sm[4096];
  .reg .pred %p<4>;
  .reg .b16 %h<2>;
  .reg .b32 %r<64>;
  .reg .f32 %f<48>;
  .reg .f64 %fd<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  shr.u32 %r3, %r1, 5;
  setp.eq.u32 %p1, %r2, %r2;
  // 2048 halves: thread t fills 32t .. 32t + 31, half e with (5e + block) mod 11 - 5.
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
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, 32;
  @%p2 bra $L_fill;
  bar.sync 0;
  // Warp w: A at byte 512w, B at 1024 + 512w, the second B at 2048 + 512w (16x16 halves, rows of 16).
  mov.u32 %r9, sm;
  shl.b32 %r10, %r3, 9;
  add.u32 %r11, %r9, %r10;
  add.u32 %r12, %r11, 1024;
  add.u32 %r13, %r11, 2048;""")
for i in range(8):
    print(f"  mov.f32 %f{i}, 0f00000000;")
print(f"""  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {a}, [%r11], 16;
  wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {b}, [%r12], 16;
  {guard}{wmma} {d}, {a}, {b}, {zero};
  wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {b2}, [%r13], 16;
  {{
    .reg .b32 %t;
    add.u32 %t, %r11, 16;
    add.u32 %r14, %t, 16;
  }}
  {guard}{wmma} {d}, {a}, {b2}, {d};
  {guard}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {regs("f", 20, 4)}, {regs("r", 20, 4)}, {regs("r", 30, 2)}, {regs("f", 10, 4)};
  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {a}, [%r14], 16;
  {guard}{wmma} {d2}, {a}, {b}, {d};
  add.f32 %f40, %f30, %f20;
  cvt.rn.f64.u32 %fd2, %r1;
  cvt.rn.f64.f32 %fd3, %f40;
  mov.f64 %fd4, 0d3FF0000000000000;
  mov.f64 %fd5, 0dC000000000000000;
  {guard}mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%fd0, %fd1}}, {{%fd2}}, {{%fd3}}, {{%fd4, %fd5}};
  {guard}mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%fd0, %fd1}}, {{%fd3}}, {{%fd2}}, {{%fd0, %fd1}};
  mad.lo.u32 %r15, %r2, 64, %r1;
  mul.wide.u32 %rd2, %r15, 80;
  add.s64 %rd3, %rd1, %rd2;""")
for i in range(8):
    print(f"  st.global.f32 [%rd3+{4 * i}], %f{30 + i};")
for i in range(4):
    print(f"  st.global.f32 [%rd3+{32 + 4 * i}], %f{20 + i};")
print("""  st.global.f32 [%rd3+48], %f40;
  st.global.f64 [%rd3+56], %fd0;
  st.global.f64 [%rd3+64], %fd1;
  ret;
}""")
