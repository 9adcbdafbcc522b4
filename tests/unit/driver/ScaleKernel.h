// The PTX of the `scale` kernel (out[i] = i * K), which the compute cache tests (ComputeCacheKernels.h) and the
// libcuda tests that need any kernel that compiles through the whole pipeline load.
#pragma once

#include <string>

namespace ptxforge::testing {

/// out[i] = i * Factor for i < n; Factor is a PTX float literal (each factor is another module).
inline std::string scaleModule(const char *Factor) {
  return std::string(R"(.version 7.5
.target sm_75
.address_size 64
.visible .entry scale(.param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvt.rn.f32.u32 %f1, %r5;
  mul.f32 %f2, %f1, )") +
         Factor + R"(;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f2;
DONE:
  ret;
}
)";
}

} // namespace ptxforge::testing
