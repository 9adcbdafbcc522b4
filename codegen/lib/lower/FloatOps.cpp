// Floating-point arithmetic on f32/f64: add/sub/mul/fma/mad/div, neg/abs/copysign, min/max (.NaN, .xorsign.abs,
// three inputs), sqrt/rcp/rsqrt, the .approx transcendental functions, testp, with .ftz and .sat, and the f32/f64
// comparison of setp/set (compareFloat; IntegerOps.cpp lowers the rest of those instructions). Directed
// rounding (.rz/.rm/.rp) is exact plain IR for f32 (DirectedRounding.cpp) and runtime helpers that switch the
// host rounding mode for f64. NaN results follow
// the GPU bit for bit (see nanResult). f16/bf16 and their x2 forms are HalfOps.cpp's (lowerHalf).
#include "FamilyLowering.h"

#include <optional>

namespace {

/// The bits of an arithmetic result R with the NaN the GPU returns (selected as integers: LLVM treats NaN
/// payloads as unspecified and would fold a float select between two NaNs away).
///  - f32: the canonical NaN 0x7fffffff, whatever the inputs.
///  - f64 with Inputs: the last NaN input, quieted; otherwise (an invalid operation) the default NaN
///    0xfff8000000000000. min/max pass no inputs and get 0x7ff8000000000000.
llvm::Value *nanResult(FunctionLowering &L, llvm::Value *R, llvm::ArrayRef<llvm::Value *> Inputs = {}) {
  auto &B = L.b();
  llvm::Type *T = R->getType();
  unsigned W = T->getPrimitiveSizeInBits();
  llvm::Type *IT = B.getIntNTy(W);
  llvm::Value *Bits = B.CreateBitCast(R, IT);
  llvm::Value *IsNaN = B.CreateFCmpUNO(R, R);
  if (!T->isDoubleTy()) {
    llvm::Value *Canon = T->isFloatTy() ? B.getInt32(0x7fffffff) : B.getInt16(0x7fff);
    return B.CreateSelect(IsNaN, Canon, Bits);
  }
  llvm::Value *N = B.getInt64(Inputs.empty() ? 0x7ff8000000000000ull : 0xfff8000000000000ull);
  for (llvm::Value *In : Inputs) // the last NaN input wins
    N = B.CreateSelect(B.CreateFCmpUNO(In, In), B.CreateOr(B.CreateBitCast(In, IT), B.getInt64(1ull << 51)), N);
  return B.CreateSelect(IsNaN, N, Bits);
}

llvm::Value *saturate(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *T = X->getType();
  // NaN, -0 and negatives -> +0, then clamp to 1.
  llvm::Value *Zero = llvm::ConstantFP::get(T, 0.0), *One = llvm::ConstantFP::get(T, 1.0);
  llvm::Value *Lo = B.CreateSelect(B.CreateFCmpOGT(X, Zero), X, Zero);
  return B.CreateSelect(B.CreateFCmpOGT(Lo, One), One, Lo);
}

/// min/max .xorsign.abs: min/max of |a| and |b| (NaN rules as for min/max) with the sign a ^ b.
llvm::Value *xorsignAbs(FunctionLowering &L, llvm::Intrinsic::ID ID, llvm::Value *A, llvm::Value *Bv) {
  auto &B = L.b();
  llvm::Type *FT = A->getType();
  llvm::Type *IT = B.getIntNTy(FT->getPrimitiveSizeInBits());
  llvm::Value *SignMask = llvm::ConstantInt::get(IT, llvm::APInt::getSignMask(IT->getIntegerBitWidth()));
  llvm::Value *Sign = B.CreateAnd(B.CreateXor(B.CreateBitCast(A, IT), B.CreateBitCast(Bv, IT)), SignMask);
  llvm::Value *R = B.CreateBinaryIntrinsic(ID, B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, A),
                                           B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Bv));
  llvm::Value *Signed = B.CreateBitCast(B.CreateOr(B.CreateBitCast(R, IT), Sign), FT);
  return B.CreateSelect(B.CreateFCmpUNO(R, R), R, Signed);
}

} // namespace

