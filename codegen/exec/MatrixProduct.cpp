// Compiled with -ffp-contract=off (CMakeLists.txt): a product of doubles (f64 mma) rounds before its sum, as the
// scalar code always did; only ExactProducts lets the kernels fuse them.
#include "MatrixProduct.h"
#include "Runtime.h"

#include <immintrin.h>

using namespace ptxforge::codegen::exec;

namespace {

void multiplyScalar(unsigned M, unsigned N, unsigned K, const double *A, const double *B, const double *C, double *D) {
  for (unsigned I = 0; I < M * N; ++I)
    D[I] = C[I];
  for (unsigned I = 0; I < M; ++I)
    for (unsigned Kk = 0; Kk < K; ++Kk) {
      double X = A[I * K + Kk], *Row = D + I * N;
      const double *BRow = B + Kk * N;
      for (unsigned J = 0; J < N; ++J)
        Row[J] += X * BRow[J];
    }
}

/// Four rows of D at a time, each row NV vectors of 8 doubles in registers for the whole k loop (N = 32: 16
/// accumulators and 4 vectors of B).
template <unsigned NV, bool Fused>
[[gnu::target("avx512f")]] void multiplyAvx512(unsigned M, unsigned K, const double *A, const double *B,
                                               const double *C, double *D) {
  constexpr unsigned N = 8 * NV;
  for (unsigned I = 0; I < M; I += 4) {
    __m512d Acc[4][NV];
    for (unsigned R = 0; R < 4; ++R)
      for (unsigned V = 0; V < NV; ++V)
        Acc[R][V] = _mm512_loadu_pd(C + (I + R) * N + 8 * V);
    for (unsigned Kk = 0; Kk < K; ++Kk) {
      __m512d Bv[NV];
      for (unsigned V = 0; V < NV; ++V)
        Bv[V] = _mm512_loadu_pd(B + Kk * N + 8 * V);
      for (unsigned R = 0; R < 4; ++R) {
        __m512d X = _mm512_set1_pd(A[(I + R) * K + Kk]);
        for (unsigned V = 0; V < NV; ++V)
          Acc[R][V] = Fused ? _mm512_fmadd_pd(X, Bv[V], Acc[R][V]) : _mm512_add_pd(Acc[R][V], _mm512_mul_pd(X, Bv[V]));
      }
    }
    for (unsigned R = 0; R < 4; ++R)
      for (unsigned V = 0; V < NV; ++V)
        _mm512_storeu_pd(D + (I + R) * N + 8 * V, Acc[R][V]);
  }
}

using Kernel = void (*)(unsigned, unsigned, const double *, const double *, const double *, double *);

/// The AVX-512 kernel for rows of N doubles, or null (no AVX-512, or a shape without one).
Kernel avx512Kernel(unsigned M, unsigned N, bool Fused) {
  static const bool Has = __builtin_cpu_supports("avx512f");
  if (!Has || M % 4)
    return nullptr;
  switch (N) {
  case 8:
    return Fused ? multiplyAvx512<1, true> : multiplyAvx512<1, false>;
  case 16:
    return Fused ? multiplyAvx512<2, true> : multiplyAvx512<2, false>;
  case 32:
    return Fused ? multiplyAvx512<4, true> : multiplyAvx512<4, false>;
  default:
    return nullptr;
  }
}

// The maskz forms: GCC 12 warns of the plain ones' undefined pass-through operand.
[[gnu::target("avx512f,f16c")]] void halvesAvx512(const uint16_t *In, unsigned Count, double *Out) {
  unsigned I = 0;
  for (; I + 8 <= Count; I += 8) {
    __m256 F = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(In + I)));
    _mm512_storeu_pd(Out + I, _mm512_maskz_cvtps_pd(0xff, F));
  }
  for (; I < Count; ++I)
    Out[I] = halfToFloat(In[I]);
}

} // namespace

void ptxforge::codegen::exec::multiplyMatrices(unsigned M, unsigned N, unsigned K, const double *A, const double *B,
                                               const double *C, double *D, bool ExactProducts) {
  if (Kernel Fn = avx512Kernel(M, N, ExactProducts))
    return Fn(M, K, A, B, C, D);
  multiplyScalar(M, N, K, A, B, C, D);
}

void ptxforge::codegen::exec::halvesToDoubles(const uint16_t *In, unsigned Count, double *Out) {
  static const bool Has = __builtin_cpu_supports("avx512f");
  if (Has)
    return halvesAvx512(In, Count, Out);
  for (unsigned I = 0; I < Count; ++I)
    Out[I] = halfToFloat(In[I]);
}
