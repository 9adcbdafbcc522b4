// Folding PTX constant expressions (see ConstantExpression.h).
#include "ConstantExpression.h"

#include <cstring>
#include <limits>

using namespace ptxforge::ptx;
using namespace ptxforge::ptx::detail;

namespace {

double bitsToF64(uint64_t Bits) {
  double D;
  std::memcpy(&D, &Bits, 8);
  return D;
}

uint64_t f64ToBits(double D) {
  uint64_t Bits;
  std::memcpy(&Bits, &D, 8);
  return Bits;
}

double f32BitsToF64(uint64_t Bits) {
  uint32_t B = static_cast<uint32_t>(Bits);
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}

unsigned precedence(ExprOp Op) {
  switch (Op) {
  case ExprOp::Mul:
  case ExprOp::Div:
  case ExprOp::Rem:
    return 10;
  case ExprOp::Add:
  case ExprOp::Sub:
    return 9;
  case ExprOp::Shl:
  case ExprOp::Shr:
    return 8;
  case ExprOp::Lt:
  case ExprOp::Gt:
  case ExprOp::Le:
  case ExprOp::Ge:
    return 7;
  case ExprOp::Eq:
  case ExprOp::Ne:
    return 6;
  case ExprOp::BitAnd:
    return 5;
  case ExprOp::BitXor:
    return 4;
  case ExprOp::BitOr:
    return 3;
  case ExprOp::LogAnd:
    return 2;
  case ExprOp::LogOr:
    return 1;
  default:
    return 11; // unary operators are applied as soon as their operand is complete
  }
}

bool isComparison(ExprOp Op) { return Op >= ExprOp::Lt && Op <= ExprOp::Ne; }

template <typename T> int64_t compare(ExprOp Op, T A, T B) {
  switch (Op) {
  case ExprOp::Lt:
    return A < B;
  case ExprOp::Gt:
    return A > B;
  case ExprOp::Le:
    return A <= B;
  case ExprOp::Ge:
    return A >= B;
  case ExprOp::Eq:
    return A == B;
  default:
    return A != B;
  }
}

} // namespace

double ConstValue::f64() const { return bitsToF64(Bits); }

ConstValue ConstValue::ofInt(uint64_t V, bool Unsigned, SourceLoc L) {
  ConstValue C;
  C.K = Unsigned ? Kind::U64 : Kind::S64;
  C.Bits = V;
  C.Loc = L;
  return C;
}

ConstValue ConstValue::ofF64(double V, SourceLoc L) {
  ConstValue C;
  C.K = Kind::F64;
  C.Bits = f64ToBits(V);
  C.Loc = L;
  return C;
}

ConstValue ConstValue::ofLiteral(const IntLiteral &Lit, SourceLoc L) {
  // A literal too large for .s64 is .u64, as in C.
  ConstValue C = ofInt(Lit.Value, Lit.Unsigned || Lit.Value > uint64_t(std::numeric_limits<int64_t>::max()), L);
  C.IsLiteral = true;
  C.Format = Lit.Format;
  C.UnsignedSuffix = Lit.Unsigned;
  C.LiteralBits = Lit.Value;
  return C;
}

ConstValue ConstValue::ofLiteral(const FloatLiteral &Lit, SourceLoc L) {
  ConstValue C;
  C.K = Kind::F64;
  C.Loc = L;
  C.IsLiteral = true;
  C.LiteralKind = Lit.Kind;
  C.LiteralBits = Lit.Bits;
  C.Decimal = Lit.Decimal;
  C.Bits = Lit.Kind == ImmediateKind::F32Bits ? f64ToBits(f32BitsToF64(Lit.Bits)) : Lit.Bits;
  return C;
}

void ConstExprEvaluator::reset() {
  Values.clear();
  Ops.clear();
  Failed = false;
}

bool ConstExprEvaluator::fail(SourceLoc Loc, std::string Message) {
  if (!Failed)
    Diags.error(Loc, std::move(Message));
  Failed = true;
  return false;
}

void ConstExprEvaluator::begin() {
  if (!Failed)
    Ops.push_back({ExprOp::Plus, SourceLoc(), true});
}

void ConstExprEvaluator::push(const ConstValue &V) {
  if (!Failed)
    Values.push_back(V);
}

