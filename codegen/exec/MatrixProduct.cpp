// Compiled with -ffp-contract=off (CMakeLists.txt): a product of doubles (f64 mma) rounds before its sum, as the
// scalar code always did; only ExactProducts lets the kernels fuse them.
#include "MatrixProduct.h"
#include "Runtime.h"

#include <cstring>
#include <immintrin.h>

using namespace ptxforge::codegen::exec;

bool ptxforge::codegen::exec::hasAvx512() {
  static const bool Has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
  return Has;
}

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

/// Rows rows of D at a time, each row NV vectors of 8 doubles in registers for the whole k loop: 8 rows of one or
/// two vectors (m8n8k4's 8 x 8: eight independent sums, where four left each k step waiting on the last one's
/// add), 4 rows of four vectors (N = 32: 16 accumulators and 4 vectors of B).
template <unsigned NV, bool Fused>
[[gnu::target("avx512f")]] void multiplyAvx512(unsigned M, unsigned K, const double *A, const double *B,
                                               const double *C, double *D) {
  constexpr unsigned N = 8 * NV, Rows = NV <= 2 ? 8 : 4;
  // Unrolled by pragma: without it GCC kept Acc in memory, a load and a store around every multiply-add (a
  // quarter of the arithmetic's speed).
  for (unsigned I = 0; I < M; I += Rows) {
    __m512d Acc[Rows][NV];
#pragma GCC unroll 8
    for (unsigned R = 0; R < Rows; ++R)
#pragma GCC unroll 4
      for (unsigned V = 0; V < NV; ++V)
        Acc[R][V] = _mm512_loadu_pd(C + (I + R) * N + 8 * V);
    for (unsigned Kk = 0; Kk < K; ++Kk) {
      __m512d Bv[NV];
#pragma GCC unroll 4
      for (unsigned V = 0; V < NV; ++V)
        Bv[V] = _mm512_loadu_pd(B + Kk * N + 8 * V);
#pragma GCC unroll 8
      for (unsigned R = 0; R < Rows; ++R) {
        __m512d X = _mm512_set1_pd(A[(I + R) * K + Kk]);
#pragma GCC unroll 4
        for (unsigned V = 0; V < NV; ++V)
          Acc[R][V] = Fused ? _mm512_fmadd_pd(X, Bv[V], Acc[R][V]) : _mm512_add_pd(Acc[R][V], _mm512_mul_pd(X, Bv[V]));
      }
    }
#pragma GCC unroll 8
    for (unsigned R = 0; R < Rows; ++R)
#pragma GCC unroll 4
      for (unsigned V = 0; V < NV; ++V)
        _mm512_storeu_pd(D + (I + R) * N + 8 * V, Acc[R][V]);
  }
}

using Kernel = void (*)(unsigned, unsigned, const double *, const double *, const double *, double *);

