// Runtime helpers for the narrow floating formats (f16, bf16, tf32, e4m3, e5m2): exact software rounding from
// double for every PTX rounding mode with .ftz/.sat/.relu/.satfinite, and the f16/bf16(x2) arithmetic built on
// it. Arithmetic is computed in double and made "round to odd" (error-free transformations find the
// inexactness), which keeps the second rounding to the narrow format correct in every mode.
//
// The lowering (lib/lower/HalfOps.cpp, ConvertOps.cpp) passes a constant code word, laid out as in HalfCode
// below; it must stay in sync with lib/lower/HalfCode.h.
#include "Runtime.h"

#include "../lib/lower/HalfCode.h"

#include "llvm/ADT/bit.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace ptxforge::codegen::exec;
using namespace ptxforge::codegen::halfcode;

namespace {

struct FormatInfo {
  int E, M;          ///< exponent and mantissa bits
  bool HasInf;       ///< false: e4m3 (all-ones exponent with all-ones mantissa is the only NaN)
  uint32_t CanonNaN; ///< the NaN the GPU returns
  double MaxFinite;
};

const FormatInfo &info(unsigned F) {
  static const FormatInfo Infos[] = {
      /*F16*/ {5, 10, true, 0x7fff, 65504.0},
      /*BF16*/ {8, 7, true, 0x7fff, 0x1.fep127},
      /*TF32*/ {8, 10, true, 0x7fffffff, 0x1.ffcp127},
      /*E4M3*/ {4, 3, false, 0x7f, 448.0},
      /*E5M2*/ {5, 2, true, 0x7f, 57344.0},
      /*F32*/ {8, 23, true, 0x7fffffff, 0x1.fffffep127},
  };
  return Infos[F < 6 ? F : 0];
}

inline int bias(const FormatInfo &I) { return (1 << (I.E - 1)) - 1; }
inline int emin(const FormatInfo &I) { return 1 - bias(I); }

/// Decodes the bits of format F (tf32 as the f32 bit pattern) into an exact double.
double decode(unsigned F, uint32_t Bits) {
  if (F == FmtTF32 || F == FmtF32) {
    float V;
    memcpy(&V, &Bits, 4);
    return V;
  }
  const FormatInfo &I = info(F);
  unsigned W = 1 + I.E + I.M;
  bool Neg = (Bits >> (W - 1)) & 1;
  uint32_t Exp = (Bits >> I.M) & ((1u << I.E) - 1);
  uint32_t Man = Bits & ((1u << I.M) - 1);
  double R;
  if (Exp == (1u << I.E) - 1 && (I.HasInf || Man == (1u << I.M) - 1)) {
    if (I.HasInf && Man == 0)
      R = std::numeric_limits<double>::infinity();
    else
      R = std::numeric_limits<double>::quiet_NaN();
  } else if (Exp == 0) {
    R = std::ldexp(static_cast<double>(Man), emin(I) - I.M);
  } else {
    R = std::ldexp(static_cast<double>(Man | (1u << I.M)), static_cast<int>(Exp) - bias(I) - I.M);
  }
  return Neg ? -R : R;
}

bool isSubnormalBits(unsigned F, uint32_t Bits) {
  if (F == FmtTF32 || F == FmtF32)
    return (Bits & 0x7f800000u) == 0 && (Bits & 0x7fffffu) != 0;
  const FormatInfo &I = info(F);
  uint32_t Exp = (Bits >> I.M) & ((1u << I.E) - 1);
  uint32_t Man = Bits & ((1u << I.M) - 1);
  return Exp == 0 && Man != 0;
}

/// Decodes an operand, flushing a subnormal to a zero of the same sign when Ftz.
double operand(unsigned F, uint32_t Bits, bool Ftz) {
  double V = decode(F, Bits);
  if (Ftz && isSubnormalBits(F, Bits))
    return std::signbit(V) ? -0.0 : 0.0;
  return V;
}

uint64_t bitsOf(double D) { return llvm::bit_cast<uint64_t>(D); }
double fromBits(uint64_t B) { return llvm::bit_cast<double>(B); }

/// Rounds S + Err (Err the exact error of the rounded sum S) to odd: truncate, then set the last bit when
/// inexact. A double rounded to odd has enough bits (53 >= p + 2) for a correct second rounding to any
/// narrower format in any mode.
double roundToOdd(double S, double Err) {
  if (Err == 0 || !std::isfinite(S))
    return S;
  double T = S;
  if (std::signbit(Err) != std::signbit(S))
    T = std::nextafter(S, 0.0); // the exact value is smaller in magnitude than S
  return fromBits(bitsOf(T) | 1);
}

double twoSumOdd(double A, double B, unsigned Mode) {
  double S = A + B;
  if (S == 0 && Mode == ModeRM && !(A == 0 && B == 0 && !std::signbit(A) && !std::signbit(B)))
    return -0.0; // an exact zero sum is -0 when rounding down (unless both addends are +0)
  if (!std::isfinite(S))
    return S;
  double Bb = S - A;
  double Err = (A - (S - Bb)) + (B - Bb);
  return roundToOdd(S, Err);
}

/// A 64-bit integer as a double rounded to odd (exact up to 2^53).
double intToOdd(uint64_t Mag, bool Neg) {
  double R;
  if (Mag < (1ull << 53)) {
    R = static_cast<double>(Mag);
  } else {
    int Top = 63 - __builtin_clzll(Mag);
    int Drop = Top - 52;
    uint64_t Kept = Mag >> Drop;
    if (Mag & ((1ull << Drop) - 1))
      Kept |= 1;
    R = std::ldexp(static_cast<double>(Kept), Drop);
  }
  return Neg ? -R : R;
}

/// The bits of a magnitude R that format I represents exactly (zero, subnormal or normal), shifted left by Shift.
uint32_t encodeMagnitude(const FormatInfo &I, unsigned Shift, double R) {
  if (R == 0)
    return 0;
  int E = std::ilogb(R), Emin = emin(I);
  uint32_t Exp, Man;
  if (E < Emin) {
    Exp = 0;
    Man = static_cast<uint32_t>(std::ldexp(R, I.M - Emin));
  } else {
    Exp = static_cast<uint32_t>(E + bias(I));
    Man = static_cast<uint32_t>(std::ldexp(R, I.M - E)) - (1u << I.M);
  }
  return ((Exp << I.M) | Man) << Shift;
}

/// A finite magnitude A rounded to format I's precision with Mode (Neg: the value's sign, for the directed
/// modes); infinity where it is certainly past the format's range.
double roundMagnitude(const FormatInfo &I, double A, unsigned Mode, bool Neg) {
  if (A == 0)
    return 0;
  int E = std::ilogb(A), Emin = emin(I), Emax = bias(I);
  int Eq = E < Emin ? Emin : E;
  if (Eq > Emax + 1)
    Eq = Emax + 1; // anything this large overflows in every mode; keep the scaling exact
  double Q = std::ldexp(A, I.M - Eq);
  double N = std::floor(Q), Frac = Q - N;
  bool Up = false;
  switch (Mode) {
  case ModeRN:
    Up = Frac > 0.5 || (Frac == 0.5 && std::fmod(N, 2.0) != 0);
    break;
  case ModeRNA:
    Up = Frac >= 0.5;
    break;
  case ModeRZ:
    Up = false;
    break;
  case ModeRM:
    Up = Frac > 0 && Neg;
    break;
  case ModeRP:
    Up = Frac > 0 && !Neg;
    break;
  }
  if (Q >= std::ldexp(1.0, I.M + 2)) // beyond the exactly scaled range: certainly overflow
    return std::numeric_limits<double>::infinity();
  return std::ldexp(N + (Up ? 1 : 0), Eq - I.M);
}

/// Whether a value past the largest finite one rounds to infinity in Mode (else to the largest finite value).
bool overflowsToInfinity(unsigned Mode, bool Neg) {
  switch (Mode) {
  case ModeRZ:
    return false;
  case ModeRM:
    return Neg;
  case ModeRP:
    return !Neg;
  default:
    return true;
  }
}

/// Encodes X (exact, or rounded to odd) into format F with rounding mode Mode and the result flags of Code.
uint32_t encode(double X, unsigned F, unsigned Mode, uint32_t Flags) {
  const FormatInfo &I = info(F);
  bool Tf32 = F == FmtTF32 || F == FmtF32;
  unsigned W = Tf32 ? 32 : 1 + I.E + I.M;
  unsigned Shift = Tf32 ? 23 - I.M : 0; // tf32 lives in the top 19 bits of an f32 pattern
  if (std::isnan(X))
    return (Flags & FlagSat) ? 0 : I.CanonNaN;
  if (Flags & FlagSat) { // clamp to [0, 1]; -0 and NaN become +0
    if (!(X > 0))
      return 0;
    if (X > 1)
      X = 1;
  }
  if ((Flags & FlagRelu) && std::signbit(X))
    return 0;
  bool Neg = std::signbit(X);
  uint32_t Sign = Neg ? 1u << (W - 1) : 0;
  double A = std::fabs(X);
  uint32_t InfBits = I.HasInf ? (((1u << I.E) - 1) << I.M) << Shift : I.CanonNaN;
  // The largest finite value's bits (e4m3: exponent 1111 with mantissa 110).
  uint32_t MaxBits = encodeMagnitude(I, Shift, I.MaxFinite);
  if (std::isinf(A)) {
    if (Flags & FlagSatfinite)
      return Sign | MaxBits;
    return I.HasInf ? (Sign | InfBits) : I.CanonNaN;
  }
  double R = roundMagnitude(I, A, Mode, Neg);
  if (R > I.MaxFinite) {
    if (!overflowsToInfinity(Mode, Neg) || (Flags & FlagSatfinite))
      return Sign | MaxBits;
    return I.HasInf ? (Sign | InfBits) : I.CanonNaN;
  }
  if ((Flags & FlagFtz) && R != 0 && R < std::ldexp(1.0, emin(I)))
    R = 0;
  return Sign | encodeMagnitude(I, Shift, R);
}

/// tf32 keeps a NaN's sign and (truncated) payload.
uint32_t encodeTf32(uint32_t Bits, float V, unsigned Mode, uint32_t Flags) {
  if (std::isnan(V) && !(Flags & (FlagSat | FlagSatfinite | FlagRelu)))
    return Bits & 0xffffe000u;
  return encode(V, FmtTF32, Mode, Flags);
}

double minMax(bool IsMax, double A, double B, uint32_t Flags) {
  bool NA = std::isnan(A), NB = std::isnan(B);
  if (NA || NB) {
    if ((Flags & FlagNaN) || (NA && NB))
      return std::numeric_limits<double>::quiet_NaN();
    double R = NA ? B : A;
    if (Flags & FlagXorsignAbs) // |other|, sign: xor of both signs (a NaN's sign included)
      return std::signbit(A) != std::signbit(B) ? -std::fabs(R) : std::fabs(R);
    return R;
  }
  bool Xs = Flags & FlagXorsignAbs;
  bool SignX = std::signbit(A) != std::signbit(B);
  if (Xs) {
    A = std::fabs(A);
    B = std::fabs(B);
  }
  double R;
  if (A == B) // +0 vs -0: min prefers -0, max +0
    R = IsMax ? (std::signbit(A) ? B : A) : (std::signbit(A) ? A : B);
  else
    R = IsMax ? (A > B ? A : B) : (A < B ? A : B);
  if (Xs && SignX)
    R = -R;
  return R;
}

uint32_t laneOp(uint32_t Code, uint32_t A, uint32_t B, uint32_t C) {
  unsigned Op = Code & OpMask;
  unsigned F = (Code >> FmtShift) & 0xf;
  unsigned Mode = (Code >> ModeShift) & 0x7;
  uint32_t Flags = Code & FlagsMask;
  bool Ftz = Flags & FlagFtz;
  double X = operand(F, A, Ftz), Y = 0, Z = 0;
  if (Op != OpNeg && Op != OpAbs && Op != OpEx2 && Op != OpTanh)
    Y = operand(F, B, Ftz);
  if (Op == OpFma)
    Z = operand(F, C, Ftz);
  double R;
  switch (Op) {
  case OpAdd:
    R = twoSumOdd(X, Y, Mode);
    break;
  case OpSub:
    R = twoSumOdd(X, -Y, Mode);
    break;
  case OpMul:
    R = X * Y;
    break; // exact: at most 2 x 11 significant bits, no underflow in double
  case OpFma:
    R = twoSumOdd(X * Y, Z, Mode);
    break;
  case OpMin:
    R = minMax(false, X, Y, Flags);
    break;
  case OpMax:
    R = minMax(true, X, Y, Flags);
    break;
  case OpNeg:
    R = -X;
    break;
  case OpAbs:
    R = std::fabs(X);
    break;
  case OpEx2:
    R = std::exp2(X);
    break;
  case OpTanh:
    R = std::tanh(X);
    break;
  default:
    R = std::numeric_limits<double>::quiet_NaN();
    break;
  }
  return encode(R, F, Mode, Flags);
}

} // namespace

