// PTX constant expressions (PTX ISA "Constant Expressions"): C's operators over 64-bit integers (.s64/.u64) and
// .f64, folded while parsing, so the IR only ever holds the resulting immediate.
//
//   add.s32 %r1, %r2, (1+2)*3;        ->  add.s32 %r1, %r2, 9;
//   .global .u64 a[2] = {1<<4, -7/2}; ->  {16, -3}
//
// Where ptxas 13.0 differs from C, ptxas decides (its folded values, read from .nv.global.init, are in
// tests/lit/ptx/const-expr.ptx): `%` is always an unsigned remainder, shift counts are taken modulo 64, and
// mixing an integer with a floating-point operand is an error.
#pragma once

#include "Literals.h"
#include "ptxforge/ptx/Diagnostics.h"
#include "ptxforge/ptx/Operand.h"

#include <cstdint>
#include <vector>

namespace ptxforge::ptx::detail {

enum class ExprOp : uint8_t {
  // Binary, by precedence (C's): * / %, + -, << >>, < > <= >=, == !=, &, ^, |, &&, ||.
  Mul,
  Div,
  Rem,
  Add,
  Sub,
  Shl,
  Shr,
  Lt,
  Gt,
  Le,
  Ge,
  Eq,
  Ne,
  BitAnd,
  BitXor,
  BitOr,
  LogAnd,
  LogOr,
  // Unary.
  Plus,
  Neg,
  LogNot,
  BitNot,
  CastS64,
  CastU64,
};

/// One folded value. A lone literal (with at most one leading '-') also keeps how it was written, so that it
/// reaches the IR exactly as a plain literal operand does (hex spelling, `U` suffix, `0f` bit patterns).
struct ConstValue {
  enum class Kind : uint8_t { S64, U64, F64 };
  Kind K = Kind::S64;
  uint64_t Bits = 0; ///< the integer, or the f64's bits
  SourceLoc Loc;
  bool IsLiteral = false;
  ImmediateKind LiteralKind = ImmediateKind::Int;
  IntFormat Format = IntFormat::Decimal;
  bool UnsignedSuffix = false;
  bool Negated = false;
  uint64_t LiteralBits = 0; ///< the literal's own encoding (f32 bits for `0f...`)
  double Decimal = 0;

  bool isInt() const { return K != Kind::F64; }
  double f64() const;
  static ConstValue ofInt(uint64_t V, bool Unsigned, SourceLoc L);
  static ConstValue ofF64(double V, SourceLoc L);
  static ConstValue ofLiteral(const IntLiteral &Lit, SourceLoc L);
  static ConstValue ofLiteral(const FloatLiteral &Lit, SourceLoc L);
};

/// A shunting-yard evaluator the grammar actions drive: operands are pushed as they are parsed, binary operators
/// wait on a stack until one of lower precedence (or the end of their level) arrives. After the first error every
/// call is a no-op until `finish`.
class ConstExprEvaluator {
public:
  explicit ConstExprEvaluator(DiagnosticEngine &Diags) : Diags(Diags) {}

  /// Opens a nesting level (an expression, a parenthesised one, a branch of `?:`).
  void begin();
  void push(const ConstValue &V);
  void unary(ExprOp Op, SourceLoc Loc);
  void binary(ExprOp Op, SourceLoc Loc);
  /// Applies the level's waiting operators (before `?`), leaving the level open.
  void reduce();
  /// Applies them and closes the level, leaving its value on the stack.
  void end();
  void ternary(SourceLoc Loc);
  /// Closes the outermost level and takes the whole expression's value (false after an error); the evaluator is
  /// then empty again, whatever a syntax error left half-built.
  bool finish(ConstValue &Out);
  void reset();
  /// Marks the expression failed after an error reported elsewhere (a malformed literal).
  void poison() { Failed = true; }

private:
  struct PendingOp {
    ExprOp Op;
    SourceLoc Loc;
    bool Marker;
  };
  void apply(const PendingOp &P);
  bool fail(SourceLoc Loc, std::string Message);

  DiagnosticEngine &Diags;
  std::vector<ConstValue> Values;
  std::vector<PendingOp> Ops;
  bool Failed = false;
};

/// The operand a folded value becomes.
Operand immediateOperand(const ConstValue &V);
/// And back: a parenthesised immediate `(4)` that turns out to start an expression `(4) * 2`.
ConstValue valueOfImmediate(const Operand &Op);

} // namespace ptxforge::ptx::detail
