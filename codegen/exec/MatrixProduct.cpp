// Compiled with -ffp-contract=off (CMakeLists.txt): a product of doubles (f64 mma) rounds before its sum, as the
// scalar code always did; only ExactProducts lets the kernels fuse them.
#include "MatrixProduct.h"
#include "Runtime.h"

#include <cstring>
#include <immintrin.h>

using namespace ptxforge::codegen::exec;

namespace {

bool hasAvx512() {
  static const bool Has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
  return Has;
}

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
  if (!hasAvx512() || M % 4)
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

/// An f32 bit pattern ANDed with Mask (tf32: the low 13 bits cleared) as a double.
[[gnu::always_inline]] inline double floatBitsScalar(uint32_t Bits, uint32_t Mask) {
  uint32_t U = Bits & Mask;
  float F;
  memcpy(&F, &U, 4);
  return F;
}

[[gnu::target("avx512f")]] void floatBitsAvx512(const uint32_t *In, unsigned Count, uint32_t Mask, double *Out) {
  unsigned I = 0;
  __m256i M = _mm256_set1_epi32(static_cast<int>(Mask));
  for (; I + 8 <= Count; I += 8) {
    __m256i V = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(In + I)), M);
    _mm512_storeu_pd(Out + I, _mm512_maskz_cvtps_pd(0xff, _mm256_castsi256_ps(V)));
  }
  for (; I < Count; ++I)
    Out[I] = floatBitsScalar(In[I], Mask);
}

/// Count s8 (Signed) or u8 values as doubles, 8 at a time.
[[gnu::target("avx512f")]] void bytesAvx512(const unsigned char *In, unsigned Count, bool Signed, double *Out) {
  unsigned I = 0;
  for (; I + 8 <= Count; I += 8) {
    __m128i V = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(In + I));
    __m256i W = Signed ? _mm256_cvtepi8_epi32(V) : _mm256_cvtepu8_epi32(V);
    _mm512_storeu_pd(Out + I, _mm512_maskz_cvtepi32_pd(0xff, W));
  }
  for (; I < Count; ++I)
    Out[I] = Signed ? static_cast<double>(static_cast<int8_t>(In[I])) : static_cast<double>(In[I]);
}

[[gnu::target("avx512f")]] void doublesToF32Avx512(const double *In, unsigned Count, uint32_t *Out) {
  unsigned I = 0;
  for (; I + 8 <= Count; I += 8)
    _mm256_storeu_ps(reinterpret_cast<float *>(Out + I), _mm512_maskz_cvtpd_ps(0xff, _mm512_loadu_pd(In + I)));
  for (; I < Count; ++I) {
    float F = static_cast<float>(In[I]);
    memcpy(Out + I, &F, 4);
  }
}

/// Count f32 bit patterns, each ANDed with Mask, as doubles.
void floatBits(const uint32_t *In, unsigned Count, uint32_t Mask, double *Out) {
  if (hasAvx512())
    return floatBitsAvx512(In, Count, Mask, Out);
  for (unsigned I = 0; I < Count; ++I)
    Out[I] = floatBitsScalar(In[I], Mask);
}

[[gnu::target("avx512f")]] void copyWordsAvx512(void *Dst, const void *Src, unsigned Count) {
  auto *D = static_cast<char *>(Dst);
  const auto *S = static_cast<const char *>(Src);
  for (unsigned I = 0; I < Count; I += 16) {
    __mmask16 M = static_cast<__mmask16>(Count - I >= 16 ? 0xffffu : (1u << (Count - I)) - 1);
    _mm512_mask_storeu_epi32(D + 4 * I, M, _mm512_maskz_loadu_epi32(M, S + 4 * I));
  }
}

} // namespace

void ptxforge::codegen::exec::copyWords(void *Dst, const void *Src, unsigned Count) {
  if (hasAvx512())
    return copyWordsAvx512(Dst, Src, Count);
  memcpy(Dst, Src, size_t(Count) * 4);
}

void ptxforge::codegen::exec::multiplyMatrices(unsigned M, unsigned N, unsigned K, const double *A, const double *B,
                                               const double *C, double *D, bool ExactProducts) {
  if (Kernel Fn = avx512Kernel(M, N, ExactProducts))
    return Fn(M, K, A, B, C, D);
  multiplyScalar(M, N, K, A, B, C, D);
}

bool ptxforge::codegen::exec::decodeElements(uint32_t T, const void *In, unsigned Count, double *Out) {
  constexpr unsigned Max = 1024; // the largest fragment copy: mma m16n8k64's A of 4-bit elements
  if (Count > Max)
    return false;
  switch (T) {
  case MEF16: {
    uint16_t H[Max];
    memcpy(H, In, Count * 2);
    if (hasAvx512())
      halvesAvx512(H, Count, Out);
    else
      for (unsigned I = 0; I < Count; ++I)
        Out[I] = halfToFloat(H[I]);
    return true;
  }
  case MEBF16: {
    uint16_t H[Max];
    uint32_t W[Max];
    memcpy(H, In, Count * 2);
    for (unsigned I = 0; I < Count; ++I)
      W[I] = static_cast<uint32_t>(H[I]) << 16;
    floatBits(W, Count, ~0u, Out);
    return true;
  }
  case METF32:
  case MEF32: {
    uint32_t W[Max];
    memcpy(W, In, Count * 4);
    floatBits(W, Count, T == METF32 ? ~0x1fffu : ~0u, Out);
    return true;
  }
  case MEF64:
    memcpy(Out, In, Count * 8);
    return true;
  case MES8:
  case MEU8: {
    const auto *B = static_cast<const unsigned char *>(In);
    if (hasAvx512())
      bytesAvx512(B, Count, T == MES8, Out);
    else
      for (unsigned I = 0; I < Count; ++I)
        Out[I] = T == MES8 ? static_cast<double>(static_cast<int8_t>(B[I])) : static_cast<double>(B[I]);
    return true;
  }
  case MES32: {
    int32_t W[Max];
    memcpy(W, In, Count * 4);
    for (unsigned I = 0; I < Count; ++I)
      Out[I] = W[I];
    return true;
  }
  default:
    return false;
  }
}

void ptxforge::codegen::exec::doublesToF32(const double *In, unsigned Count, uint32_t *Out) {
  if (hasAvx512())
    return doublesToF32Avx512(In, Count, Out);
  for (unsigned I = 0; I < Count; ++I) {
    float F = static_cast<float>(In[I]);
    memcpy(Out + I, &F, 4);
  }
}
