// Integer and logic instructions, comparisons and selects: add/sub/mul/mad (lo, hi, wide), div/rem, min/max,
// bit operations, shifts, setp/selp.
#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

namespace {

bool isSigned(ScalarType T) { return ptx::kindOf(T) == ptx::TypeKind::Signed; }

ScalarType widened(ScalarType T) {
  switch (T) {
  case ScalarType::U16: return ScalarType::U32;
  case ScalarType::S16: return ScalarType::S32;
  case ScalarType::U32: return ScalarType::U64;
  case ScalarType::S32: return ScalarType::S64;
  default: return T;
  }
}

/// The product a*b of mul/mad: .lo (low half), .hi (high half) or .wide (double width).
llvm::Value *product(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *A, llvm::Value *Bv,
                     ScalarType T, ScalarType &ResultType) {
  auto &B = L.b();
  unsigned W = ptx::bitWidth(T);
  ResultType = T;
  if (I.has(Modifier::Wide) || I.has(Modifier::Hi)) {
    llvm::Type *Wide = B.getIntNTy(2 * W);
    llvm::Value *P = isSigned(T) ? B.CreateMul(B.CreateSExt(A, Wide), B.CreateSExt(Bv, Wide))
                                 : B.CreateMul(B.CreateZExt(A, Wide), B.CreateZExt(Bv, Wide));
    if (I.has(Modifier::Wide)) {
      ResultType = widened(T);
      return P;
    }
    return B.CreateTrunc(B.CreateLShr(P, W), B.getIntNTy(W));
  }
  return B.CreateMul(A, Bv);
}

llvm::Value *saturateAdd(FunctionLowering &L, llvm::Value *A, llvm::Value *Bv, bool Sub) {
  auto &B = L.b();
  return B.CreateBinaryIntrinsic(Sub ? llvm::Intrinsic::ssub_sat : llvm::Intrinsic::sadd_sat, A, Bv);
}

llvm::Value *compare(FunctionLowering &L, const ptx::Instruction &I, ScalarType T, const ptx::Operand &OA,
                     const ptx::Operand &OB, bool &Ok) {
  auto &B = L.b();
  Ok = true;
  static const std::pair<Modifier, int> Ops[] = {
      {Modifier::Eq, 0}, {Modifier::Ne, 1}, {Modifier::Lt, 2}, {Modifier::Le, 3}, {Modifier::Gt, 4},
      {Modifier::Ge, 5}, {Modifier::Lo, 6}, {Modifier::Ls, 7}, {Modifier::Hi, 8}, {Modifier::Hs, 9},
      {Modifier::Equ, 10}, {Modifier::Neu, 11}, {Modifier::Ltu, 12}, {Modifier::Leu, 13}, {Modifier::Gtu, 14},
      {Modifier::Geu, 15}, {Modifier::Num, 16}, {Modifier::Nan, 17}};
  int Op = -1;
  for (auto [M, K] : Ops)
    if (I.has(M))
      Op = K;
  if (Op < 0) {
    Ok = false;
    return nullptr;
  }
  if (ptx::isFloat(T) && T != ScalarType::F16 && T != ScalarType::BF16) {
    llvm::Value *A = L.readFloat(OA, T), *Bv = L.readFloat(OB, T);
    if (I.has(Modifier::Ftz)) {
      A = flushDenormal(L, A);
      Bv = flushDenormal(L, Bv);
    }
    using P = llvm::CmpInst::Predicate;
    static const P Preds[] = {P::FCMP_OEQ, P::FCMP_ONE, P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE,
                              P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE, P::FCMP_UEQ, P::FCMP_UNE,
                              P::FCMP_ULT, P::FCMP_ULE, P::FCMP_UGT, P::FCMP_UGE, P::FCMP_ORD, P::FCMP_UNO};
    return B.CreateFCmp(Preds[Op], A, Bv);
  }
  if (ptx::isFloat(T) || ptx::kindOf(T) == ptx::TypeKind::Packed) {
    Ok = false;
    return nullptr;
  }
  llvm::Value *A = L.read(OA, T), *Bv = L.read(OB, T);
  bool S = isSigned(T);
  using P = llvm::CmpInst::Predicate;
  P Pr;
  switch (Op) {
  case 0: Pr = P::ICMP_EQ; break;
  case 1: Pr = P::ICMP_NE; break;
  case 2: Pr = S ? P::ICMP_SLT : P::ICMP_ULT; break;
  case 3: Pr = S ? P::ICMP_SLE : P::ICMP_ULE; break;
  case 4: Pr = S ? P::ICMP_SGT : P::ICMP_UGT; break;
  case 5: Pr = S ? P::ICMP_SGE : P::ICMP_UGE; break;
  case 6: Pr = P::ICMP_ULT; break;
  case 7: Pr = P::ICMP_ULE; break;
  case 8: Pr = P::ICMP_UGT; break;
  case 9: Pr = P::ICMP_UGE; break;
  default: Ok = false; return nullptr;
  }
  return B.CreateICmp(Pr, A, Bv);
}

/// setp/set combine: `.and/.or/.xor` with a predicate operand c.
llvm::Value *combine(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *R, const ptx::Operand *C) {
  auto &B = L.b();
  if (!C)
    return R;
  llvm::Value *CV = L.read(*C, ScalarType::Pred);
  if (I.has(Modifier::And))
    return B.CreateAnd(R, CV);
  if (I.has(Modifier::Or))
    return B.CreateOr(R, CV);
  if (I.has(Modifier::Xor))
    return B.CreateXor(R, CV);
  return R;
}

} // namespace

