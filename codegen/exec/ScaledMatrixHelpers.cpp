// mma.sync for sm_120a's narrow floats: m16n8k32 .kind::f8f6f4 (no scales) and .kind::mxf8f6f4.block_scale with
// e4m3/e5m2/e3m2/e2m3/e2m1 operands, m16n8k64 .kind::mxf4 and .kind::mxf4nvf4 with e2m1 packed two to a byte. The
// warp's fragments and scales become decoded matrices, each scale multiplied into its run of A's row or B's
// column, and the dense mma path's product (MatrixCompute.h) gives D (f32, or f16 for .kind::f8f6f4), as for every
// other mma.
//
// Fragments are the dense mma layouts of 8-bit (m16n8k32) or 4-bit (m16n8k64) elements: lane 4g + t, register r,
// element e of A is row g + 8 (r & 1), column t * PerReg + e + (r >> 1) * K/2; of B row t * PerReg + e + r * K/2,
// column g. In the f8f6f4 kinds every element has a byte: fp8 all of it, e3m2/e2m3 its bits 0-5 and e2m1 its bits
// 2-5 (why CUTLASS shifts ldmatrix's low-nibble e2m1 left by two before this mma).
//
// Scales (scale_vec::NX: N scales per row of A / column of B, each over K/N consecutive elements): the b32 scale
// operand's byte byte-id + j holds block j's scale; row m of A takes it from lane 4 (m mod 8) + 2 thread-id-a +
// m / 8 (the lanes whose position in their quad is thread-id-a's pair), column n of B from lane 4n + thread-id-b
// (CUTLASS's SM120 block-scaled SFA/SFB layouts, which put thread-id 0's lanes there). ue8m0 is 2^(v - 127) (255
// NaN); ue4m3 (mxf4nvf4's scale_vec::4X) is e4m3 without its sign bit, which it ignores (0x7f NaN).
#include "MatrixCompute.h"
#include "Runtime.h"
#include "WarpCompute.h"
#include "ptxforge/codegen/MatrixElements.h"

#include <cmath>
#include <limits>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

double ptxforge::codegen::exec::miniFloat(uint32_t Bits, unsigned Exp, unsigned Man) {
  int Bias = (1 << (Exp - 1)) - 1;
  uint32_t E = (Bits >> Man) & ((1u << Exp) - 1), F = Bits & ((1u << Man) - 1);
  double V = E ? std::ldexp(1.0 + std::ldexp(double(F), -int(Man)), int(E) - Bias)
               : std::ldexp(double(F), 1 - Bias - int(Man));
  return Bits >> (Exp + Man) & 1 ? -V : V;
}

namespace {

constexpr unsigned M = 16, N = 8, NA = 4, NB = 2, NC = 4;

/// Slot words of a lane: its A, B and C registers two to a word, its scale operands, the selectors, D's buffer,
/// the code.
enum InWord { InRegs, InScales = 5, InSel, InOut, InCode, InNWords };

uint32_t reg(const CollectiveSlot &S, uint32_t Lane, unsigned I) {
  return static_cast<uint32_t>(S.In[Lane][InRegs + I / 2] >> (32 * (I & 1)));
}

/// Element E of a fragment register: a byte (its bits by the type) or, packed, a nibble.
double element(uint32_t T, bool Packed, uint32_t Reg, unsigned E) {
  if (Packed)
    return miniFloat(Reg >> (4 * E) & 15, 2, 1);
  uint32_t B = Reg >> (8 * E) & 255;
  switch (T) {
  case SEE4M3:
  case SEE5M2:
    return fp8ToDouble(B, T == SEE5M2);
  case SEE3M2:
    return miniFloat(B & 63, 3, 2);
  case SEE2M3:
    return miniFloat(B & 63, 2, 3);
  default:
    return miniFloat(B >> 2 & 15, 2, 1);
  }
}

/// A scale's value: ue4m3 (Ue4m3) or ue8m0.
double scaleValue(uint32_t Byte, bool Ue4m3) {
  if (Ue4m3)
    return fp8ToDouble(Byte & 0x7f, false);
  return Byte == 255 ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(Byte) - 127);
}

