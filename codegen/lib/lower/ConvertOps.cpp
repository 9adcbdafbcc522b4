// cvt between integer and floating types with PTX rounding and saturation: float->int saturates and maps NaN
// to 0 (LLVM's fpto[su]i.sat), integer rounding modifiers pick the rounding of float->int and float->float
// round-to-integral; directed rounding of int->float and narrowing float->float goes through runtime helpers.
#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

namespace {

bool isSigned(ScalarType T) { return ptx::kindOf(T) == ptx::TypeKind::Signed; }

llvm::Value *roundIntegral(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *X) {
  auto &B = L.b();
  if (I.has(Modifier::Rni))
    return B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, X);
  if (I.has(Modifier::Rzi))
    return B.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, X);
  if (I.has(Modifier::Rmi))
    return B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, X);
  if (I.has(Modifier::Rpi))
    return B.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, X);
  return nullptr;
}

const char *directed(const ptx::Instruction &I) {
  if (I.has(Modifier::Rz))
    return "rz";
  if (I.has(Modifier::Rm))
    return "rm";
  if (I.has(Modifier::Rp))
    return "rp";
  return nullptr;
}

} // namespace

bool ptxforge::codegen::detail::lowerConvert(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Op != Opcode::Cvt || I.typeCount() != 2 || I.Operands.size() != 2)
    return false;
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  const ptx::Operand &Dst = I.Operands[0], &Src = I.Operands[1];
  llvm::Type *DF = L.floatType(D), *SF = L.floatType(S);
  bool Ftz = I.has(Modifier::Ftz);
  if ((ptx::isFloat(D) && !DF) || (ptx::isFloat(S) && !SF))
    return false; // tf32 / fp8 / fp4 forms: runtime helpers (not yet)

  if (SF && !DF) { // float -> int
    llvm::Value *X = L.readFloat(Src, S);
    if (Ftz)
      X = flushDenormal(L, X);
    if (X->getType()->isHalfTy() || X->getType()->isBFloatTy())
      X = B.CreateFPExt(X, B.getFloatTy());
    llvm::Value *R = roundIntegral(L, I, X);
    if (!R)
      return L.unsupported(I, "float-to-integer cvt needs .rni/.rzi/.rmi/.rpi");
    unsigned W = ptx::bitWidth(D);
    llvm::Type *IT = B.getIntNTy(W);
    llvm::Value *V = B.CreateIntrinsic(isSigned(D) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                       {IT, R->getType()}, {R});
    L.write(Dst, D, V);
    return true;
  }
  if (!SF && DF) { // int -> float
    llvm::Value *X = L.read(Src, S);
    if (const char *Mode = directed(I)) {
      std::string Name = std::string("ptxrt_cvt_") + Mode + "_" + ptx::spell(D).str() + "_" +
                         (isSigned(S) ? "s64" : "u64");
      llvm::Value *X64 = isSigned(S) ? B.CreateSExt(X, B.getInt64Ty()) : B.CreateZExt(X, B.getInt64Ty());
      L.write(Dst, D, L.callHelper(Name, DF, {X64}));
      return true;
    }
    llvm::Value *R = isSigned(S) ? B.CreateSIToFP(X, DF) : B.CreateUIToFP(X, DF);
    L.write(Dst, D, R);
    return true;
  }
  if (SF && DF) { // float -> float
    llvm::Value *X = L.readFloat(Src, S);
    if (Ftz && S == ScalarType::F32)
      X = flushDenormal(L, X);
    llvm::Value *R;
    if (D == S) {
      R = roundIntegral(L, I, X);
      if (!R)
        R = X;
    } else if (DF->getPrimitiveSizeInBits() > SF->getPrimitiveSizeInBits()) {
      R = B.CreateFPExt(X, DF);
    } else if (const char *Mode = directed(I)) {
      std::string Name = std::string("ptxrt_cvt_") + Mode + "_" + ptx::spell(D).str() + "_" + ptx::spell(S).str();
      R = L.callHelper(Name, DF, {X});
    } else {
      R = B.CreateFPTrunc(X, DF);
    }
    if (Ftz && D == ScalarType::F32)
      R = flushDenormal(L, R);
    if (I.has(Modifier::Sat)) {
      llvm::Value *Zero = llvm::ConstantFP::get(DF, 0.0), *One = llvm::ConstantFP::get(DF, 1.0);
      R = B.CreateSelect(B.CreateFCmpUNO(R, R), Zero, R);
      R = B.CreateSelect(B.CreateFCmpOLT(R, Zero), Zero, R);
      R = B.CreateSelect(B.CreateFCmpOGT(R, One), One, R);
    }
    L.write(Dst, D, R);
    return true;
  }
  // int -> int
  llvm::Value *X = L.read(Src, S);
  unsigned DW = ptx::bitWidth(D), SW = ptx::bitWidth(S);
  llvm::Type *DT = B.getIntNTy(DW);
  if (I.has(Modifier::Sat)) {
    // Clamp the source value to the destination's range.
    llvm::APInt Lo = isSigned(D) ? llvm::APInt::getSignedMinValue(DW) : llvm::APInt::getMinValue(DW);
    llvm::APInt Hi = isSigned(D) ? llvm::APInt::getSignedMaxValue(DW) : llvm::APInt::getMaxValue(DW);
    unsigned WW = std::max(DW, SW) + 1;
    llvm::Value *XW = isSigned(S) ? B.CreateSExt(X, B.getIntNTy(WW)) : B.CreateZExt(X, B.getIntNTy(WW));
    llvm::Value *LoW = B.getInt(isSigned(D) ? Lo.sext(WW) : Lo.zext(WW));
    llvm::Value *HiW = B.getInt(isSigned(D) ? Hi.sext(WW) : Hi.zext(WW));
    XW = B.CreateSelect(B.CreateICmpSLT(XW, LoW), LoW, XW);
    XW = B.CreateSelect(B.CreateICmpSGT(XW, HiW), HiW, XW);
    L.write(Dst, D, B.CreateTrunc(XW, DT));
    return true;
  }
  llvm::Value *R = DW > SW ? (isSigned(S) ? B.CreateSExt(X, DT) : B.CreateZExt(X, DT)) : B.CreateTrunc(X, DT);
  L.write(Dst, D, R);
  return true;
}