/// f16/bf16 arithmetic, one lane or two packed lanes (the low lane in bits 0..15).
extern "C" uint32_t ptxrt_half_op(uint32_t Code, uint32_t A, uint32_t B, uint32_t C) {
  if (!(Code & FlagX2))
    return laneOp(Code, A & 0xffff, B & 0xffff, C & 0xffff);
  uint32_t Lo = laneOp(Code, A & 0xffff, B & 0xffff, C & 0xffff);
  uint32_t Hi = laneOp(Code, A >> 16, B >> 16, C >> 16);
  return (Hi << 16) | (Lo & 0xffff);
}

/// A double (an exact f32/f64 source) to the narrow format of Code.
extern "C" uint32_t ptxrt_cvt_narrow_f64(uint32_t Code, double X) {
  unsigned F = (Code >> FmtShift) & 0xf;
  unsigned Mode = (Code >> ModeShift) & 0x7;
  uint32_t Flags = Code & FlagsMask;
  return encode(X, F, Mode, Flags);
}

/// An f32 (given as bits, so that a NaN keeps its payload) to tf32.
extern "C" uint32_t ptxrt_cvt_tf32_f32(uint32_t Code, uint32_t Bits) {
  float V;
  memcpy(&V, &Bits, 4);
  return encodeTf32(Bits, V, (Code >> ModeShift) & 0x7, Code & FlagsMask);
}