/// Multiplies each row of A and column of B by its blocks' scales (see the file comment); an exited lane's
/// scales read as zero, as its fragments do.
void applyScales(const CollectiveSlot &S, uint32_t Code, uint32_t Sel, unsigned K, double *A, double *B) {
  unsigned Vec = (Code >> SmScaleVecShift) & 7, Span = K / Vec;
  unsigned ByteA = Sel & 3, TidA = (Sel >> 8) & 1, ByteB = (Sel >> 16) & 3, TidB = (Sel >> 24) & 3;
  auto scale = [&](uint32_t Lane, bool OfB, unsigned Block) {
    if (!(S.Participants >> Lane & 1))
      return 0.0;
    uint32_t Word = static_cast<uint32_t>(S.In[Lane][InScales] >> (OfB ? 32 : 0));
    return scaleValue(Word >> (8 * (((OfB ? ByteB : ByteA) + Block) & 3)) & 255, Code & SmUe4m3);
  };
  for (unsigned J = 0; J < Vec; ++J) {
    for (unsigned Row = 0; Row < M; ++Row) {
      double F = scale(4 * (Row % 8) + 2 * TidA + Row / 8, false, J);
      for (unsigned Kk = J * Span; Kk < (J + 1) * Span; ++Kk)
        A[Row * K + Kk] *= F;
    }
    for (unsigned Col = 0; Col < N; ++Col) {
      double F = scale(4 * Col + TidB, true, J);
      for (unsigned Kk = J * Span; Kk < (J + 1) * Span; ++Kk)
        B[Kk * N + Col] *= F;
    }
  }
}

void computeScaled(CollectiveSlot &S, void *) {
  uint32_t First = static_cast<uint32_t>(__builtin_ctz(S.Participants));
  uint32_t Code = static_cast<uint32_t>(S.In[First][InCode]), Sel = static_cast<uint32_t>(S.In[First][InSel]);
  uint32_t TA = Code & 15, TB = (Code >> 4) & 15;
  bool Packed = Code & SmPackedFp4, F16 = Code & SmF16;
  unsigned K = Packed ? 64 : 32, PerReg = Packed ? 8 : 4;
  double A[M * 64] = {}, B[64 * N] = {}, C[M * N] = {};
  uint64_t D[M * N];
  forLanes(S.Participants, [&](uint32_t L) {
    unsigned G = L / 4, T = L % 4;
    for (unsigned R = 0; R < NA; ++R)
      for (unsigned E = 0; E < PerReg; ++E)
        A[(G + 8 * (R & 1)) * K + T * PerReg + E + (R >> 1) * (K / 2)] = element(TA, Packed, reg(S, L, R), E);
    for (unsigned R = 0; R < NB; ++R)
      for (unsigned E = 0; E < PerReg; ++E)
        B[(T * PerReg + E + R * (K / 2)) * N + G] = element(TB, Packed, reg(S, L, NA + R), E);
    for (unsigned I = 0; I < 4; ++I) // f16: two to a register, the lower half first
      C[(G + 8 * (I >> 1)) * N + 2 * T + (I & 1)] =
          F16 ? decodeMatrixElement(MEF16, reg(S, L, NA + NB + I / 2) >> (16 * (I & 1)) & 0xffff)
              : decodeMatrixElement(MEF32, reg(S, L, NA + NB + I));
  });
  if ((Code >> SmScaleVecShift) & 7)
    applyScales(S, Code, Sel, K, A, B);
  // Products of these values (and their power-of-two or 4-bit scales) are exact in double: the f8 code says so.
  mmaProduct(MEE4M3 << 4 | (F16 ? MEF16 : MEF32) << 16, M, N, K, A, B, C, D);
  forLanes(S.Participants, [&](uint32_t L) {
    auto *Out = reinterpret_cast<uint32_t *>(S.In[L][InOut]);
    unsigned G = L / 4, T = L % 4;
    if (F16)
      Out[0] = Out[1] = 0;
    for (unsigned I = 0; I < 4; ++I) {
      auto V = static_cast<uint32_t>(D[(G + 8 * (I >> 1)) * N + 2 * T + (I & 1)]);
      if (F16)
        Out[I / 2] |= V << (16 * (I & 1));
      else
        Out[I] = V;
    }
  });
}

} // namespace

extern "C" {

/// One lane's mma.sync of these kinds: Code as MatrixElements.h's ScaledMmaFlag says; In its 4 A, 2 B and 4 C (f16: 2)
/// registers; ScaleA/ScaleB its scale operands and Sel the selectors (byte-id-a, thread-id-a, byte-id-b,
/// thread-id-b in bytes 0-3); Out receives its 4 D registers.
static void ptxrt_mma_scaled(ThreadContext *C, uint32_t Code, uint32_t Sel, const uint32_t *In, uint32_t ScaleA,
                             uint32_t ScaleB, uint32_t *Out) {
  uint64_t Words[InNWords] = {};
  for (unsigned I = 0; I < NA + NB + NC; ++I)
    Words[InRegs + I / 2] |= uint64_t(In[I]) << (32 * (I & 1));
  Words[InScales] = ScaleA | uint64_t(ScaleB) << 32;
  Words[InSel] = Sel;
  Words[InOut] = reinterpret_cast<uint64_t>(Out);
  Words[InCode] = Code;
  // mma.sp's collective kind; bit 31 of the site, which no mma.sp code sets, keeps the two apart.
  warpCollective(C, CKMmaSp, Code | 1u << 31, Words, InNWords, computeScaled, nullptr);
}
}

void ptxforge::codegen::exec::registerScaledMatrixHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_mma_scaled)});
}
