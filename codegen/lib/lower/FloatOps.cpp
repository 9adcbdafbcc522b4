// Floating-point arithmetic on f32/f64 (and scalar f16/bf16 through f32): add/sub/mul/fma/mad/div, neg/abs,
// min/max, sqrt/rcp/rsqrt, the .approx transcendental functions, with .ftz and .sat. Directed rounding
// (.rz/.rm/.rp) goes through runtime helpers that switch the host rounding mode.
#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

namespace {

/// GPUs return the canonical NaN (0x7fffffff for f32) from arithmetic that produces one.
llvm::Value *canonicalizeNaN(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *T = X->getType();
  llvm::Value *IsNaN = B.CreateFCmpUNO(X, X);
  llvm::Value *Canon;
  if (T->isFloatTy())
    Canon = B.CreateBitCast(B.getInt32(0x7fffffff), T);
  else if (T->isDoubleTy())
    Canon = B.CreateBitCast(B.getInt64(0x7fffffffffffffffull), T);
  else if (T->isHalfTy())
    Canon = B.CreateBitCast(B.getInt16(0x7fff), T);
  else
    Canon = B.CreateBitCast(B.getInt16(0x7fff), T);
  return B.CreateSelect(IsNaN, Canon, X);
}

llvm::Value *saturate(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *T = X->getType();
  // NaN -> +0, then clamp to [0, 1].
  llvm::Value *NotNaN = B.CreateSelect(B.CreateFCmpUNO(X, X), llvm::ConstantFP::get(T, 0.0), X);
  llvm::Value *Lo = B.CreateSelect(B.CreateFCmpOLT(NotNaN, llvm::ConstantFP::get(T, 0.0)), llvm::ConstantFP::get(T, 0.0), NotNaN);
  return B.CreateSelect(B.CreateFCmpOGT(Lo, llvm::ConstantFP::get(T, 1.0)), llvm::ConstantFP::get(T, 1.0), Lo);
}

const char *roundingSuffix(const ptx::Instruction &I) {
  if (I.has(Modifier::Rz))
    return "rz";
  if (I.has(Modifier::Rm))
    return "rm";
  if (I.has(Modifier::Rp))
    return "rp";
  return nullptr;
}

} // namespace

