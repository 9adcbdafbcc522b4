// f32 arithmetic with a directed rounding mode (.rz/.rm/.rp) in plain IR, so it inlines and vectorizes like
// the round-to-nearest forms (a runtime helper that switches the host rounding mode is a call per element and
// keeps the loop around it scalar). The operation runs in double and is made round-to-odd from its exact error
// term; rounding a round-to-odd result of 53 bits to 24 bits gives the correctly rounded result in any mode
// (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
// IEEE TC 2008). The narrowing itself rounds to nearest and then steps one ulp where that went the wrong way.
#include "FamilyLowering.h"

namespace {

/// S made round-to-odd: when the exact result differs from S by Err (non-zero, finite) and S is even, S moves
/// one ulp toward the exact result.
llvm::Value *roundToOdd(llvm::IRBuilderBase &B, llvm::Value *S, llvm::Value *Err) {
  llvm::Type *I64 = B.getInt64Ty();
  llvm::Value *Bits = B.CreateBitCast(S, I64);
  llvm::Value *Inexact = B.CreateFCmpONE(Err, llvm::ConstantFP::get(S->getType(), 0.0));
  llvm::Value *Even = B.CreateICmpEQ(B.CreateAnd(Bits, 1), B.getInt64(0));
  // Sign-magnitude: +1 on the bits grows the magnitude, -1 shrinks it.
  llvm::Value *Away =
      B.CreateICmpEQ(B.CreateICmpSLT(Bits, B.getInt64(0)), B.CreateICmpSLT(B.CreateBitCast(Err, I64), B.getInt64(0)));
  llvm::Value *Moved = B.CreateAdd(Bits, B.CreateSelect(Away, B.getInt64(1), B.getInt64(-1)));
  return B.CreateBitCast(B.CreateSelect(B.CreateAnd(Inexact, Even), Moved, Bits), S->getType());
}

/// A round-to-odd double rounded to f32 in Mode.
llvm::Value *narrow(llvm::IRBuilderBase &B, llvm::Value *S, llvm::StringRef Mode) {
  llvm::Type *I32 = B.getInt32Ty();
  llvm::Value *F = B.CreateFPTrunc(S, B.getFloatTy());
  llvm::Value *Back = B.CreateFPExt(F, S->getType());
  llvm::Value *Bits = B.CreateBitCast(F, I32);
  llvm::Value *Positive = B.CreateICmpSGE(Bits, B.getInt32(0));
  llvm::Value *Plus = B.CreateAdd(Bits, B.getInt32(1)), *Minus = B.CreateSub(Bits, B.getInt32(1));
  llvm::Value *Wrong, *Stepped;
  if (Mode == "rm") {
    Wrong = B.CreateFCmpOGT(Back, S);
    Stepped = B.CreateSelect(Positive, Minus, Plus);
  } else if (Mode == "rp") {
    Wrong = B.CreateFCmpOLT(Back, S);
    Stepped = B.CreateSelect(Positive, Plus, Minus);
  } else { // rz: one step toward zero, whatever the sign
    Wrong = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Back),
                            B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, S));
    Stepped = Minus;
  }
  return B.CreateBitCast(B.CreateSelect(Wrong, Stepped, Bits), B.getFloatTy());
}

} // namespace

llvm::Value *ptxforge::codegen::detail::directedF32(FunctionLowering &L, ptx::Opcode Op, llvm::StringRef Mode,
                                                    llvm::ArrayRef<llvm::Value *> Args) {
  auto &B = L.b();
  llvm::Type *D = B.getDoubleTy();
  std::vector<llvm::Value *> X;
  for (llvm::Value *A : Args)
    X.push_back(B.CreateFPExt(A, D));
  llvm::Value *Zero = llvm::ConstantFP::get(D, 0.0);
  auto fma = [&](llvm::Value *A, llvm::Value *Bv, llvm::Value *C) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {D}, {A, Bv, C});
  };
  // Knuth's TwoSum: the exact error of S = A + Bv.
  auto twoSum = [&](llvm::Value *A, llvm::Value *Bv, llvm::Value *S) {
    llvm::Value *BB = B.CreateFSub(S, A);
    return B.CreateFAdd(B.CreateFSub(A, B.CreateFSub(S, BB)), B.CreateFSub(Bv, BB));
  };
  llvm::Value *S, *Err;
  llvm::Value *AddendA = nullptr, *AddendB = nullptr; // the two terms of a sum
  switch (Op) {
  case ptx::Opcode::Mul: // 24 x 24 bits: exact in double
    S = B.CreateFMul(X[0], X[1]);
    Err = Zero;
    break;
  case ptx::Opcode::Add:
  case ptx::Opcode::Sub: {
    llvm::Value *Rhs = Op == ptx::Opcode::Sub ? B.CreateFNeg(X[1]) : X[1];
    S = B.CreateFAdd(X[0], Rhs);
    Err = twoSum(X[0], Rhs, S);
    AddendA = X[0], AddendB = Rhs;
    break;
  }
  case ptx::Opcode::Fma:
  case ptx::Opcode::Mad: {
    llvm::Value *P = B.CreateFMul(X[0], X[1]); // exact
    S = B.CreateFAdd(P, X[2]);
    Err = twoSum(P, X[2], S);
    AddendA = P, AddendB = X[2];
    break;
  }
  case ptx::Opcode::Div: {
    S = B.CreateFDiv(X[0], X[1]);
    // The remainder A - S*Bv is exact; the true quotient lies on its side of S times the sign of Bv.
    llvm::Value *R = fma(B.CreateFNeg(S), X[1], X[0]);
    Err = B.CreateCopySign(R, B.CreateFMul(R, X[1]));
    Err = B.CreateSelect(B.CreateFCmpONE(R, Zero), Err, Zero);
    break;
  }
  case ptx::Opcode::Sqrt:
    S = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, X[0]);
    Err = fma(B.CreateFNeg(S), S, X[0]); // A - S*S: positive when the true root is above S
    break;
  default:
    return nullptr;
  }
  llvm::Value *R = narrow(B, roundToOdd(B, S, Err), Mode);
  if (AddendA && Mode == "rm") {
    // An exact zero sum is -0 when rounding down, unless both terms are +0 (IEEE 754 6.3); the double sum
    // rounded to nearest made it +0.
    llvm::Type *I64 = B.getInt64Ty();
    llvm::Value *BothPlusZero =
        B.CreateICmpEQ(B.CreateOr(B.CreateBitCast(AddendA, I64), B.CreateBitCast(AddendB, I64)), B.getInt64(0));
    llvm::Value *NegZero = B.CreateAnd(B.CreateFCmpOEQ(S, Zero), B.CreateNot(BothPlusZero));
    R = B.CreateSelect(NegZero, llvm::ConstantFP::getNegativeZero(R->getType()), R);
  }
  return R;
}
