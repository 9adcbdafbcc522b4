// The PTX the API tests compile: a saxpy, a kernel storing through its pointer argument (null makes it fault),
// a trap, a parameter-layout probe, a module global, and modules for the compatibility checks.
#pragma once

namespace ptxforge::test {

inline const char *KernelsPtx = R"(.version 8.0
.target sm_70
.address_size 64
.visible .global .align 4 .u32 counter = 7;

.visible .entry saxpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.f32 %f1, [a];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f2, [%rd4];
  ld.global.f32 %f3, [%rd5];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd5], %f4;
DONE:
  ret;
}

.visible .entry store(.param .u64 .ptr.global.align 4 out, .param .u32 v)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry stop()
{
  trap;
}

.visible .entry layout(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[12], .param .v2 .f32 d)
{
  ret;
}
)";

/// Line 7 lacks its semicolon; line 8 misspells `setp`.
inline const char *BrokenPtx = R"(.version 8.0
.target sm_70
.address_size 64
.visible .entry k(.param .u32 n)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [n]
  sept.ge.u32 %r2, %r1, 3;
  ret;
}
)";

/// Needs sm_80: `.target sm_80` and redux.sync.
inline const char *Sm80Ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry sum(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  redux.sync.add.u32 %r2, %r1, -1;
  st.global.u32 [%rd1], %r2;
  ret;
}
)";

} // namespace ptxforge::test