bool ptxforge::codegen::detail::lowerFloat(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  if (T != ScalarType::F32 && T != ScalarType::F64)
    return false;
  if (I.typeCount() != 1)
    return false;
  auto &Ops = I.Operands;
  bool Ftz = I.has(Modifier::Ftz) && T == ScalarType::F32;
  auto in = [&](unsigned K) {
    llvm::Value *X = L.readFloat(Ops[K], T);
    return Ftz ? flushDenormal(L, X) : X;
  };
  auto finish = [&](llvm::Value *R, bool Canon = true) {
    if (Ftz)
      R = flushDenormal(L, R);
    if (I.has(Modifier::Sat))
      R = saturate(L, R);
    if (Canon)
      R = canonicalizeNaN(L, R);
    L.write(Ops[0], T, R);
    return true;
  };
  const char *Round = roundingSuffix(I);
  auto directed = [&](const char *Op, std::vector<llvm::Value *> Args) {
    std::string Name = std::string("ptxrt_") + Op + "_" + Round + (T == ScalarType::F32 ? "_f32" : "_f64");
    return L.callHelper(Name, L.floatType(T), Args);
  };
  switch (I.Op) {
  case Opcode::Add:
    return finish(Round ? directed("add", {in(1), in(2)}) : B.CreateFAdd(in(1), in(2)));
  case Opcode::Sub:
    return finish(Round ? directed("sub", {in(1), in(2)}) : B.CreateFSub(in(1), in(2)));
  case Opcode::Mul:
    return finish(Round ? directed("mul", {in(1), in(2)}) : B.CreateFMul(in(1), in(2)));
  case Opcode::Fma:
  case Opcode::Mad: {
    llvm::Value *A = in(1), *Bv = in(2), *C = in(3);
    if (Round)
      return finish(directed("fma", {A, Bv, C}));
    return finish(B.CreateIntrinsic(llvm::Intrinsic::fma, {A->getType()}, {A, Bv, C}));
  }
  case Opcode::Div:
    if (I.has(Modifier::Approx) || I.has(Modifier::Full))
      return finish(B.CreateFDiv(in(1), in(2)));
    return finish(Round ? directed("div", {in(1), in(2)}) : B.CreateFDiv(in(1), in(2)));
  case Opcode::Neg:
    return finish(B.CreateFNeg(in(1)), /*Canon=*/true);
  case Opcode::Abs:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, in(1)), /*Canon=*/true);
  case Opcode::Copysign: {
    // copysign keeps the payload of a NaN (observed on the GPU).
    llvm::Value *R = B.CreateCopySign(L.readFloat(Ops[2], T), L.readFloat(Ops[1], T));
    L.write(Ops[0], T, R);
    return true;
  }
  case Opcode::Min:
  case Opcode::Max: {
    if (Ops.size() != 3 || I.has(Modifier::Xorsign))
      return false;
    llvm::Value *A = in(1), *Bv = in(2);
    bool PropagateNaN = I.has(Modifier::NaN);
    llvm::Intrinsic::ID ID = I.Op == Opcode::Min ? (PropagateNaN ? llvm::Intrinsic::minimum : llvm::Intrinsic::minimumnum)
                                                 : (PropagateNaN ? llvm::Intrinsic::maximum : llvm::Intrinsic::maximumnum);
    return finish(B.CreateBinaryIntrinsic(ID, A, Bv));
  }
  case Opcode::Sqrt:
    if (Round)
      return finish(directed("sqrt", {in(1)}));
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, in(1)));
  case Opcode::Rcp:
    if (Round)
      return finish(directed("div", {llvm::ConstantFP::get(L.floatType(T), 1.0), in(1)}));
    return finish(B.CreateFDiv(llvm::ConstantFP::get(L.floatType(T), 1.0), in(1)));
  case Opcode::Rsqrt:
    return finish(B.CreateFDiv(llvm::ConstantFP::get(L.floatType(T), 1.0),
                               B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, in(1))));
  case Opcode::Ex2:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, in(1)));
  case Opcode::Lg2:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::log2, in(1)));
  case Opcode::Sin:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::sin, in(1)));
  case Opcode::Cos:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::cos, in(1)));
  case Opcode::Tanh:
    return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::tanh, in(1)));
  case Opcode::Testp: {
    llvm::Value *X = L.readFloat(Ops[1], T);
    llvm::Value *Abs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, X);
    llvm::Type *FT = X->getType();
    llvm::Value *Inf = llvm::ConstantFP::getInfinity(FT);
    llvm::Value *MinNorm = llvm::ConstantFP::get(FT, llvm::APFloat::getSmallestNormalized(FT->getFltSemantics()));
    llvm::Value *R;
    if (I.has(Modifier::Finite))
      R = B.CreateFCmpOLT(Abs, Inf);
    else if (I.has(Modifier::Infinite))
      R = B.CreateFCmpOEQ(Abs, Inf);
    else if (I.has(Modifier::Number))
      R = B.CreateFCmpORD(X, X);
    else if (I.has(Modifier::Notanumber))
      R = B.CreateFCmpUNO(X, X);
    else if (I.has(Modifier::Normal))
      R = B.CreateAnd(B.CreateFCmpOGE(Abs, MinNorm), B.CreateFCmpOLT(Abs, Inf));
    else if (I.has(Modifier::Subnormal))
      R = B.CreateAnd(B.CreateFCmpOLT(Abs, MinNorm), B.CreateFCmpONE(Abs, llvm::ConstantFP::get(FT, 0.0)));
    else
      return false;
    L.write(Ops[0], ScalarType::Pred, R);
    return true;
  }
  default:
    return false;
  }
}
