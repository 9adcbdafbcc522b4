// See Passes.h: the quick tier's last IR pass, which rewrites what x86's fast instruction selector cannot select
// into forms it can, with the same results bit for bit.
//
// Before:
//   %m = call float @llvm.fma.f32(float %a, float %b, float %c)
//   %u = call i32 @llvm.umax.i32(i32 %x, i32 %y)
//   %f = call float @llvm.fabs.f32(float %v)
// After:
//   %m = call float @fmaf(float %a, float %b, float %c)      ; the C library's, one rounding as the hardware's
//   %0 = icmp ugt i32 %x, %y
//   %u = select i1 %0, i32 %x, i32 %y
//   %1 = bitcast float %v to i32
//   %2 = and i32 %1, 2147483647
//   %f = bitcast i32 %2 to float
#include "Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

/// The C library's function Name of type FT (declared where the module lacks it), or null where the module holds
/// something else by that name. The JIT resolves it in the process (CompiledModule.cpp: libm).
FunctionCallee libraryFunction(Module &M, StringRef Name, FunctionType *FT) {
  if (Function *F = M.getFunction(Name))
    return F->isDeclaration() && F->getFunctionType() == FT ? FunctionCallee(F) : FunctionCallee();
  Function *F = Function::Create(FT, GlobalValue::ExternalLinkage, Name, M);
  F->setDoesNotThrow();
  F->setWillReturn();
  return F;
}

/// A call of the float (f32) or double (f64) variant of the C library function, or null for other types.
Value *callLibrary(IRBuilder<> &B, IntrinsicInst &II, StringRef FloatName, StringRef DoubleName) {
  Type *Ty = II.getType();
  if (!Ty->isFloatTy() && !Ty->isDoubleTy())
    return nullptr;
  SmallVector<Value *, 3> Args(II.arg_begin(), II.arg_end());
  SmallVector<Type *, 3> Types(Args.size(), Ty);
  FunctionCallee F = libraryFunction(*II.getModule(), Ty->isFloatTy() ? FloatName : DoubleName,
                                     FunctionType::get(Ty, Types, /*isVarArg=*/false));
  if (!F)
    return nullptr;
  CallInst *C = B.CreateCall(F, Args);
  C->setDoesNotThrow();
  return C;
}

/// The integer of V's bits (float or double).
Value *bitsOf(IRBuilder<> &B, Value *V) { return B.CreateBitCast(V, B.getIntNTy(V->getType()->getScalarSizeInBits())); }

/// The sign bit of a float or double's integer.
APInt signBit(Type *Ty) { return APInt::getSignMask(Ty->getScalarSizeInBits()); }

/// fabs and copysign as the bit operations they are: the sign bit cleared, or taken from the second operand (NaNs
/// keep their payloads, as the SSE and/andn/or sequence that selection makes keeps them).
Value *signOperation(IRBuilder<> &B, IntrinsicInst &II) {
  Type *Ty = II.getType();
  Value *Mag = B.CreateAnd(bitsOf(B, II.getArgOperand(0)), ~signBit(Ty));
  if (II.getIntrinsicID() == Intrinsic::copysign)
    Mag = B.CreateOr(Mag, B.CreateAnd(bitsOf(B, II.getArgOperand(1)), signBit(Ty)));
  return B.CreateBitCast(Mag, Ty);
}

/// minnum(a, b) and maxnum(a, b) as x86's selection makes them (X86ISelLowering's FMINNUM lowering: min/max with
/// b first, then a NaN test of a): a NaN a gives b, a NaN b gives a, equal operands (+0 and -0) give a. So the
/// result matches the selector's bit for bit, and is one LLVM's semantics allow.
Value *minMaxNum(IRBuilder<> &B, IntrinsicInst &II) {
  Value *A = II.getArgOperand(0), *Bv = II.getArgOperand(1);
  bool Min = II.getIntrinsicID() == Intrinsic::minnum;
  Value *BFirst = B.CreateFCmp(Min ? CmpInst::FCMP_OLT : CmpInst::FCMP_OGT, Bv, A);
  Value *Chosen = B.CreateSelect(BFirst, Bv, A);
  return B.CreateSelect(B.CreateFCmpUNO(A, A), Bv, Chosen);
}