llvm::Value *ptxforge::codegen::detail::flushDenormal(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *T = X->getType();
  llvm::Value *Abs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, X);
  const llvm::fltSemantics &Sem = T->getFltSemantics();
  llvm::Value *Tiny = B.CreateFCmpOLT(Abs, llvm::ConstantFP::get(T, llvm::APFloat::getSmallestNormalized(Sem)));
  llvm::Value *Zero = B.CreateCopySign(llvm::ConstantFP::get(T, 0.0), X);
  return B.CreateSelect(Tiny, Zero, X);
}

bool ptxforge::codegen::detail::lowerInteger(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  bool IntType = ptx::isInteger(T) || T == ScalarType::Pred;
  auto &Ops = I.Operands;
  switch (I.Op) {
  case Opcode::Setp: {
    bool Ok;
    llvm::Value *R = compare(L, I, T, Ops[1], Ops[2], Ok);
    if (!Ok)
      return L.unsupported(I);
    const ptx::Operand *C = Ops.size() > 3 ? &Ops[3] : nullptr;
    if (Ops[0].Kind == ptx::OperandKind::RegPair) {
      ptx::Operand P = Ops[0], Q = Ops[0];
      P.Kind = Q.Kind = ptx::OperandKind::Register;
      Q.Reg = Ops[0].Reg2;
      L.write(P, ScalarType::Pred, combine(L, I, R, C));
      L.write(Q, ScalarType::Pred, combine(L, I, B.CreateNot(R), C));
    } else {
      L.write(Ops[0], ScalarType::Pred, combine(L, I, R, C));
    }
    return true;
  }
  case Opcode::Selp: {
    llvm::Value *C = L.read(Ops[3], ScalarType::Pred);
    L.write(Ops[0], T, B.CreateSelect(C, L.read(Ops[1], T), L.read(Ops[2], T)));
    return true;
  }
  default:
    break;
  }
  if (!IntType)
    return false;
  auto bin = [&](auto Fn) {
    L.write(Ops[0], T, Fn(L.read(Ops[1], T), L.read(Ops[2], T)));
    return true;
  };
  switch (I.Op) {
  case Opcode::Add:
    if (I.has(Modifier::Cc))
      return false; // carry chains: lowered with the extended-precision family
    if (I.has(Modifier::Sat))
      return bin([&](auto *A, auto *Bv) { return saturateAdd(L, A, Bv, false); });
    return bin([&](auto *A, auto *Bv) { return B.CreateAdd(A, Bv); });
  case Opcode::Sub:
    if (I.has(Modifier::Cc))
      return false;
    if (I.has(Modifier::Sat))
      return bin([&](auto *A, auto *Bv) { return saturateAdd(L, A, Bv, true); });
    return bin([&](auto *A, auto *Bv) { return B.CreateSub(A, Bv); });
  case Opcode::Mul: {
    ScalarType RT;
    llvm::Value *P = product(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T, RT);
    L.write(Ops[0], RT, P);
    return true;
  }
  case Opcode::Mad: {
    if (I.has(Modifier::Cc) || I.has(Modifier::Sat))
      return false;
    ScalarType RT;
    llvm::Value *P = product(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T, RT);
    L.write(Ops[0], RT, B.CreateAdd(P, L.read(Ops[3], RT)));
    return true;
  }
  case Opcode::And:
    return bin([&](auto *A, auto *Bv) { return B.CreateAnd(A, Bv); });
  case Opcode::Or:
    return bin([&](auto *A, auto *Bv) { return B.CreateOr(A, Bv); });
  case Opcode::Xor:
    return bin([&](auto *A, auto *Bv) { return B.CreateXor(A, Bv); });
  case Opcode::Not:
    L.write(Ops[0], T, B.CreateNot(L.read(Ops[1], T)));
    return true;
  case Opcode::Cnot: {
    llvm::Value *X = L.read(Ops[1], T);
    L.write(Ops[0], T, B.CreateZExt(B.CreateICmpEQ(X, llvm::ConstantInt::get(X->getType(), 0)), X->getType()));
    return true;
  }
  case Opcode::Neg:
    L.write(Ops[0], T, B.CreateNeg(L.read(Ops[1], T)));
    return true;
  case Opcode::Abs: {
    llvm::Value *X = L.read(Ops[1], T);
    L.write(Ops[0], T, B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, X, B.getFalse()));
    return true;
  }
  case Opcode::Min:
  case Opcode::Max: {
    if (Ops.size() != 3)
      return false;
    bool S = isSigned(T);
    llvm::Intrinsic::ID ID = I.Op == Opcode::Min ? (S ? llvm::Intrinsic::smin : llvm::Intrinsic::umin)
                                                 : (S ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
    return bin([&](auto *A, auto *Bv) { return B.CreateBinaryIntrinsic(ID, A, Bv); });
  }
  case Opcode::Shl:
  case Opcode::Shr: {
    llvm::Value *X = L.read(Ops[1], T);
    llvm::Value *N = B.CreateZExtOrTrunc(L.read(Ops[2], ScalarType::U32), X->getType());
    unsigned W = X->getType()->getIntegerBitWidth();
    llvm::Value *Over = B.CreateICmpUGE(N, llvm::ConstantInt::get(X->getType(), W));
    // PTX clamps shift amounts past the width (x86 masks them).
    llvm::Value *R;
    if (I.Op == Opcode::Shl)
      R = B.CreateSelect(Over, llvm::ConstantInt::get(X->getType(), 0), B.CreateShl(X, N));
    else if (isSigned(T))
      R = B.CreateAShr(X, B.CreateSelect(Over, llvm::ConstantInt::get(X->getType(), W - 1), N));
    else
      R = B.CreateSelect(Over, llvm::ConstantInt::get(X->getType(), 0), B.CreateLShr(X, N));
    L.write(Ops[0], T, R);
    return true;
  }
  case Opcode::Div:
  case Opcode::Rem: {
    llvm::Value *A = L.read(Ops[1], T), *Bv = L.read(Ops[2], T);
    llvm::Type *Ty = A->getType();
    llvm::Value *Zero = llvm::ConstantInt::get(Ty, 0);
    llvm::Value *IsZero = B.CreateICmpEQ(Bv, Zero);
    // x86 division faults on /0 and INT_MIN/-1; the GPU returns values (all ones / INT_MIN, and 0 for rem).
    llvm::Value *SafeB = B.CreateSelect(IsZero, llvm::ConstantInt::get(Ty, 1), Bv);
    llvm::Value *R;
    if (isSigned(T)) {
      llvm::Value *Ovf = B.CreateAnd(B.CreateICmpEQ(A, llvm::ConstantInt::get(Ty, llvm::APInt::getSignedMinValue(Ty->getIntegerBitWidth()))),
                                     B.CreateICmpEQ(Bv, llvm::ConstantInt::get(Ty, -1, true)));
      SafeB = B.CreateSelect(Ovf, llvm::ConstantInt::get(Ty, 1), SafeB);
      if (I.Op == Opcode::Div) {
        R = B.CreateSDiv(A, SafeB);
        R = B.CreateSelect(IsZero, B.CreateSelect(B.CreateICmpSLT(A, Zero), llvm::ConstantInt::get(Ty, 1),
                                                  llvm::ConstantInt::get(Ty, -1, true)),
                           R);
      } else {
        R = B.CreateSRem(A, SafeB);
        R = B.CreateSelect(Ovf, Zero, B.CreateSelect(IsZero, A, R));
      }
    } else {
      R = I.Op == Opcode::Div ? B.CreateUDiv(A, SafeB) : B.CreateURem(A, SafeB);
      R = B.CreateSelect(IsZero, I.Op == Opcode::Div ? llvm::ConstantInt::get(Ty, -1, true) : A, R);
    }
    L.write(Ops[0], T, R);
    return true;
  }
  case Opcode::Popc:
  case Opcode::Clz: {
    llvm::Value *X = L.read(Ops[1], T);
    llvm::Value *R = I.Op == Opcode::Popc ? B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, X)
                                          : B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, X, B.getFalse());
    L.write(Ops[0], ScalarType::U32, B.CreateZExtOrTrunc(R, B.getInt32Ty()));
    return true;
  }
  case Opcode::Brev:
    L.write(Ops[0], T, B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, L.read(Ops[1], T)));
    return true;
  default:
    return false;
  }
}