void ConstExprEvaluator::unary(ExprOp Op, SourceLoc Loc) {
  if (Failed || Values.empty())
    return;
  ConstValue &V = Values.back();
  // `-literal` stays a literal: a plain negative immediate keeps its spelling.
  if (Op == ExprOp::Neg && V.IsLiteral && !V.Negated) {
    V.Negated = true;
    V.Loc = Loc;
    V.Bits = V.isInt() ? uint64_t(0) - V.Bits : V.Bits ^ 0x8000000000000000ull;
    V.LiteralBits = V.isInt()                                 ? V.Bits
                    : V.LiteralKind == ImmediateKind::F32Bits ? V.LiteralBits ^ 0x80000000u
                                                              : V.LiteralBits ^ 0x8000000000000000ull;
    V.Decimal = -V.Decimal;
    return;
  }
  if (Op == ExprOp::Plus)
    return;
  ConstValue R = V;
  R.IsLiteral = false;
  R.Loc = Loc;
  switch (Op) {
  case ExprOp::Neg:
    if (V.isInt())
      R.Bits = uint64_t(0) - V.Bits;
    else
      R = ConstValue::ofF64(-V.f64(), Loc);
    break;
  case ExprOp::LogNot:
  case ExprOp::BitNot:
    if (!V.isInt()) {
      fail(Loc, "integer constant expression expected");
      return;
    }
    if (Op == ExprOp::LogNot)
      R = ConstValue::ofInt(V.Bits == 0, false, Loc);
    else
      R.Bits = ~V.Bits;
    break;
  case ExprOp::CastS64:
  case ExprOp::CastU64:
    if (!V.isInt()) {
      fail(Loc, "unsupported cast operation in constant expression");
      return;
    }
    R.K = Op == ExprOp::CastU64 ? ConstValue::Kind::U64 : ConstValue::Kind::S64;
    break;
  default:
    return;
  }
  V = R;
}

void ConstExprEvaluator::binary(ExprOp Op, SourceLoc Loc) {
  if (Failed)
    return;
  // Left-associative: everything waiting at this level that binds at least as tightly goes first.
  while (!Ops.empty() && !Ops.back().Marker && precedence(Ops.back().Op) >= precedence(Op) && !Failed) {
    PendingOp P = Ops.back();
    Ops.pop_back();
    apply(P);
  }
  Ops.push_back({Op, Loc, false});
}

void ConstExprEvaluator::reduce() {
  while (!Failed && !Ops.empty() && !Ops.back().Marker) {
    PendingOp P = Ops.back();
    Ops.pop_back();
    apply(P);
  }
}

void ConstExprEvaluator::end() {
  reduce();
  if (!Failed && !Ops.empty())
    Ops.pop_back();
}

void ConstExprEvaluator::ternary(SourceLoc Loc) {
  if (Failed || Values.size() < 3)
    return;
  ConstValue C = Values.back();
  Values.pop_back();
  ConstValue B = Values.back();
  Values.pop_back();
  ConstValue Cond = Values.back();
  Values.pop_back();
  if (!Cond.isInt() || !B.isInt() || !C.isInt()) {
    fail(Loc, "integer constant expression expected");
    return;
  }
  bool Unsigned = B.K == ConstValue::Kind::U64 || C.K == ConstValue::Kind::U64;
  Values.push_back(ConstValue::ofInt(Cond.Bits ? B.Bits : C.Bits, Unsigned, Loc));
}

bool ConstExprEvaluator::finish(ConstValue &Out) {
  end();
  bool Ok = !Failed && !Values.empty();
  if (Ok)
    Out = Values.back();
  reset();
  return Ok;
}