/// What FastISel can select in place of II, or null where II stays (vectors, other types, other intrinsics).
Value *selectableForm(IRBuilder<> &B, IntrinsicInst &II) {
  Type *Ty = II.getType();
  if (Ty->isVectorTy())
    return nullptr;
  switch (II.getIntrinsicID()) {
  case Intrinsic::fma:
    // fmaf/fma round once, as llvm.fma must (glibc picks the FMA instruction where the CPU has it). Of several NaN
    // inputs the instruction returns the first in its operand order, which SelectionDAG picks per use (213, 231,
    // 132 forms) and glibc fixes: that payload may differ. No PTX result shows it: the lowering replaces a NaN
    // result by the GPU's (FloatOps.cpp: nanResult) unless no reader sees payloads (NaNPayload.cpp).
    return callLibrary(B, II, "fmaf", "fma");
  case Intrinsic::roundeven:
    // Rounds to nearest-even whatever the rounding mode, as roundss $8 does; rint would follow the mode.
    return callLibrary(B, II, "roundevenf", "roundeven");
  case Intrinsic::smin:
  case Intrinsic::smax:
  case Intrinsic::umin:
  case Intrinsic::umax: {
    auto *MM = cast<MinMaxIntrinsic>(&II);
    Value *L = MM->getLHS(), *R = MM->getRHS();
    return B.CreateSelect(B.CreateICmp(MM->getPredicate(), L, R), L, R);
  }
  case Intrinsic::fabs:
  case Intrinsic::copysign:
    return Ty->isFloatTy() || Ty->isDoubleTy() ? signOperation(B, II) : nullptr;
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
    return Ty->isFloatTy() || Ty->isDoubleTy() ? minMaxNum(B, II) : nullptr;
  default:
    return nullptr;
  }
}

/// A float or double select on a compare of another floating-point type (`fcmp double` choosing between floats):
/// FastISel's SSE select wants the compare's type, and gives up on the whole block above it. The same select of
/// the operands' bits is an integer select, which it takes.
Value *integerSelect(IRBuilder<> &B, SelectInst &S) {
  Type *Ty = S.getType();
  auto *Cmp = dyn_cast<FCmpInst>(S.getCondition());
  if (!Cmp || !(Ty->isFloatTy() || Ty->isDoubleTy()) || Cmp->getOperand(0)->getType() == Ty)
    return nullptr;
  Value *Bits = B.CreateSelect(Cmp, bitsOf(B, S.getTrueValue()), bitsOf(B, S.getFalseValue()));
  return B.CreateBitCast(Bits, Ty);
}

/// Whether Ty is a 16-bit floating-point type (half, bfloat), which FastISel neither converts nor moves.
bool isHalfType(Type *Ty) { return Ty->isHalfTy() || Ty->isBFloatTy(); }

/// float's bits to half's, rounded to nearest-even as vcvtss2sh and vcvtps2ph do under the default rounding mode
/// (the JIT's code always runs in it: the rounding helpers restore it). NaNs keep the top of their payload, made
/// quiet, as the instructions keep it. Values under half's smallest normal round through a float add, which is
/// exact but for the rounding wanted (F. Giesen's float_to_half_fast3_rtne).
Value *halfBitsOfFloat(IRBuilder<> &B, Value *X) {
  Type *I32 = B.getInt32Ty();
  Value *Bits = B.CreateBitCast(X, I32);
  Value *Sign = B.CreateAnd(Bits, 0x80000000u);
  Value *Abs = B.CreateAnd(Bits, 0x7fffffffu);
  // NaN: quiet bit set, payload's top bits kept; at or over 65536 (and infinity): infinity.
  Value *Nan = B.CreateOr(B.CreateAnd(B.CreateLShr(Abs, 13), 0x3ff), 0x7e00);
  Value *Big = B.CreateSelect(B.CreateICmpUGT(Abs, B.getInt32(0x7f800000)), Nan, B.getInt32(0x7c00));
  // Under 2^-14: adding 0.5 leaves the half's subnormal bits at the bottom, rounded by the add.
  Value *Half = B.CreateBitCast(B.getInt32(0x3f000000), B.getFloatTy());
  Value *Sum = B.CreateFAdd(B.CreateBitCast(Abs, B.getFloatTy()), Half);
  Value *Small = B.CreateSub(B.CreateBitCast(Sum, I32), B.getInt32(0x3f000000));
  // Normal: rebias the exponent, round to nearest-even by adding 0xfff plus the kept mantissa's low bit.
  Value *Odd = B.CreateAnd(B.CreateLShr(Abs, 13), 1);
  Value *Rounded = B.CreateAdd(B.CreateAdd(Abs, B.getInt32(0xc8000fffu)), Odd);
  Value *Normal = B.CreateLShr(Rounded, 13);
  Value *Result = B.CreateSelect(B.CreateICmpULT(Abs, B.getInt32(0x38800000)), Small, Normal);
  Result = B.CreateSelect(B.CreateICmpUGE(Abs, B.getInt32(0x47800000)), Big, Result);
  return B.CreateTrunc(B.CreateOr(Result, B.CreateLShr(Sign, 16)), B.getInt16Ty());
}

