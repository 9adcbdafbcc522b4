// Runtime helpers for directed rounding (.rz/.rm/.rp): the host FPU's rounding mode is switched around one
// operation, which x86 then rounds exactly as IEEE 754 requires. The narrow-format helpers (f16, bf16, tf32,
// fp8) live in HalfMath.cpp and register from here.
#include "Runtime.h"

#include <cfenv>
#include <cmath>
#include <cstdint>

using namespace ptxforge::codegen::exec;

// The rounding mode changes under the compiler's feet: GCC needs -frounding-math (codegen/CMakeLists.txt),
// clang this pragma, so that no operation is folded or moved across fesetround.
#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif

namespace {
template <typename F> auto withRounding(int Mode, F Fn) {
  int Old = std::fegetround();
  std::fesetround(Mode);
  auto R = Fn();
  std::fesetround(Old);
  return R;
}
// Keeps the compiler from folding or hoisting the operation out of the rounding-mode window.
template <typename T> T opaque(T X) {
  asm volatile("" : "+x"(X));
  return X;
}
} // namespace

#define PTXRT_DIRECTED(MODE, FEMODE)                                                                                   \
  extern "C" float ptxrt_add_##MODE##_f32(float A, float B) {                                                          \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) + opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" float ptxrt_sub_##MODE##_f32(float A, float B) {                                                          \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) - opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" float ptxrt_mul_##MODE##_f32(float A, float B) {                                                          \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) * opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" float ptxrt_div_##MODE##_f32(float A, float B) {                                                          \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) / opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" float ptxrt_fma_##MODE##_f32(float A, float B, float C) {                                                 \
    return withRounding(FEMODE, [&] { return opaque(std::fma(opaque(A), opaque(B), opaque(C))); });                    \
  }                                                                                                                    \
  extern "C" float ptxrt_sqrt_##MODE##_f32(float A) {                                                                  \
    return withRounding(FEMODE, [&] { return opaque(std::sqrt(opaque(A))); });                                         \
  }                                                                                                                    \
  extern "C" double ptxrt_add_##MODE##_f64(double A, double B) {                                                       \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) + opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" double ptxrt_sub_##MODE##_f64(double A, double B) {                                                       \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) - opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" double ptxrt_mul_##MODE##_f64(double A, double B) {                                                       \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) * opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" double ptxrt_div_##MODE##_f64(double A, double B) {                                                       \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) / opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" double ptxrt_fma_##MODE##_f64(double A, double B, double C) {                                             \
    return withRounding(FEMODE, [&] { return opaque(std::fma(opaque(A), opaque(B), opaque(C))); });                    \
  }                                                                                                                    \
  extern "C" double ptxrt_sqrt_##MODE##_f64(double A) {                                                                \
    return withRounding(FEMODE, [&] { return opaque(std::sqrt(opaque(A))); });                                         \
  }                                                                                                                    \
  extern "C" float ptxrt_cvt_##MODE##_f32_s64(int64_t X) {                                                             \
    return withRounding(FEMODE, [&] { return opaque(static_cast<float>(opaque(X))); });                                \
  }                                                                                                                    \
  extern "C" float ptxrt_cvt_##MODE##_f32_u64(uint64_t X) {                                                            \
    return withRounding(FEMODE, [&] { return opaque(static_cast<float>(opaque(X))); });                                \
  }                                                                                                                    \
  extern "C" double ptxrt_cvt_##MODE##_f64_s64(int64_t X) {                                                            \
    return withRounding(FEMODE, [&] { return opaque(static_cast<double>(opaque(X))); });                               \
  }                                                                                                                    \
  extern "C" double ptxrt_cvt_##MODE##_f64_u64(uint64_t X) {                                                           \
    return withRounding(FEMODE, [&] { return opaque(static_cast<double>(opaque(X))); });                               \
  }                                                                                                                    \
  extern "C" float ptxrt_cvt_##MODE##_f32_f64(double X) {                                                              \
    return withRounding(FEMODE, [&] { return opaque(static_cast<float>(opaque(X))); });                                \
  }

PTXRT_DIRECTED(rz, FE_TOWARDZERO)
PTXRT_DIRECTED(rm, FE_DOWNWARD)
PTXRT_DIRECTED(rp, FE_UPWARD)

#define PTXRT_REGISTER_MODE(MODE)                                                                                      \
  for (auto [N, P] : std::initializer_list<std::pair<const char *, void *>>{                                           \
           {"ptxrt_add_" #MODE "_f32", (void *)&ptxrt_add_##MODE##_f32},                                               \
           {"ptxrt_sub_" #MODE "_f32", (void *)&ptxrt_sub_##MODE##_f32},                                               \
           {"ptxrt_mul_" #MODE "_f32", (void *)&ptxrt_mul_##MODE##_f32},                                               \
           {"ptxrt_div_" #MODE "_f32", (void *)&ptxrt_div_##MODE##_f32},                                               \
           {"ptxrt_fma_" #MODE "_f32", (void *)&ptxrt_fma_##MODE##_f32},                                               \
           {"ptxrt_sqrt_" #MODE "_f32", (void *)&ptxrt_sqrt_##MODE##_f32},                                             \
           {"ptxrt_add_" #MODE "_f64", (void *)&ptxrt_add_##MODE##_f64},                                               \
           {"ptxrt_sub_" #MODE "_f64", (void *)&ptxrt_sub_##MODE##_f64},                                               \
           {"ptxrt_mul_" #MODE "_f64", (void *)&ptxrt_mul_##MODE##_f64},                                               \
           {"ptxrt_div_" #MODE "_f64", (void *)&ptxrt_div_##MODE##_f64},                                               \
           {"ptxrt_fma_" #MODE "_f64", (void *)&ptxrt_fma_##MODE##_f64},                                               \
           {"ptxrt_sqrt_" #MODE "_f64", (void *)&ptxrt_sqrt_##MODE##_f64},                                             \
           {"ptxrt_cvt_" #MODE "_f32_s64", (void *)&ptxrt_cvt_##MODE##_f32_s64},                                       \
           {"ptxrt_cvt_" #MODE "_f32_u64", (void *)&ptxrt_cvt_##MODE##_f32_u64},                                       \
           {"ptxrt_cvt_" #MODE "_f64_s64", (void *)&ptxrt_cvt_##MODE##_f64_s64},                                       \
           {"ptxrt_cvt_" #MODE "_f64_u64", (void *)&ptxrt_cvt_##MODE##_f64_u64},                                       \
           {"ptxrt_cvt_" #MODE "_f32_f64", (void *)&ptxrt_cvt_##MODE##_f32_f64}})                                      \
    T.push_back({N, P});

void ptxforge::codegen::exec::registerMathHelpers(HelperTable &T) {
  registerHalfMathHelpers(T);
  PTXRT_REGISTER_MODE(rz)
  PTXRT_REGISTER_MODE(rm)
  PTXRT_REGISTER_MODE(rp)
}
