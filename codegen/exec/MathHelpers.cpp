// Runtime helpers for directed rounding (.rz/.rm/.rp). Where the CPU has AVX-512, add, sub, mul, div, fma and
// sqrt carry their rounding in the instruction (embedded rounding), which rounds exactly as IEEE 754 requires;
// elsewhere, and for the conversions, the host FPU's rounding mode is switched around one operation. The switch
// (fegetround and two fesetround calls) was three quarters of an interval-arithmetic kernel's time. The
// narrow-format helpers (f16, bf16, tf32, fp8) live in HalfMath.cpp and register from here.
#include "MatrixProduct.h"
#include "Runtime.h"

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

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

/// The operations with embedded rounding R (an _MM_FROUND_TO_* mode), on scalars in the low element.
enum class Arith { Add, Sub, Mul, Div, Sqrt };
template <int R, Arith Op> [[gnu::target("avx512f")]] double embedded(double A, double B) {
  constexpr int M = R | _MM_FROUND_NO_EXC;
  __m128d X = _mm_set_sd(A), Y = _mm_set_sd(B);
  switch (Op) {
  case Arith::Add:
    return _mm_cvtsd_f64(_mm_add_round_sd(X, Y, M));
  case Arith::Sub:
    return _mm_cvtsd_f64(_mm_sub_round_sd(X, Y, M));
  case Arith::Mul:
    return _mm_cvtsd_f64(_mm_mul_round_sd(X, Y, M));
  case Arith::Div:
    return _mm_cvtsd_f64(_mm_div_round_sd(X, Y, M));
  default:
    return _mm_cvtsd_f64(_mm_sqrt_round_sd(X, X, M));
  }
}
template <int R, Arith Op> [[gnu::target("avx512f")]] float embedded(float A, float B) {
  constexpr int M = R | _MM_FROUND_NO_EXC;
  __m128 X = _mm_set_ss(A), Y = _mm_set_ss(B);
  switch (Op) {
  case Arith::Add:
    return _mm_cvtss_f32(_mm_add_round_ss(X, Y, M));
  case Arith::Sub:
    return _mm_cvtss_f32(_mm_sub_round_ss(X, Y, M));
  case Arith::Mul:
    return _mm_cvtss_f32(_mm_mul_round_ss(X, Y, M));
  case Arith::Div:
    return _mm_cvtss_f32(_mm_div_round_ss(X, Y, M));
  default:
    return _mm_cvtss_f32(_mm_sqrt_round_ss(X, X, M));
  }
}
template <int R> [[gnu::target("avx512f")]] double embeddedFma(double A, double B, double C) {
  return _mm_cvtsd_f64(_mm_fmadd_round_sd(_mm_set_sd(A), _mm_set_sd(B), _mm_set_sd(C), R | _MM_FROUND_NO_EXC));
}
template <int R> [[gnu::target("avx512f")]] float embeddedFma(float A, float B, float C) {
  return _mm_cvtss_f32(_mm_fmadd_round_ss(_mm_set_ss(A), _mm_set_ss(B), _mm_set_ss(C), R | _MM_FROUND_NO_EXC));
}
} // namespace

#define PTXRT_DIRECTED_ARITH(MODE, FEMODE, EMBEDDED, T, SUFFIX)                                                        \
  extern "C" T ptxrt_add_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    if (hasAvx512())                                                                                                   \
      return embedded<EMBEDDED, Arith::Add>(A, B);                                                                     \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) + opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_sub_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    if (hasAvx512())                                                                                                   \
      return embedded<EMBEDDED, Arith::Sub>(A, B);                                                                     \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) - opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_mul_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    if (hasAvx512())                                                                                                   \
      return embedded<EMBEDDED, Arith::Mul>(A, B);                                                                     \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) * opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_div_##MODE##_##SUFFIX(T A, T B) {                                                                 \
    if (hasAvx512())                                                                                                   \
      return embedded<EMBEDDED, Arith::Div>(A, B);                                                                     \
    return withRounding(FEMODE, [&] { return opaque(opaque(A) / opaque(B)); });                                        \
  }                                                                                                                    \
  extern "C" T ptxrt_fma_##MODE##_##SUFFIX(T A, T B, T C) {                                                            \
    if (hasAvx512())                                                                                                   \
      return embeddedFma<EMBEDDED>(A, B, C);                                                                           \
    return withRounding(FEMODE, [&] { return opaque(std::fma(opaque(A), opaque(B), opaque(C))); });                    \
  }                                                                                                                    \
  extern "C" T ptxrt_sqrt_##MODE##_##SUFFIX(T A) {                                                                     \
    if (hasAvx512())                                                                                                   \
      return embedded<EMBEDDED, Arith::Sqrt>(A, A);                                                                    \
    return withRounding(FEMODE, [&] { return opaque(std::sqrt(opaque(A))); });                                         \
  }

#define PTXRT_DIRECTED(MODE, FEMODE, EMBEDDED)                                                                         \
  PTXRT_DIRECTED_ARITH(MODE, FEMODE, EMBEDDED, float, f32)                                                             \
  PTXRT_DIRECTED_ARITH(MODE, FEMODE, EMBEDDED, double, f64)                                                            \
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

PTXRT_DIRECTED(rz, FE_TOWARDZERO, _MM_FROUND_TO_ZERO)
PTXRT_DIRECTED(rm, FE_DOWNWARD, _MM_FROUND_TO_NEG_INF)
PTXRT_DIRECTED(rp, FE_UPWARD, _MM_FROUND_TO_POS_INF)

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