namespace ptxforge::codegen::detail {
bool lowerHalf(FunctionLowering &L, const ptx::Instruction &I); // HalfOps.cpp
/// The fcmp predicate of a setp/set comparison operator (shared with HalfOps.cpp's compareHalf); none for a
/// form without one.
std::optional<llvm::CmpInst::Predicate> floatComparePredicate(const ptx::Instruction &I);
} // namespace ptxforge::codegen::detail

std::optional<llvm::CmpInst::Predicate> ptxforge::codegen::detail::floatComparePredicate(const ptx::Instruction &I) {
  using P = llvm::CmpInst::Predicate;
  // The integer orders lo/ls/hi/hs compare floats like lt/le/gt/ge.
  static const std::pair<Modifier, P> Preds[] = {
      {Modifier::Eq, P::FCMP_OEQ},  {Modifier::Ne, P::FCMP_ONE},  {Modifier::Lt, P::FCMP_OLT},
      {Modifier::Le, P::FCMP_OLE},  {Modifier::Gt, P::FCMP_OGT},  {Modifier::Ge, P::FCMP_OGE},
      {Modifier::Lo, P::FCMP_OLT},  {Modifier::Ls, P::FCMP_OLE},  {Modifier::Hi, P::FCMP_OGT},
      {Modifier::Hs, P::FCMP_OGE},  {Modifier::Equ, P::FCMP_UEQ}, {Modifier::Neu, P::FCMP_UNE},
      {Modifier::Ltu, P::FCMP_ULT}, {Modifier::Leu, P::FCMP_ULE}, {Modifier::Gtu, P::FCMP_UGT},
      {Modifier::Geu, P::FCMP_UGE}, {Modifier::Num, P::FCMP_ORD}, {Modifier::Nan, P::FCMP_UNO}};
  for (auto [Op, Pred] : Preds)
    if (I.has(Op))
      return Pred;
  return std::nullopt;
}

llvm::Value *ptxforge::codegen::detail::compareFloat(FunctionLowering &L, const ptx::Instruction &I, ScalarType T,
                                                     const ptx::Operand &OA, const ptx::Operand &OB) {
  std::optional<llvm::CmpInst::Predicate> Pred = floatComparePredicate(I);
  if (!Pred)
    return nullptr;
  llvm::Value *A = L.readFloat(OA, T), *Bv = L.readFloat(OB, T);
  if (I.has(Modifier::Ftz) && T == ScalarType::F32) {
    A = flushDenormal(L, A);
    Bv = flushDenormal(L, Bv);
  }
  return L.b().CreateFCmp(*Pred, A, Bv);
}

namespace {

/// One f32/f64 instruction: its inputs (flushed under .ftz) and how its result is finished (flushed,
/// saturated, NaN bits as on the GPU) and written.
class FloatInstruction {
public:
  FloatInstruction(FunctionLowering &L, const ptx::Instruction &I)
      : L(L), B(L.b()), I(I), Ops(I.Operands), T(I.type()),
        // .ftz: f32, and the f64 .approx forms (rcp/rsqrt.approx.ftz.f64).
        Ftz(I.has(Modifier::Ftz) && (T == ScalarType::F32 || I.has(Modifier::Approx))), Round(directedRounding(I)) {}

  /// False when I is not an f32/f64 arithmetic instruction.
  bool lower() {
    switch (I.Op) {
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::Div:
      return lowerArithmetic();
    case Opcode::Fma:
    case Opcode::Mad:
      return lowerFma();
    case Opcode::Neg:
      return finish(B.CreateFNeg(in(1)), T == ScalarType::F64 ? Keep : Propagate);
    case Opcode::Abs:
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, in(1)), T == ScalarType::F64 ? Keep : Propagate);
    case Opcode::Copysign:
      return lowerCopysign();
    case Opcode::Min:
    case Opcode::Max:
      return lowerMinMax();
    case Opcode::Testp:
      return lowerTestp();
    default:
      return lowerMathFunction();
    }
  }