/// A 64-bit integer (IsSigned: two's complement) to the format of Code.
extern "C" uint32_t ptxrt_cvt_narrow_int(uint32_t Code, uint64_t X, uint32_t IsSigned) {
  unsigned F = (Code >> FmtShift) & 0xf;
  unsigned Mode = (Code >> ModeShift) & 0x7;
  bool Neg = IsSigned && static_cast<int64_t>(X) < 0;
  uint64_t Mag = Neg ? (~X + 1) : X;
  return encode(intToOdd(Mag, Neg), F, Mode, Code & FlagsMask);
}

/// Lane-wise conversion between narrow formats: Code's format is the destination, SrcFmt the source; Lanes
/// lanes of the source width packed low to high.
extern "C" uint32_t ptxrt_cvt_narrow_packed(uint32_t Code, uint32_t SrcFmt, uint32_t Bits, uint32_t Lanes) {
  unsigned F = (Code >> FmtShift) & 0xf;
  unsigned Mode = (Code >> ModeShift) & 0x7;
  uint32_t Flags = Code & FlagsMask;
  const FormatInfo &SI = info(SrcFmt), &DI = info(F);
  unsigned SW = 1 + SI.E + SI.M, DW = 1 + DI.E + DI.M;
  uint32_t R = 0;
  for (unsigned L = 0; L < Lanes; ++L) {
    uint32_t Lane = (Bits >> (L * SW)) & ((1u << SW) - 1);
    double V = operand(SrcFmt, Lane, Flags & FlagFtz);
    R |= (encode(V, F, Mode, Flags) & ((1u << DW) - 1)) << (L * DW);
  }
  return R;
}

void ptxforge::codegen::exec::registerHalfMathHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_half_op), PTXRT_HELPER(ptxrt_cvt_narrow_f64), PTXRT_HELPER(ptxrt_cvt_tf32_f32),
                     PTXRT_HELPER(ptxrt_cvt_narrow_int), PTXRT_HELPER(ptxrt_cvt_narrow_packed)});
}
