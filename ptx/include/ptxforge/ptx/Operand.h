// Instruction operands: registers, special registers, immediates, symbols, labels, addresses, vectors and lists.
#pragma once

#include "ptxforge/ptx/SourceBuffer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace ptxforge::ptx {

/// Index of a declared register in its Function's register table.
using RegId = uint32_t;
constexpr RegId NoReg = UINT32_MAX;

/// PTX special registers (`%tid`, `%laneid`, ...): read-only, never declared.
enum class SpecialReg : uint8_t {
#define PTX_SREG(Enum, Spelling, Vector) Enum,
#include "ptxforge/ptx/SpecialRegs.def"
  NumSpecialRegs
};
llvm::StringRef spell(SpecialReg R);
/// True for the .x/.y/.z (and .w for some) vector special registers.
bool isVectorSpecialReg(SpecialReg R);

enum class OperandKind : uint8_t {
  Register,  ///< a declared register; Component set for `%v.x`
  RegPair,   ///< `p|q` (setp's two predicate results)
  Special,   ///< a special register, Component set for `%tid.x`
  Immediate, ///< integer or floating-point literal
  Symbol,    ///< a variable, function or label name (resolved by the verifier)
  Address,   ///< `[base+offset]`, base a register, a symbol, or nothing (absolute); extra elements for tex forms
  Vector,    ///< `{a, b, c, d}`
  List,      ///< `(a, b)`: a call's argument or result list
  Sink,      ///< `_`
};

enum class ImmediateKind : uint8_t { Int, F32Bits, F64Bits, Decimal };
enum class IntFormat : uint8_t { Decimal, Hex, Octal, Binary };

/// What a Symbol operand (or an address base symbol) turned out to name.
enum class SymbolKind : uint8_t { Unresolved, Variable, LocalVariable, Function, Label, Param, ReturnParam };

struct SymbolRef {
  SymbolKind Kind = SymbolKind::Unresolved;
  uint32_t Index = 0;
};

struct Operand {
  OperandKind Kind = OperandKind::Immediate;
  bool Negated = false;  ///< `!p` predicate operand, or a `-` before a register
  uint8_t Component = 0; ///< 0 none, 1..4 = .x .y .z .w
  /// A video instruction's selector on a register: 'b' (bytes) or 'h' (halves), 0 for none. SelDigits holds
  /// its SelCount digits, the last one written in the lowest nibble: `.b3210` is 0x3210, so nibble K names
  /// the source of lane K (or, on a destination, a lane the result is merged into).
  char SelKind = 0;
  uint8_t SelCount = 0;
  uint16_t SelDigits = 0;
  ImmediateKind ImmKind = ImmediateKind::Int;
  IntFormat Format = IntFormat::Decimal;
  bool UnsignedSuffix = false;
  SpecialReg Sreg = SpecialReg::NumSpecialRegs;
  RegId Reg = NoReg;                ///< Register, RegPair first, Address base register
  RegId Reg2 = NoReg;               ///< RegPair second
  uint64_t Bits = 0;                ///< Immediate: integer value or float bits; Address: offset (two's complement)
  double Decimal = 0;               ///< ImmediateKind::Decimal
  llvm::StringRef Name;             ///< Symbol, Address base symbol
  SymbolRef Target;                 ///< resolved Name
  llvm::ArrayRef<Operand> Elements; ///< Vector, List, extra Address elements
  SourceLoc Loc;

  bool isRegister() const { return Kind == OperandKind::Register; }
  int64_t offset() const { return static_cast<int64_t>(Bits); }
};

} // namespace ptxforge::ptx