void ConstExprEvaluator::apply(const PendingOp &P) {
  if (Values.size() < 2)
    return;
  ConstValue B = Values.back();
  Values.pop_back();
  ConstValue A = Values.back();
  Values.pop_back();
  SourceLoc Loc = A.Loc;
  if (A.isInt() != B.isInt()) {
    fail(P.Loc, "constant expression type mismatch: an integer and a floating-point operand");
    return;
  }
  if (!A.isInt()) {
    double X = A.f64(), Y = B.f64();
    switch (P.Op) {
    case ExprOp::Mul:
      Values.push_back(ConstValue::ofF64(X * Y, Loc));
      return;
    case ExprOp::Div:
      Values.push_back(ConstValue::ofF64(X / Y, Loc));
      return;
    case ExprOp::Add:
      Values.push_back(ConstValue::ofF64(X + Y, Loc));
      return;
    case ExprOp::Sub:
      Values.push_back(ConstValue::ofF64(X - Y, Loc));
      return;
    default:
      if (isComparison(P.Op)) {
        Values.push_back(ConstValue::ofInt(compare(P.Op, X, Y), false, Loc));
        return;
      }
      fail(P.Loc, "integer constant expression expected");
      return;
    }
  }
  uint64_t X = A.Bits, Y = B.Bits;
  bool Unsigned = A.K == ConstValue::Kind::U64 || B.K == ConstValue::Kind::U64;
  uint64_t R = 0;
  switch (P.Op) {
  case ExprOp::Mul:
    R = X * Y;
    break;
  case ExprOp::Div:
  case ExprOp::Rem:
    if (Y == 0) {
      fail(P.Loc, "division by zero in constant expression");
      return;
    }
    if (P.Op == ExprOp::Rem) // ptxas: the remainder is always unsigned (-7 % 3 == 0)
      R = X % Y;
    else if (Unsigned)
      R = X / Y;
    else if (int64_t(X) == std::numeric_limits<int64_t>::min() && int64_t(Y) == -1)
      R = X; // wraps, as two's complement arithmetic does
    else
      R = uint64_t(int64_t(X) / int64_t(Y));
    break;
  case ExprOp::Add:
    R = X + Y;
    break;
  case ExprOp::Sub:
    R = X - Y;
    break;
  case ExprOp::Shl:
  case ExprOp::Shr: // the left operand's type; the count modulo 64, as ptxas folds it
    Unsigned = A.K == ConstValue::Kind::U64;
    R = P.Op == ExprOp::Shl ? X << (Y & 63) : Unsigned ? X >> (Y & 63) : uint64_t(int64_t(X) >> (Y & 63));
    break;
  case ExprOp::BitAnd:
    R = X & Y;
    break;
  case ExprOp::BitXor:
    R = X ^ Y;
    break;
  case ExprOp::BitOr:
    R = X | Y;
    break;
  case ExprOp::LogAnd:
    R = X && Y;
    Unsigned = false;
    break;
  case ExprOp::LogOr:
    R = X || Y;
    Unsigned = false;
    break;
  default:
    R = Unsigned ? compare(P.Op, X, Y) : compare(P.Op, int64_t(X), int64_t(Y));
    Unsigned = false;
    break;
  }
  Values.push_back(ConstValue::ofInt(R, Unsigned, Loc));
}

Operand ptxforge::ptx::detail::immediateOperand(const ConstValue &V) {
  Operand Op;
  Op.Kind = OperandKind::Immediate;
  Op.Loc = V.Loc;
  if (V.IsLiteral) {
    Op.ImmKind = V.LiteralKind;
    Op.Format = V.Format;
    Op.UnsignedSuffix = V.UnsignedSuffix;
    Op.Negated = V.Negated;
    Op.Bits = V.LiteralBits;
    Op.Decimal = V.Decimal;
    return Op;
  }
  if (V.isInt()) {
    Op.ImmKind = ImmediateKind::Int;
    Op.Bits = V.Bits;
    Op.UnsignedSuffix = V.K == ConstValue::Kind::U64;
    Op.Negated = V.K == ConstValue::Kind::S64 && int64_t(V.Bits) < 0;
    return Op;
  }
  Op.ImmKind = ImmediateKind::Decimal;
  Op.Bits = V.Bits;
  Op.Decimal = V.f64();
  return Op;
}

ConstValue ptxforge::ptx::detail::valueOfImmediate(const Operand &Op) {
  switch (Op.ImmKind) {
  case ImmediateKind::Int: {
    bool Unsigned = Op.UnsignedSuffix || (!Op.Negated && Op.Bits > uint64_t(std::numeric_limits<int64_t>::max()));
    return ConstValue::ofInt(Op.Bits, Unsigned, Op.Loc);
  }
  case ImmediateKind::F32Bits:
    return ConstValue::ofF64(f32BitsToF64(Op.Bits), Op.Loc);
  case ImmediateKind::F64Bits:
  case ImmediateKind::Decimal:
    return ConstValue::ofF64(bitsToF64(Op.Bits), Op.Loc);
  }
  return ConstValue();
}
