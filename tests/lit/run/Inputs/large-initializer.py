# Prints a module shaped like curand's device API: two .global .u32 arrays of 102400 elements with
# initializers (precalc_xorwow_matrix, precalc_xorwow_offset_matrix), a[i] = 3i + 1 and b[i] = 7i, and a kernel
# whose thread t stores a[k] + b[k] = 10k + 1 for k = 0, 1, 50000, 102399.
n = 102400
print(".version 8.0\n.target sm_80\n.address_size 64")
for name, f in (("a", lambda i: 3 * i + 1), ("b", lambda i: 7 * i)):
    print(f".global .align 4 .u32 {name}[{n}] = {{" + ", ".join(str(f(i)) for i in range(n)) + "};")
print("""
.visible .entry pick(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 2;
  setp.eq.u32 %p2, %r1, 3;
  selp.u32 %r2, 50000, %r1, %p1;
  selp.u32 %r2, 102399, %r2, %p2;
  mul.wide.u32 %rd2, %r2, 4;
  mov.u64 %rd3, a;
  add.s64 %rd3, %rd3, %rd2;
  ld.global.u32 %r3, [%rd3];
  mov.u64 %rd4, b;
  add.s64 %rd4, %rd4, %rd2;
  ld.global.u32 %r4, [%rd4];
  add.u32 %r5, %r3, %r4;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd5, %rd1, %rd5;
  st.global.u32 [%rd5], %r5;
  ret;
}""")
