// f16/bf16 and packed f16x2/bf16x2 arithmetic: add/sub/mul/fma (rounding modes, .ftz, .sat, .relu), min/max
// (.NaN, .xorsign.abs, .relu), neg/abs, ex2/tanh .approx. Round-to-nearest arithmetic, min/max and neg/abs are
// plain IR (inlineHalf below), each lane computed in f32 or f64 and rounded once to the narrow format; the
// directed rounding modes and ex2/tanh call the runtime helper ptxrt_half_op (exec/HalfMath.cpp), which
// computes in double and rounds exactly once; the code word (HalfCode.h) selects the operation. Both give the
// GPU's results bit for bit (tests/unit/codegen/HalfInlineTest.cpp compares them over every flag).
#include "FamilyLowering.h"
#include "HalfCode.h"

#include <optional>

using namespace ptxforge::codegen::halfcode;

namespace ptxforge::codegen::detail {
bool lowerHalf(FunctionLowering &L, const ptx::Instruction &I);
std::optional<llvm::CmpInst::Predicate> floatComparePredicate(const ptx::Instruction &I); // FloatOps.cpp
/// setp/set on f16/bf16 and their x2 forms: each lane's comparison (low lane first); empty when I has no
/// comparison operator. Called by IntegerOps.cpp, which combines and writes the results.
llvm::SmallVector<llvm::Value *, 2> compareHalf(FunctionLowering &L, const ptx::Instruction &I, ScalarType T,
                                                const ptx::Operand &OA, const ptx::Operand &OB);
} // namespace ptxforge::codegen::detail

namespace {

/// The inline form of one f16/bf16 operation on one 16-bit lane, with ptxrt_half_op's semantics: operands
/// flushed under .ftz; a NaN result is the GPU's canonical 0x7fff (+0 under .sat); round to nearest even.
/// Why one rounding is exact here:
///  - f16 add/sub/mul in f32: the operands' sum or product rounded to f32 and then to f16 equals the direct
///    rounding since 24 >= 2 * 11 + 2 (double rounding is innocuous for +, -, * at that margin); f16 values are
///    normal in f32 (no underflow).
///  - bf16 add/sub in f32: the same margin (24 >= 2 * 8 + 2) for normal results; a sum below f32's normal range
///    is a multiple of 2^-133 and so exact in f32.
///  - bf16 mul in f32: a product of at most 16 significant bits is exact in f32 down to 2^-134 (its lowest bit
///    is then at least 2^-149, f32's smallest subnormal); a smaller product rounds to a zero in bf16 either way
///    (2^-134 is half bf16's smallest subnormal, a tie to even), and one past f32's range is past bf16's.
///  - fma: the product is exact (f16: 22 bits in f32; bf16: 16 bits in f64, whose range holds any bf16
///    product), the sum is rounded to odd (TwoSum gives its exact error), and rounding to odd with at
///    least two spare bits followed by round-to-nearest is the correctly rounded result. f64 values reach the
///    narrow format through an f32 rounded to odd (round-to-odd composes; f32 subnormals still have 16 spare
///    bits below bf16's).
struct HalfLane {
  llvm::IRBuilderBase &B;
  bool BF; ///< bf16, else f16
  uint32_t Flags;

  llvm::Type *i16() { return B.getInt16Ty(); }
  llvm::Type *i32() { return B.getInt32Ty(); }
  llvm::Constant *c16(uint32_t V) { return B.getInt16(static_cast<uint16_t>(V)); }
  uint32_t expMask() const { return BF ? 0x7f80 : 0x7c00; }

  /// Under .ftz a subnormal operand becomes a zero of its sign.
  llvm::Value *flushBits(llvm::Value *X) {
    if (!(Flags & FlagFtz))
      return X;
    llvm::Value *Sub = B.CreateICmpEQ(B.CreateAnd(X, c16(expMask())), c16(0));
    return B.CreateSelect(Sub, B.CreateAnd(X, c16(0x8000)), X);
  }
  /// The lane's exact value as f32.
  llvm::Value *toFloat(llvm::Value *X) {
    if (BF)
      return B.CreateBitCast(B.CreateShl(B.CreateZExt(X, i32()), 16), B.getFloatTy());
    return B.CreateFPExt(B.CreateBitCast(X, B.getHalfTy()), B.getFloatTy());
  }
  llvm::Value *bitsOf(llvm::Value *F) {
    return B.CreateBitCast(F, F->getType()->isDoubleTy() ? B.getInt64Ty() : i32());
  }
  llvm::Value *fromBits(llvm::Value *I, llvm::Type *T) { return B.CreateBitCast(I, T); }
  llvm::Value *signBit(llvm::Value *F) {
    return B.CreateICmpSLT(bitsOf(F), llvm::ConstantInt::get(bitsOf(F)->getType(), 0));
  }

