// PTX numeric literals: integers (decimal, hex, octal, binary, `U` suffix) and floats (`0f`/`0d` hex, decimal).
#pragma once

#include "ptxforge/ptx/Operand.h"

#include "llvm/ADT/StringRef.h"

namespace ptxforge::ptx::detail {

struct IntLiteral {
  uint64_t Value = 0;
  IntFormat Format = IntFormat::Decimal;
  bool Unsigned = false;
};

/// False when the literal does not fit in 64 bits or is malformed.
bool parseIntLiteral(llvm::StringRef S, IntLiteral &Out);

struct FloatLiteral {
  ImmediateKind Kind = ImmediateKind::Decimal; ///< F32Bits, F64Bits or Decimal
  uint64_t Bits = 0;                           ///< raw bits for the hex forms
  double Decimal = 0;
  bool Overflow =
      false; ///< a decimal literal beyond the f64 range, its subnormals included (ptxas: "Constant overflow")
};

bool parseFloatLiteral(llvm::StringRef S, FloatLiteral &Out);

/// The bit pattern a literal denotes (decimals as f64), negated when asked.
uint64_t literalBits(const FloatLiteral &L, bool Negate);

} // namespace ptxforge::ptx::detail