private:
  enum NaNRule { Propagate, MinMax, Keep };

  /// Operand K, read in order: the f64 NaN rule depends on it.
  llvm::Value *in(unsigned K) {
    llvm::Value *X = L.readFloat(Ops[K], T);
    if (Ftz)
      X = flushDenormal(L, X);
    Inputs.push_back(X);
    return X;
  }

  bool finish(llvm::Value *R, NaNRule Rule = Propagate) {
    if (Ftz)
      R = flushDenormal(L, R);
    if (I.has(Modifier::Sat))
      R = saturate(L, R);
    if (T == ScalarType::F32 && Rule != Keep && L.nanPayloadUnobserved(Ops[0]))
      Rule = Keep; // a NaN here is only ever tested for being a NaN (NaNPayload.cpp)
    if (Rule == Propagate)
      R = nanResult(L, R, Inputs);
    else if (Rule == MinMax)
      R = nanResult(L, R);
    L.write(Ops[0], T, R);
    return true;
  }

  /// Op rounded in the instruction's directed rounding mode: plain IR for f32, a runtime helper otherwise.
  llvm::Value *directed(const char *Op, std::vector<llvm::Value *> Args) {
    if (T == ScalarType::F32) {
      ptx::Opcode O = I.Op == Opcode::Rcp ? Opcode::Div : I.Op;
      if (llvm::Value *R = directedF32(L, O, Round, Args))
        return R;
    }
    std::string Name = std::string("ptxrt_") + Op + "_" + Round + (T == ScalarType::F32 ? "_f32" : "_f64");
    return pure(L.callHelper(Name, L.floatType(T), Args));
  }

  /// add/sub/mul/div.
  bool lowerArithmetic() {
    llvm::Value *A = in(1);
    llvm::Value *Bv = in(2);
    bool Approx = I.has(Modifier::Approx) || I.has(Modifier::Full);
    if (Round && !Approx) {
      const char *Name = I.Op == Opcode::Add   ? "add"
                         : I.Op == Opcode::Sub ? "sub"
                         : I.Op == Opcode::Mul ? "mul"
                                               : "div";
      return finish(directed(Name, {A, Bv}));
    }
    switch (I.Op) {
    case Opcode::Add:
      return finish(B.CreateFAdd(A, Bv));
    case Opcode::Sub:
      return finish(B.CreateFSub(A, Bv));
    case Opcode::Mul:
      return finish(B.CreateFMul(A, Bv));
    default:
      return finish(B.CreateFDiv(A, Bv));
    }
  }

  /// fma/mad.
  bool lowerFma() {
    llvm::Value *A = in(1);
    llvm::Value *Bv = in(2);
    llvm::Value *C = in(3);
    if (Round)
      return finish(directed("fma", {A, Bv, C}));
    return finish(B.CreateIntrinsic(llvm::Intrinsic::fma, {A->getType()}, {A, Bv, C}));
  }

  bool lowerCopysign() {
    // copysign keeps the payload of a NaN (observed on the GPU).
    llvm::Value *R = B.CreateCopySign(L.readFloat(Ops[2], T), L.readFloat(Ops[1], T));
    L.write(Ops[0], T, R);
    return true;
  }

  /// min/max (.NaN, .xorsign.abs, .relu, three inputs).
  bool lowerMinMax() {
    if (Ops.size() != 3 && Ops.size() != 4)
      return L.unsupported(I, "operand count");
    llvm::Value *A = in(1), *Bv = in(2);
    bool PropagateNaN = I.has(Modifier::NaN);
    // minimumnum/maximumnum: one NaN operand gives the other, -0 < +0; minimum/maximum propagate NaN.
    llvm::Intrinsic::ID ID = I.Op == Opcode::Min
                                 ? (PropagateNaN ? llvm::Intrinsic::minimum : llvm::Intrinsic::minimumnum)
                                 : (PropagateNaN ? llvm::Intrinsic::maximum : llvm::Intrinsic::maximumnum);
    if (I.has(Modifier::Xorsign))
      return finish(xorsignAbs(L, ID, A, Bv), MinMax);
    llvm::Value *R = B.CreateBinaryIntrinsic(ID, A, Bv);
    if (Ops.size() == 4) // three inputs
      R = B.CreateBinaryIntrinsic(ID, R, in(3));
    if (I.has(Modifier::Relu))
      R = B.CreateSelect(B.CreateFCmpOGT(R, llvm::ConstantFP::get(R->getType(), 0.0)), R,
                         B.CreateSelect(B.CreateFCmpUNO(R, R), R, llvm::ConstantFP::get(R->getType(), 0.0)));
    return finish(R, MinMax);
  }

  /// sqrt/rcp/rsqrt and the transcendental functions; false for other opcodes.
  bool lowerMathFunction() {
    switch (I.Op) {
    case Opcode::Sqrt:
      if (Round)
        return finish(directed("sqrt", {in(1)}));
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, in(1)));
    case Opcode::Rcp:
      if (Round)
        return finish(directed("div", {llvm::ConstantFP::get(L.floatType(T), 1.0), in(1)}));
      return finish(B.CreateFDiv(llvm::ConstantFP::get(L.floatType(T), 1.0), in(1)));
    case Opcode::Rsqrt:
      if (T == ScalarType::F32)
        return finish(rsqrtApproxF32(L, in(1)));
      return finish(B.CreateFDiv(llvm::ConstantFP::get(L.floatType(T), 1.0),
                                 B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, in(1))));
    case Opcode::Ex2:
      if (T == ScalarType::F32)
        return finish(exp2ApproxF32(L, in(1)));
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, in(1)));
    case Opcode::Lg2:
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::log2, in(1)));
    case Opcode::Sin:
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::sin, in(1)));
    case Opcode::Cos:
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::cos, in(1)));
    case Opcode::Tanh:
      return finish(B.CreateUnaryIntrinsic(llvm::Intrinsic::tanh, in(1)));
    default:
      return false;
    }
  }

  /// testp.{finite,infinite,number,notanumber,normal,subnormal}.
  bool lowerTestp() {
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
    else if (I.has(Modifier::Normal)) // zero counts as normal (observed on the GPU)
      R = B.CreateAnd(B.CreateOr(B.CreateFCmpOGE(Abs, MinNorm), B.CreateFCmpOEQ(Abs, llvm::ConstantFP::get(FT, 0.0))),
                      B.CreateFCmpOLT(Abs, Inf));
    else if (I.has(Modifier::Subnormal))
      R = B.CreateAnd(B.CreateFCmpOLT(Abs, MinNorm), B.CreateFCmpONE(Abs, llvm::ConstantFP::get(FT, 0.0)));
    else
      return false;
    L.write(Ops[0], ScalarType::Pred, R);
    return true;
  }

  FunctionLowering &L;
  llvm::IRBuilder<> &B;
  const ptx::Instruction &I;
  llvm::ArrayRef<ptx::Operand> Ops;
  const ScalarType T;
  const bool Ftz;
  const char *const Round;           ///< "rz"/"rm"/"rp", null for round-to-nearest
  std::vector<llvm::Value *> Inputs; ///< the (flushed) operands read so far, for the f64 NaN rule
};

} // namespace

bool ptxforge::codegen::detail::lowerFloat(FunctionLowering &L, const ptx::Instruction &I) {
  ScalarType T = I.type();
  if (T == ScalarType::F16 || T == ScalarType::BF16 || T == ScalarType::F16x2 || T == ScalarType::BF16x2)
    return lowerHalf(L, I);
  if (T != ScalarType::F32 && T != ScalarType::F64)
    return false;
  if (I.typeCount() != 1)
    return false;
  return FloatInstruction(L, I).lower();
}