  /// S + Err (Err the exact error of the rounded S) rounded to odd: S made odd, a step toward zero first when
  /// the exact value lies below S in magnitude. Non-finite S stays.
  llvm::Value *roundToOdd(llvm::Value *S, llvm::Value *Err) {
    llvm::Type *IT = S->getType()->isDoubleTy() ? B.getInt64Ty() : i32();
    llvm::Value *Bits = bitsOf(S);
    llvm::Value *Toward0 = B.CreateZExt(B.CreateXor(signBit(Err), signBit(S)), IT);
    llvm::Value *Odd = B.CreateOr(B.CreateSub(Bits, Toward0), llvm::ConstantInt::get(IT, 1));
    llvm::Value *Finite =
        B.CreateFCmpOLT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, S), llvm::ConstantFP::getInfinity(S->getType()));
    llvm::Value *Inexact = B.CreateAnd(B.CreateFCmpONE(Err, llvm::ConstantFP::get(S->getType(), 0.0)), Finite);
    return fromBits(B.CreateSelect(Inexact, Odd, Bits), S->getType());
  }
  /// P + C rounded to odd (P, C exact in their type).
  llvm::Value *sumToOdd(llvm::Value *P, llvm::Value *C) {
    llvm::Value *S = B.CreateFAdd(P, C);
    llvm::Value *Bb = B.CreateFSub(S, P);
    llvm::Value *Err = B.CreateFAdd(B.CreateFSub(P, B.CreateFSub(S, Bb)), B.CreateFSub(C, Bb));
    return roundToOdd(S, Err);
  }
  /// An f64 rounded to odd at f32 precision (overflow: the largest finite f32, which is odd).
  llvm::Value *doubleToOddFloat(llvm::Value *D) {
    llvm::Value *F = B.CreateFPTrunc(D, B.getFloatTy());
    llvm::Value *Back = B.CreateFPExt(F, B.getDoubleTy());
    llvm::Value *Above = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Back),
                                         B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, D));
    llvm::Value *Bits = bitsOf(F);
    llvm::Value *Odd = B.CreateOr(B.CreateSub(Bits, B.CreateZExt(Above, i32())), B.getInt32(1));
    return fromBits(B.CreateSelect(B.CreateFCmpONE(Back, D), Odd, Bits), B.getFloatTy());
  }
  /// A non-NaN f32 or f64 (exact, or rounded to odd) rounded to nearest even in the lane's format; an f64
  /// goes through an f32 rounded to odd.
  llvm::Value *round(llvm::Value *V) {
    if (V->getType()->isDoubleTy())
      V = doubleToOddFloat(V);
    if (!BF)
      return B.CreateBitCast(B.CreateFPTrunc(V, B.getHalfTy()), i16());
    llvm::Value *Bits = bitsOf(V);
    llvm::Value *Lsb = B.CreateAnd(B.CreateLShr(Bits, 16), B.getInt32(1));
    return B.CreateTrunc(B.CreateLShr(B.CreateAdd(Bits, B.CreateAdd(B.getInt32(0x7fff), Lsb)), 16), i16());
  }
  /// The result flags on a rounded lane R; IsNaN: the computed value was a NaN.
  llvm::Value *finish(llvm::Value *R, llvm::Value *IsNaN) {
    R = flushBits(R); // .ftz: subnormal results too
    llvm::Value *Neg = B.CreateICmpSLT(R, c16(0));
    if (Flags & FlagRelu)
      R = B.CreateSelect(Neg, c16(0), R);
    if (Flags & FlagSat) { // [+0, 1]: rounding is monotonic, so clamping after it is clamping before
      llvm::Value *Zero = B.CreateICmpEQ(B.CreateAnd(R, c16(0x7fff)), c16(0));
      llvm::Value *One = c16(BF ? 0x3f80 : 0x3c00);
      R = B.CreateSelect(B.CreateOr(Neg, Zero), c16(0), B.CreateSelect(B.CreateICmpUGT(R, One), One, R));
    }
    return B.CreateSelect(IsNaN, c16(Flags & FlagSat ? 0 : 0x7fff), R);
  }
  llvm::Value *isNaN(llvm::Value *V) { return B.CreateFCmpUNO(V, V); }

  llvm::Value *minMax(bool IsMax, llvm::Value *A, llvm::Value *Bv) {
    llvm::Value *NA = isNaN(A), *NB = isNaN(Bv);
    bool Xs = Flags & FlagXorsignAbs;
    llvm::Value *SignX = B.CreateXor(signBit(A), signBit(Bv));
    if (Xs) {
      A = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, A);
      Bv = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Bv);
    }
    // Equal (+0 and -0): min takes the negative one, max the positive one.
    llvm::Value *ANeg = signBit(A);
    llvm::Value *OnEqual = IsMax ? B.CreateSelect(ANeg, Bv, A) : B.CreateSelect(ANeg, A, Bv);
    llvm::Value *Pick =
        IsMax ? B.CreateSelect(B.CreateFCmpOGT(A, Bv), A, Bv) : B.CreateSelect(B.CreateFCmpOLT(A, Bv), A, Bv);
    llvm::Value *R = B.CreateSelect(B.CreateFCmpOEQ(A, Bv), OnEqual, Pick);
    R = B.CreateSelect(NA, Bv, B.CreateSelect(NB, A, R)); // one NaN: the other operand
    if (Xs)
      R = B.CreateSelect(SignX, B.CreateFNeg(R), R);
    llvm::Value *NaN = llvm::ConstantFP::getNaN(A->getType());
    llvm::Value *BothOrAsked = Flags & FlagNaN ? B.CreateOr(NA, NB) : B.CreateAnd(NA, NB);
    return B.CreateSelect(BothOrAsked, NaN, R);
  }

  /// Op on lanes X (and Y, Z: 16-bit integers); Z only for fma and three-input min/max.
  llvm::Value *op(uint32_t Op, llvm::Value *X, llvm::Value *Y, llvm::Value *Z) {
    auto in = [&](llvm::Value *V) { return toFloat(flushBits(V)); };
    llvm::Value *A = in(X), *V;
    switch (Op) {
    case OpAdd:
      V = B.CreateFAdd(A, in(Y));
      break;
    case OpSub:
      V = B.CreateFSub(A, in(Y));
      break;
    case OpMul:
      V = B.CreateFMul(A, in(Y));
      break;
    case OpFma: {
      llvm::Type *T = BF ? B.getDoubleTy() : B.getFloatTy();
      auto wide = [&](llvm::Value *F) { return BF ? B.CreateFPExt(F, T) : F; };
      V = sumToOdd(B.CreateFMul(wide(A), wide(in(Y))), wide(in(Z)));
      break;
    }
    case OpMin:
    case OpMax:
      V = minMax(Op == OpMax, A, in(Y));
      if (Z) {
        // min(min(a, b), c): the inner result as the GPU would hold it (a NaN is the canonical, positive one).
        uint32_t Outer = Flags;
        Flags &= ~FlagRelu;
        V = B.CreateSelect(isNaN(V), llvm::ConstantFP::getNaN(V->getType()), V);
        V = minMax(Op == OpMax, V, in(Z));
        Flags = Outer;
      }
      break;
    case OpNeg:
      V = B.CreateFNeg(A);
      break;
    case OpAbs:
      V = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, A);
      break;
    default:
      return nullptr;
    }
    llvm::Value *NaN = isNaN(V);
    // A NaN lane rounds to some NaN; finish replaces it.
    return finish(round(V), NaN);
  }
};

