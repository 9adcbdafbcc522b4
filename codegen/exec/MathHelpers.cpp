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

#define PTXRT_DIRECTED_ARITH(MODE, FEMODE, T, SUFFIX)                                                                  \
  extern "C" T ptxrt_add_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) + opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_sub_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) - opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_mul_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) * opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_div_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) / opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_fma_##MODE##_##SUFFIX(T A, T B, T C) {                                                            \
    return withRounding(FEMODE, [&] { return opaque(std::fma(opaque(A), opaque(B), opaque(C))); });                    \
  }                                                                                                                    \
  extern "C" T ptxrt_sqrt_##MODE##_##SUFFIX(T A) {                                                                     \
    return withRounding(FEMODE, [&] { return opaque(std::sqrt(opaque(A))); });                                         \
  }

#define PTXRT_DIRECTED(MODE, FEMODE)                                                                                   \
  PTXRT_DIRECTED_ARITH(MODE, FEMODE, float, f32)                                                                       \
  PTXRT_DIRECTED_ARITH(MODE, FEMODE, double, f64)                                                                      \
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
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_add_##MODE##_f32), PTXRT_HELPER(ptxrt_sub_##MODE##_f32),                       \
                     PTXRT_HELPER(ptxrt_mul_##MODE##_f32), PTXRT_HELPER(ptxrt_div_##MODE##_f32),                       \
                     PTXRT_HELPER(ptxrt_fma_##MODE##_f32), PTXRT_HELPER(ptxrt_sqrt_##MODE##_f32),                      \
                     PTXRT_HELPER(ptxrt_add_##MODE##_f64), PTXRT_HELPER(ptxrt_sub_##MODE##_f64),                       \
                     PTXRT_HELPER(ptxrt_mul_##MODE##_f64), PTXRT_HELPER(ptxrt_div_##MODE##_f64),                       \
                     PTXRT_HELPER(ptxrt_fma_##MODE##_f64), PTXRT_HELPER(ptxrt_sqrt_##MODE##_f64),                      \
                     PTXRT_HELPER(ptxrt_cvt_##MODE##_f32_s64), PTXRT_HELPER(ptxrt_cvt_##MODE##_f32_u64),               \
                     PTXRT_HELPER(ptxrt_cvt_##MODE##_f64_s64), PTXRT_HELPER(ptxrt_cvt_##MODE##_f64_u64),               \
                     PTXRT_HELPER(ptxrt_cvt_##MODE##_f32_f64)});

void ptxforge::codegen::exec::registerMathHelpers(HelperTable &T) {
  registerHalfMathHelpers(T);
  PTXRT_REGISTER_MODE(rz)
  PTXRT_REGISTER_MODE(rm)
  PTXRT_REGISTER_MODE(rp)
}
