// The constant code word that lowered f16/bf16 arithmetic and narrow-format conversions pass to the runtime
// helpers of exec/HalfMath.cpp (ptxrt_half_op, ptxrt_cvt_narrow_*): operation, format, rounding mode, flags.
#pragma once

#include <cstdint>

namespace ptxforge::codegen::halfcode {

// Operation (bits 0..7).
constexpr uint32_t OpMask = 0xff;
enum : uint32_t { OpAdd = 1, OpSub, OpMul, OpFma, OpMin, OpMax, OpNeg, OpAbs, OpEx2, OpTanh };

// Format (bits 8..11): the operand/result format of half ops, the destination of conversions.
constexpr unsigned FmtShift = 8;
enum : uint32_t { FmtF16 = 0, FmtBF16, FmtTF32, FmtE4M3, FmtE5M2, FmtF32 };

// Rounding mode (bits 12..14).
constexpr unsigned ModeShift = 12;
enum : uint32_t { ModeRN = 0, ModeRZ, ModeRM, ModeRP, ModeRNA };

// Flags (bits 16..).
constexpr uint32_t FlagFtz = 1u << 16;        ///< flush subnormal inputs and results to signed zero
constexpr uint32_t FlagSat = 1u << 17;        ///< clamp the result to [+0, 1]; NaN -> +0
constexpr uint32_t FlagRelu = 1u << 18;       ///< negative results (and -0) -> +0; NaN stays NaN
constexpr uint32_t FlagNaN = 1u << 19;        ///< min/max: a NaN operand gives NaN
constexpr uint32_t FlagXorsignAbs = 1u << 20; ///< min/max .xorsign.abs
constexpr uint32_t FlagSatfinite = 1u << 21;  ///< overflow and infinity -> largest finite value
constexpr uint32_t FlagX2 = 1u << 22;         ///< two packed 16-bit lanes
constexpr uint32_t FlagsMask = 0x7fu << 16;

inline constexpr uint32_t code(uint32_t Op, uint32_t Fmt, uint32_t Mode, uint32_t Flags) {
  return Op | (Fmt << FmtShift) | (Mode << ModeShift) | Flags;
}

} // namespace ptxforge::codegen::halfcode