/// The AVX-512 kernel for rows of N doubles, or null (no AVX-512, or a shape without one).
Kernel avx512Kernel(unsigned M, unsigned N, bool Fused) {
  if (!hasAvx512() || M % (N <= 16 ? 8 : 4))
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

/// Out (row-major 4 x 8) from 8 runs of 4 doubles, LineBytes apart (f64 m8n8k4's B columns): two columns per
/// register, then two permutes and a shuffle per pair of rows. Not gathers: where the CPU's microcode mitigates
/// Gather Data Sampling, a gather of 8 doubles costs more than 8 loads.
[[gnu::target("avx512f")]] void lines8x4Avx512(const char *Base, uint64_t LineBytes, double *Out) {
  __m512d Pair[4];
  for (unsigned P = 0; P < 4; ++P) { // masked loads: lanes 4-7 from the odd column, read from 32 bytes before it
    const double *Even = reinterpret_cast<const double *>(Base + 2 * P * LineBytes);
    const double *Odd = reinterpret_cast<const double *>(Base + (2 * P + 1) * LineBytes);
    Pair[P] = _mm512_mask_loadu_pd(_mm512_maskz_loadu_pd(0x0f, Even), 0xf0, Odd - 4);
  }
  // Rows 0 and 1 of columns 0-3 from Pair[0] and Pair[1] (columns 4-7 from Pair[2] and Pair[3]); then rows 2, 3.
  const __m512i Rows01 = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0);
  const __m512i Rows23 = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
  for (unsigned Half = 0; Half < 2; ++Half) {
    __m512i Idx = Half ? Rows23 : Rows01;
    __m512d Left = _mm512_maskz_permutex2var_pd(0xff, Pair[0], Idx, Pair[1]);
    __m512d Right = _mm512_maskz_permutex2var_pd(0xff, Pair[2], Idx, Pair[3]);
    _mm512_storeu_pd(Out + 16 * Half, _mm512_maskz_shuffle_f64x2(0xff, Left, Right, 0x44));
    _mm512_storeu_pd(Out + 16 * Half + 8, _mm512_maskz_shuffle_f64x2(0xff, Left, Right, 0xee));
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

/// Count bf16 values (unaligned) as doubles, 8 at a time: each is the high half of an f32.
[[gnu::target("avx512f")]] void bfloatsAvx512(const unsigned char *In, unsigned Count, double *Out) {
  unsigned I = 0;
  for (; I + 8 <= Count; I += 8) {
    __m128i H = _mm_loadu_si128(reinterpret_cast<const __m128i *>(In + 2 * I));
    __m256i W = _mm256_slli_epi32(_mm256_cvtepu16_epi32(H), 16);
    _mm512_storeu_pd(Out + I, _mm512_maskz_cvtps_pd(0xff, _mm256_castsi256_ps(W)));
  }
  for (; I < Count; ++I) {
    uint16_t H;
    memcpy(&H, In + 2 * I, 2);
    Out[I] = floatBitsScalar(static_cast<uint32_t>(H) << 16, ~0u);
  }
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

[[gnu::target("avx512f")]] void roundToF32Avx512(double *Vals, unsigned Count) {
  unsigned I = 0;
  for (; I + 8 <= Count; I += 8)
    _mm512_storeu_pd(Vals + I, _mm512_maskz_cvtps_pd(0xff, _mm512_maskz_cvtpd_ps(0xff, _mm512_loadu_pd(Vals + I))));
  for (; I < Count; ++I)
    Vals[I] = static_cast<float>(Vals[I]);
}

/// Out = In transposed, In Rows x Cols row-major, by 8 x 8 blocks: unpack pairs of rows, then gather 128-bit and
/// 256-bit halves (the sixteen loads and stores of a block instead of 64 of each).
[[gnu::target("avx512f")]] void transposeAvx512(const double *In, unsigned Rows, unsigned Cols, double *Out) {
  for (unsigned R0 = 0; R0 < Rows; R0 += 8)
    for (unsigned C0 = 0; C0 < Cols; C0 += 8) {
      __m512d T[8], U[8];
      for (unsigned P = 0; P < 4; ++P) {
        __m512d X = _mm512_loadu_pd(In + (R0 + 2 * P) * Cols + C0);
        __m512d Y = _mm512_loadu_pd(In + (R0 + 2 * P + 1) * Cols + C0);
        T[2 * P] = _mm512_maskz_unpacklo_pd(0xff, X, Y); // row pair P's even columns
        T[2 * P + 1] = _mm512_maskz_unpackhi_pd(0xff, X, Y); // and odd ones
      }
      // U[0]: columns 0 and 4 of rows 0-3 (U[1]: rows 4-7); U[2], U[3]: columns 2 and 6; U[4]..U[7]: 1, 5, 3, 7.
      for (unsigned Odd = 0; Odd < 2; ++Odd) {
        U[4 * Odd] = _mm512_maskz_shuffle_f64x2(0xff, T[Odd], T[2 + Odd], 0x88);
        U[4 * Odd + 1] = _mm512_maskz_shuffle_f64x2(0xff, T[4 + Odd], T[6 + Odd], 0x88);
        U[4 * Odd + 2] = _mm512_maskz_shuffle_f64x2(0xff, T[Odd], T[2 + Odd], 0xdd);
        U[4 * Odd + 3] = _mm512_maskz_shuffle_f64x2(0xff, T[4 + Odd], T[6 + Odd], 0xdd);
      }
      for (unsigned Odd = 0; Odd < 2; ++Odd)
        for (unsigned Pair = 0; Pair < 2; ++Pair) { // columns Odd + 2 Pair and Odd + 2 Pair + 4
          __m512d Lo = U[4 * Odd + 2 * Pair], Hi = U[4 * Odd + 2 * Pair + 1];
          unsigned Col = C0 + Odd + 2 * Pair;
          _mm512_storeu_pd(Out + Col * Rows + R0, _mm512_maskz_shuffle_f64x2(0xff, Lo, Hi, 0x88));
          _mm512_storeu_pd(Out + (Col + 4) * Rows + R0, _mm512_maskz_shuffle_f64x2(0xff, Lo, Hi, 0xdd));
        }
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
    if (hasAvx512())
      return bfloatsAvx512(static_cast<const unsigned char *>(In), Count, Out), true;
    for (unsigned I = 0; I < Count; ++I) {
      uint16_t H;
      memcpy(&H, static_cast<const unsigned char *>(In) + 2 * I, 2);
      Out[I] = floatBitsScalar(static_cast<uint32_t>(H) << 16, ~0u);
    }
    return true;
  }
  case METF32:
  case MEF32: {
    uint32_t W[Max];
    memcpy(W, In, Count * 4);
    floatBits(W, Count, T == METF32 ? ~0x1fffu : ~0u, Out);
    return true;
  }
  case MEF64: // masked vector moves: memcpy of a run-time size became `rep movs`, slow to start for a row
    copyWords(Out, In, Count * 2);
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

void ptxforge::codegen::exec::roundToF32(double *Vals, unsigned Count) {
  if (hasAvx512())
    return roundToF32Avx512(Vals, Count);
  for (unsigned I = 0; I < Count; ++I)
    Vals[I] = static_cast<float>(Vals[I]);
}

void ptxforge::codegen::exec::transposeLines(const char *Base, uint64_t LineBytes, unsigned Lines, unsigned Len,
                                             double *Out) {
  if (hasAvx512() && Lines == 8 && Len == 4)
    return lines8x4Avx512(Base, LineBytes, Out);
  for (unsigned J = 0; J < Lines; ++J)
    for (unsigned K = 0; K < Len; ++K)
      memcpy(&Out[K * Lines + J], Base + J * LineBytes + 8 * K, 8);
}

void ptxforge::codegen::exec::transposeMatrix(const double *In, unsigned Rows, unsigned Cols, double *Out) {
  if (hasAvx512() && Rows % 8 == 0 && Cols % 8 == 0)
    return transposeAvx512(In, Rows, Cols, Out);
  for (unsigned R = 0; R < Rows; ++R)
    for (unsigned C = 0; C < Cols; ++C)
      Out[C * Rows + R] = In[R * Cols + C];
}
