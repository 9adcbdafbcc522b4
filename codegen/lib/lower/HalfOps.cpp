// f16/bf16 and packed f16x2/bf16x2 arithmetic: add/sub/mul/fma (rounding modes, .ftz, .sat, .relu), min/max
// (.NaN, .xorsign.abs, .relu), neg/abs, ex2/tanh .approx. Every form calls the runtime helper ptxrt_half_op
// (exec/HalfMath.cpp), which computes in double and rounds exactly once to the narrow format; the code word
// (HalfCode.h) selects the operation.
#include "../FunctionLowering.h"
#include "HalfCode.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using namespace ptxforge::codegen::halfcode;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

namespace ptxforge::codegen::detail {
bool lowerHalf(FunctionLowering &L, const ptx::Instruction &I);
}


bool ptxforge::codegen::detail::lowerHalf(FunctionLowering &L, const ptx::Instruction &I) {
  ScalarType T = I.type();
  bool X2 = T == ScalarType::F16x2 || T == ScalarType::BF16x2;
  if (T != ScalarType::F16 && T != ScalarType::BF16 && !X2)
    return false;
  if (I.typeCount() != 1)
    return false;
  uint32_t Op;
  unsigned NIn;
  switch (I.Op) {
  case Opcode::Add: Op = OpAdd; NIn = 2; break;
  case Opcode::Sub: Op = OpSub; NIn = 2; break;
  case Opcode::Mul: Op = OpMul; NIn = 2; break;
  case Opcode::Fma:
  case Opcode::Mad: Op = OpFma; NIn = 3; break;
  case Opcode::Min: Op = OpMin; NIn = 2; break;
  case Opcode::Max: Op = OpMax; NIn = 2; break;
  case Opcode::Neg: Op = OpNeg; NIn = 1; break;
  case Opcode::Abs: Op = OpAbs; NIn = 1; break;
  case Opcode::Ex2: Op = OpEx2; NIn = 1; break;
  case Opcode::Tanh: Op = OpTanh; NIn = 1; break;
  default: return false;
  }
  auto &Ops = I.Operands;
  if (Ops.size() < NIn + 1)
    return L.unsupported(I, "operand count");
  if ((Op == OpMin || Op == OpMax) && Ops.size() == 4)
    NIn = 3; // three-input min/max: folded pairwise below
  uint32_t Fmt = (T == ScalarType::BF16 || T == ScalarType::BF16x2) ? FmtBF16 : FmtF16;
  uint32_t Mode = halfRoundingMode(I);
  uint32_t Flags = X2 ? FlagX2 : 0;
  if (I.has(Modifier::Ftz))
    Flags |= FlagFtz;
  if (I.has(Modifier::Sat))
    Flags |= FlagSat;
  if (I.has(Modifier::Relu))
    Flags |= FlagRelu;
  if (I.has(Modifier::NaN))
    Flags |= FlagNaN;
  if (I.has(Modifier::Xorsign))
    Flags |= FlagXorsignAbs;

  auto &B = L.b();
  llvm::Type *I32 = B.getInt32Ty();
  auto arg = [&](unsigned K) { return B.CreateZExt(L.read(Ops[K], T), I32); };
  llvm::Value *Zero = B.getInt32(0);
  llvm::Value *R;
  if (NIn == 3 && Op != OpFma) {
    // min/max a, b, c: min(min(a, b), c) with the same NaN rules.
    llvm::Value *AB = pure(L.callHelper("ptxrt_half_op", I32,
                                         {B.getInt32(code(Op, Fmt, Mode, Flags & ~FlagRelu)), arg(1), arg(2), Zero}));
    R = pure(L.callHelper("ptxrt_half_op", I32, {B.getInt32(code(Op, Fmt, Mode, Flags)), AB, arg(3), Zero}));
  } else {
    llvm::Value *A = arg(1);
    llvm::Value *Bv = NIn >= 2 ? arg(2) : Zero;
    llvm::Value *C = NIn >= 3 ? arg(3) : Zero;
    R = pure(L.callHelper("ptxrt_half_op", I32, {B.getInt32(code(Op, Fmt, Mode, Flags)), A, Bv, C}));
  }
  L.write(Ops[0], T, X2 ? R : B.CreateTrunc(R, B.getInt16Ty()));
  return true;
}

uint32_t ptxforge::codegen::detail::halfRoundingMode(const ptx::Instruction &I) {
  using namespace halfcode;
  if (I.has(Modifier::Rz))
    return ModeRZ;
  if (I.has(Modifier::Rm))
    return ModeRM;
  if (I.has(Modifier::Rp))
    return ModeRP;
  if (I.has(Modifier::Rna))
    return ModeRNA;
  return ModeRN;
}