/// The 16 bits of V, a half or bfloat, where FastISel can have them without the type: a load's as an i16 load, a
/// bitcast's source, a float's rounded to half; null otherwise. Made once per V (Made), where V is.
Value *int16Of(Value *V, DenseMap<Value *, Value *> &Made) {
  if (auto *Cast = dyn_cast<BitCastInst>(V); Cast && Cast->getSrcTy()->isIntegerTy(16))
    return Cast->getOperand(0);
  if (Value *Known = Made.lookup(V))
    return Known;
  Value *Bits = nullptr;
  if (auto *L = dyn_cast<LoadInst>(V); L && L->isSimple()) {
    IRBuilder<> AtLoad(L);
    LoadInst *Load = AtLoad.CreateAlignedLoad(AtLoad.getInt16Ty(), L->getPointerOperand(), L->getAlign());
    Load->copyMetadata(*L);
    Bits = Load;
  } else if (auto *T = dyn_cast<FPTruncInst>(V); T && T->getType()->isHalfTy() && T->getSrcTy()->isFloatTy()) {
    IRBuilder<> AtTrunc(T);
    Bits = halfBitsOfFloat(AtTrunc, T->getOperand(0));
  }
  if (Bits)
    Made[V] = Bits;
  return Bits;
}

/// A half's bits (in an i32) widened to float's, as vcvtsh2ss and vcvtph2ps widen them (exactly; a signaling NaN
/// made quiet). A subnormal half is its mantissa times 2^-24, exact in float.
Value *floatBitsOfHalf(IRBuilder<> &B, Value *H) {
  Value *Sign = B.CreateShl(B.CreateAnd(H, 0x8000), 16);
  Value *Exponent = B.CreateAnd(H, 0x7c00);
  Value *Mantissa = B.CreateAnd(H, 0x3ff);
  Value *Shifted = B.CreateShl(B.CreateAnd(H, 0x7fff), 13);
  Value *Normal = B.CreateAdd(Shifted, B.getInt32(112u << 23));
  Value *Quiet = B.CreateSelect(B.CreateICmpNE(Mantissa, B.getInt32(0)), B.getInt32(0x400000), B.getInt32(0));
  Value *Special = B.CreateOr(B.CreateAdd(Shifted, B.getInt32(224u << 23)), Quiet);
  Value *Scaled = B.CreateFMul(B.CreateSIToFP(Mantissa, B.getFloatTy()), ConstantFP::get(B.getFloatTy(), 0x1p-24));
  Value *Subnormal = B.CreateBitCast(Scaled, B.getInt32Ty());
  Value *Magnitude = B.CreateSelect(B.CreateICmpEQ(Exponent, B.getInt32(0x7c00)), Special, Normal);
  Magnitude = B.CreateSelect(B.CreateICmpEQ(Exponent, B.getInt32(0)), Subnormal, Magnitude);
  return B.CreateOr(Sign, Magnitude);
}

/// fpext of a half or bfloat, and a bitcast of one to i16, done on its bits (see int16Of); bfloat is float's top
/// half, so widening it is a shift.
Value *halfConversion(IRBuilder<> &B, CastInst &C, DenseMap<Value *, Value *> &Made) {
  Value *Src = C.getOperand(0);
  if (!isHalfType(Src->getType()))
    return nullptr;
  bool Widen = isa<FPExtInst>(C) && (C.getType()->isFloatTy() || C.getType()->isDoubleTy());
  if (!Widen && !(isa<BitCastInst>(C) && C.getType()->isIntegerTy(16)))
    return nullptr;
  Value *Bits = int16Of(Src, Made);
  if (!Bits || !Widen)
    return Bits;
  Value *Wide = B.CreateZExt(Bits, B.getInt32Ty());
  Wide = Src->getType()->isBFloatTy() ? B.CreateShl(Wide, 16) : floatBitsOfHalf(B, Wide);
  Value *F = B.CreateBitCast(Wide, B.getFloatTy());
  return C.getType()->isDoubleTy() ? B.CreateFPExt(F, C.getType()) : F;
}

/// Rewrites I where selectableForm, integerSelect or halfConversion has a form for it.
class Rewriter {
public:
  bool rewrite(Instruction &I) {
    IRBuilder<> B(&I);
    Value *New = nullptr;
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      New = selectableForm(B, *II);
    else if (auto *S = dyn_cast<SelectInst>(&I))
      New = integerSelect(B, *S);
    else if (auto *C = dyn_cast<CastInst>(&I); C && (New = halfConversion(B, *C, Int16s)))
      Dead.push_back(C->getOperand(0)); // the half's load or conversion, read as bits now
    if (!New)
      return false;
    if (isa<Instruction>(New))
      New->takeName(&I);
    I.replaceAllUsesWith(New);
    I.eraseFromParent();
    return true;
  }
  /// Deletes the half values that nothing reads any more.
  void deleteDead() { RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead); }

private:
  DenseMap<Value *, Value *> Int16s; // int16Of's
  SmallVector<WeakTrackingVH, 16> Dead;
};

} // namespace

PreservedAnalyses ptxforge::codegen::passes::FastISelFormsPass::run(Function &F, FunctionAnalysisManager &) {
  SmallVector<Instruction *, 64> Candidates;
  for (Instruction &I : instructions(F))
    if (isa<IntrinsicInst>(I) || isa<SelectInst>(I) || isa<CastInst>(I))
      Candidates.push_back(&I);
  bool Changed = false;
  Rewriter R;
  for (Instruction *I : Candidates)
    Changed |= R.rewrite(*I);
  R.deleteDead();
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