/// Whether lowerHalf computes Op inline (else ptxrt_half_op does).
bool inlineHalf(uint32_t Op, uint32_t Mode) {
  switch (Op) {
  case OpAdd:
  case OpSub:
  case OpMul:
  case OpFma:
    return Mode == ModeRN;
  case OpMin:
  case OpMax:
  case OpNeg:
  case OpAbs:
    return true;
  default:
    return false;
  }
}

/// Op on I's NIn operands (f16, or bf16 with BF; packed with FlagX2 in Flags) as plain IR (HalfLane), lane by
/// lane as scalars: the thread loops vectorize across threads, and LLVM's loop vectorizer does not widen values
/// that are vectors already.
bool lowerHalfInline(FunctionLowering &L, const ptx::Instruction &I, uint32_t Op, unsigned NIn, bool BF,
                     uint32_t Flags) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  ScalarType T = I.type();
  HalfLane H{B, BF, Flags};
  auto lane = [&](unsigned K, unsigned Lane) -> llvm::Value * {
    if (K > NIn)
      return nullptr;
    llvm::Value *V = L.read(Ops[K], T);
    return B.CreateTrunc(Lane ? B.CreateLShr(V, 16) : V, B.getInt16Ty());
  };
  auto laneResult = [&](unsigned Lane) { return H.op(Op, lane(1, Lane), lane(2, Lane), lane(3, Lane)); };
  llvm::Value *Lo = laneResult(0);
  if (!(Flags & FlagX2)) {
    L.write(Ops[0], T, Lo);
    return true;
  }
  llvm::Value *Hi = laneResult(1);
  llvm::Type *I32 = B.getInt32Ty();
  L.write(Ops[0], T, B.CreateOr(B.CreateShl(B.CreateZExt(Hi, I32), 16), B.CreateZExt(Lo, I32)));
  return true;
}

} // namespace

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
  case Opcode::Add:
    Op = OpAdd;
    NIn = 2;
    break;
  case Opcode::Sub:
    Op = OpSub;
    NIn = 2;
    break;
  case Opcode::Mul:
    Op = OpMul;
    NIn = 2;
    break;
  case Opcode::Fma:
  case Opcode::Mad:
    Op = OpFma;
    NIn = 3;
    break;
  case Opcode::Min:
    Op = OpMin;
    NIn = 2;
    break;
  case Opcode::Max:
    Op = OpMax;
    NIn = 2;
    break;
  case Opcode::Neg:
    Op = OpNeg;
    NIn = 1;
    break;
  case Opcode::Abs:
    Op = OpAbs;
    NIn = 1;
    break;
  case Opcode::Ex2:
    Op = OpEx2;
    NIn = 1;
    break;
  case Opcode::Tanh:
    Op = OpTanh;
    NIn = 1;
    break;
  default:
    return false;
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
  if (inlineHalf(Op, Mode))
    return lowerHalfInline(L, I, Op, NIn, Fmt == FmtBF16, Flags);
  auto arg = [&](unsigned K) { return B.CreateZExt(L.read(Ops[K], T), I32); };
  llvm::Value *Zero = B.getInt32(0);
  llvm::Value *R;
  if (NIn == 3 && Op != OpFma) {
    // min/max a, b, c: min(min(a, b), c) with the same NaN rules.
    llvm::Value *AB = pure(
        L.callHelper("ptxrt_half_op", I32, {B.getInt32(code(Op, Fmt, Mode, Flags & ~FlagRelu)), arg(1), arg(2), Zero}));
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

llvm::SmallVector<llvm::Value *, 2> ptxforge::codegen::detail::compareHalf(FunctionLowering &L,
                                                                           const ptx::Instruction &I, ScalarType T,
                                                                           const ptx::Operand &OA,
                                                                           const ptx::Operand &OB) {
  std::optional<llvm::CmpInst::Predicate> Pred = floatComparePredicate(I);
  if (!Pred)
    return {};
  auto &B = L.b();
  bool BF = T == ScalarType::BF16 || T == ScalarType::BF16x2;
  bool X2 = T == ScalarType::F16x2 || T == ScalarType::BF16x2;
  // Each lane widens exactly to f32 (.ftz flushes subnormal inputs first), so one f32 compare is the half one.
  HalfLane H{B, BF, I.has(Modifier::Ftz) ? FlagFtz : 0u};
  llvm::Value *A = L.read(OA, T), *Bv = L.read(OB, T);
  llvm::SmallVector<llvm::Value *, 2> Lanes;
  for (unsigned Lane = 0; Lane < (X2 ? 2u : 1u); ++Lane) {
    auto lane = [&](llvm::Value *V) {
      return H.toFloat(H.flushBits(B.CreateTrunc(Lane ? B.CreateLShr(V, 16) : V, B.getInt16Ty())));
    };
    llvm::Value *X = lane(A);
    llvm::Value *Y = lane(Bv);
    Lanes.push_back(B.CreateFCmp(*Pred, X, Y));
  }
  return Lanes;
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

llvm::Value *ptxforge::codegen::detail::roundToHalf(llvm::IRBuilderBase &B, llvm::Value *X, bool BF, uint32_t Flags) {
  HalfLane H{B, BF, Flags};
  return H.finish(H.round(X), H.isNaN(X));
}
