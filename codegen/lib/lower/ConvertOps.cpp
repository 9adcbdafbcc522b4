// cvt between integer and floating types with PTX rounding and saturation: float->int saturates (LLVM's
// fpto[su]i.sat) with the GPU's NaN results, integer rounding modifiers pick the rounding of float->int and
// float->float round-to-integral; directed rounding of int->f32/f64 and f64->f32 goes through runtime helpers.
// Conversions to f16/bf16/tf32/e4m3/e5m2 (scalar and packed x2, .relu/.satfinite) round exactly: f32/f64 to
// f16/bf16 to nearest inline (roundToHalf, HalfOps.cpp), the others in the runtime (exec/HalfMath.cpp, code
// word in HalfCode.h).
#include "FamilyLowering.h"
#include "HalfCode.h"

namespace halfcode = ptxforge::codegen::halfcode;

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

/// The narrow format a conversion helper encodes (HalfCode.h), or -1.
int narrowFormat(ScalarType T) {
  switch (T) {
  case ScalarType::F16:
  case ScalarType::F16x2:
    return halfcode::FmtF16;
  case ScalarType::BF16:
  case ScalarType::BF16x2:
    return halfcode::FmtBF16;
  case ScalarType::TF32:
    return halfcode::FmtTF32;
  case ScalarType::E4M3:
  case ScalarType::E4M3x2:
    return halfcode::FmtE4M3;
  case ScalarType::E5M2:
  case ScalarType::E5M2x2:
    return halfcode::FmtE5M2;
  default:
    return -1;
  }
}

uint32_t narrowCode(const ptx::Instruction &I, int Fmt) {
  using namespace halfcode;
  uint32_t Mode = halfRoundingMode(I);
  uint32_t Flags = 0;
  if (I.has(Modifier::Sat))
    Flags |= FlagSat;
  if (I.has(Modifier::Relu))
    Flags |= FlagRelu;
  if (I.has(Modifier::Satfinite))
    Flags |= FlagSatfinite;
  return code(0, static_cast<uint32_t>(Fmt), Mode, Flags);
}

/// An f32 (Bits, i32) to tf32 inline for round to nearest (even, or away from zero: .rna, what
/// __float_to_tf32 emits) and toward zero without flags; null otherwise (the runtime's encode takes them). A
/// finite value's magnitude rounds in its bit pattern: adding half of the 13 dropped bits' weight carries into
/// the exponent where it should, up to infinity past the largest tf32; infinities stay; a NaN keeps its sign and
/// truncated payload (exec/HalfMath.cpp encodeTf32). The helper call was most of a tf32 GEMM's time: its kernels
/// convert every fragment element.
llvm::Value *roundToTf32(llvm::IRBuilderBase &B, llvm::Value *Bits, uint32_t Code) {
  using namespace halfcode;
  uint32_t Mode = (Code >> ModeShift) & 7;
  if ((Code & FlagsMask) || (Mode != ModeRN && Mode != ModeRNA && Mode != ModeRZ))
    return nullptr;
  llvm::Value *Truncated = B.CreateAnd(Bits, 0xffffe000u);
  if (Mode == ModeRZ)
    return Truncated;
  llvm::Value *Half = B.getInt32(0x1000); // ties away from zero
  if (Mode == ModeRN) // ties to even: 0xfff plus the kept part's lowest bit
    Half = B.CreateAdd(B.getInt32(0xfff), B.CreateAnd(B.CreateLShr(Bits, 13), 1));
  llvm::Value *NaN = B.CreateICmpUGT(B.CreateAnd(Bits, 0x7fffffffu), B.getInt32(0x7f800000u));
  return B.CreateSelect(NaN, Truncated, B.CreateAnd(B.CreateAdd(Bits, Half), 0xffffe000u));
}

/// Conversions to and between the narrow formats (f16, bf16, tf32, fp8, and their packed x2 forms) except the
/// exact widenings and f16 round-to-integral, which the generic paths handle. False when I is none of them.
bool lowerNarrowConvert(FunctionLowering &L, const ptx::Instruction &I, bool &Handled) {
  Handled = false;
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  int DFmt = narrowFormat(D);
  if (DFmt < 0 && narrowFormat(S) < 0)
    return false;
  auto &Ops = I.Operands;
  llvm::Type *I32 = B.getInt32Ty();
  bool Ftz = I.has(Modifier::Ftz);
  // A float operand (an f32 source flushed first under .ftz).
  auto source = [&](const ptx::Operand &Op) {
    llvm::Value *X = L.readFloat(Op, S);
    if (Ftz && S == ScalarType::F32)
      X = flushDenormal(L, X);
    return X;
  };
  auto asDouble = [&](const ptx::Operand &Op) { return B.CreateFPExt(source(Op), B.getDoubleTy()); };
  auto toNarrow = [&](const ptx::Operand &Op) -> llvm::Value * {
    uint32_t Code = narrowCode(I, DFmt);
    // f32/f64 to f16/bf16, to nearest: inline (HalfOps.cpp); other modes and .satfinite in the runtime.
    if ((DFmt == halfcode::FmtF16 || DFmt == halfcode::FmtBF16) && (S == ScalarType::F32 || S == ScalarType::F64) &&
        halfRoundingMode(I) == halfcode::ModeRN && !(Code & halfcode::FlagSatfinite))
      return B.CreateZExt(roundToHalf(B, source(Op), DFmt == halfcode::FmtBF16, Code & halfcode::FlagsMask), I32);
    if (D == ScalarType::TF32) {
      llvm::Value *Bits = L.read(Op, ScalarType::F32);
      if (llvm::Value *R = roundToTf32(B, Bits, Code))
        return R;
      return pure(L.callHelper("ptxrt_cvt_tf32_f32", I32, {B.getInt32(Code), Bits}));
    }
    if (ptx::isInteger(S)) {
      llvm::Value *X = L.read(Op, S);
      bool Sg = ptx::kindOf(S) == ptx::TypeKind::Signed;
      llvm::Value *X64 = Sg ? B.CreateSExt(X, B.getInt64Ty()) : B.CreateZExt(X, B.getInt64Ty());
      return pure(L.callHelper("ptxrt_cvt_narrow_int", I32, {B.getInt32(Code), X64, B.getInt32(Sg)}));
    }
    return pure(L.callHelper("ptxrt_cvt_narrow_f64", I32, {B.getInt32(Code), asDouble(Op)}));
  };
  bool SIsWideFloat = S == ScalarType::F32 || S == ScalarType::F64;
  switch (D) {
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::TF32:
    if (S == D)
      return false; // round to integral
    if (!(SIsWideFloat || ptx::isInteger(S) || S == ScalarType::F16 || S == ScalarType::BF16) || Ops.size() != 2)
      break;
    Handled = true;
    L.write(Ops[0], D, D == ScalarType::TF32 ? toNarrow(Ops[1]) : B.CreateTrunc(toNarrow(Ops[1]), B.getInt16Ty()));
    return true;
  case ScalarType::F16x2:
  case ScalarType::BF16x2:
  case ScalarType::E4M3x2:
  case ScalarType::E5M2x2: {
    unsigned LaneBits = (D == ScalarType::F16x2 || D == ScalarType::BF16x2) ? 16 : 8;
    llvm::Type *DT = B.getIntNTy(2 * LaneBits);
    if (S == ScalarType::F32 && Ops.size() == 3) { // d = {a: high lane, b: low lane}
      Handled = true;
      llvm::Value *Hi = B.CreateAnd(toNarrow(Ops[1]), B.getInt32((1u << LaneBits) - 1));
      llvm::Value *Lo = B.CreateAnd(toNarrow(Ops[2]), B.getInt32((1u << LaneBits) - 1));
      L.write(Ops[0], D, B.CreateTrunc(B.CreateOr(B.CreateShl(Hi, LaneBits), Lo), DT));
      return true;
    }
    int SFmt = narrowFormat(S);
    if (SFmt >= 0 && ptx::kindOf(S) == ptx::TypeKind::Packed && Ops.size() == 2) {
      Handled = true;
      llvm::Value *X = B.CreateZExt(L.read(Ops[1], S), I32);
      llvm::Value *R = pure(L.callHelper("ptxrt_cvt_narrow_packed", I32,
                                         {B.getInt32(narrowCode(I, DFmt)), B.getInt32(SFmt), X, B.getInt32(2)}));
      L.write(Ops[0], D, B.CreateTrunc(R, DT));
      return true;
    }
    break;
  }
  default:
    break;
  }
  // Sources in a narrow format that the generic paths cannot read (tf32, fp8, packed).
  if (!L.floatType(S) || !(L.floatType(D) || ptx::isInteger(D)))
    return Handled = true, L.unsupported(I);
  if (L.floatType(S) && L.floatType(D) && S != D && (D == ScalarType::F16 || D == ScalarType::BF16))
    return Handled = true, L.unsupported(I);
  return false;
}

/// float -> int: round to integral, then saturate (fpto[su]i.sat) with the GPU's NaN results.
bool lowerFloatToInt(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  llvm::Value *X = L.readFloat(I.Operands[1], S);
  if (I.has(Modifier::Ftz))
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
  // NaN: 0 for 8..32-bit results from f16/bf16/f32; the bit pattern 100...0 (signed or not) for 64-bit
  // results and for every f64 source (as recorded on the GPU).
  if (W == 64 || S == ScalarType::F64)
    V = B.CreateSelect(B.CreateFCmpUNO(X, X), B.getInt(llvm::APInt::getSignMask(W)), V);
  L.write(I.Operands[0], D, V);
  return true;
}

/// int -> float, directed rounding through runtime helpers.
bool lowerIntToFloat(FunctionLowering &L, const ptx::Instruction &I, llvm::Type *DF) {
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  llvm::Value *X = L.read(I.Operands[1], S);
  if (const char *Mode = directedRounding(I)) {
    std::string Name =
        std::string("ptxrt_cvt_") + Mode + "_" + ptx::spell(D).str() + "_" + (isSigned(S) ? "s64" : "u64");
    llvm::Value *X64 = isSigned(S) ? B.CreateSExt(X, B.getInt64Ty()) : B.CreateZExt(X, B.getInt64Ty());
    L.write(I.Operands[0], D, pure(L.callHelper(Name, DF, {X64})));
    return true;
  }
  llvm::Value *R = isSigned(S) ? B.CreateSIToFP(X, DF) : B.CreateUIToFP(X, DF);
  L.write(I.Operands[0], D, R);
  return true;
}

/// float -> float: round to integral (same type), widen, or narrow (directed rounding through runtime
/// helpers), with .ftz/.sat and the GPU's NaN results.
bool lowerFloatToFloat(FunctionLowering &L, const ptx::Instruction &I, llvm::Type *DF, llvm::Type *SF) {
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  bool Ftz = I.has(Modifier::Ftz);
  llvm::Value *X = L.readFloat(I.Operands[1], S);
  if (Ftz && S == ScalarType::F32)
    X = flushDenormal(L, X);
  llvm::Value *R;
  if (D == S) {
    R = roundIntegral(L, I, X);
    if (!R)
      R = X;
  } else if (DF->getPrimitiveSizeInBits() > SF->getPrimitiveSizeInBits()) {
    R = B.CreateFPExt(X, DF);
  } else if (const char *Mode = directedRounding(I)) {
    std::string Name = std::string("ptxrt_cvt_") + Mode + "_" + ptx::spell(D).str() + "_" + ptx::spell(S).str();
    R = pure(L.callHelper(Name, DF, {X}));
  } else {
    R = B.CreateFPTrunc(X, DF);
  }
  if (Ftz && D == ScalarType::F32)
    R = flushDenormal(L, R);
  if (I.has(Modifier::Sat)) {
    llvm::Value *Zero = llvm::ConstantFP::get(DF, 0.0), *One = llvm::ConstantFP::get(DF, 1.0);
    R = B.CreateSelect(B.CreateFCmpOGT(R, Zero), R, Zero); // NaN, -0 and negatives -> +0
    R = B.CreateSelect(B.CreateFCmpOGT(R, One), One, R);
  }
  // NaN results as recorded on the GPU (selected as integers, LLVM does not keep NaN payloads): f32/f16
  // round-to-integral gives the canonical NaN, .ftz f32 -> f64 the canonical f32 NaN widened; other
  // conversions keep the payload.
  llvm::Value *Canon = nullptr;
  if (D == S && D != ScalarType::F64)
    Canon = D == ScalarType::F32 ? B.getInt32(0x7fffffff) : B.getInt16(0x7fff);
  else if (Ftz && S == ScalarType::F32 && D == ScalarType::F64)
    Canon = B.getInt64(0x7fffffffe0000000ull);
  if (Canon)
    R = B.CreateSelect(B.CreateFCmpUNO(R, R), Canon, B.CreateBitCast(R, Canon->getType()));
  L.write(I.Operands[0], D, R);
  return true;
}

/// int -> int: sign/zero extension or truncation; .sat clamps to the destination's range.
bool lowerIntToInt(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType D = I.type(0), S = I.type(1);
  llvm::Value *X = L.read(I.Operands[1], S);
  unsigned DW = ptx::bitWidth(D), SW = ptx::bitWidth(S);
  llvm::Type *DT = B.getIntNTy(DW);
  if (I.has(Modifier::Sat)) {
    llvm::APInt Lo = isSigned(D) ? llvm::APInt::getSignedMinValue(DW) : llvm::APInt::getMinValue(DW);
    llvm::APInt Hi = isSigned(D) ? llvm::APInt::getSignedMaxValue(DW) : llvm::APInt::getMaxValue(DW);
    unsigned WW = std::max(DW, SW) + 1;
    llvm::Value *XW = isSigned(S) ? B.CreateSExt(X, B.getIntNTy(WW)) : B.CreateZExt(X, B.getIntNTy(WW));
    llvm::Value *LoW = B.getInt(isSigned(D) ? Lo.sext(WW) : Lo.zext(WW));
    llvm::Value *HiW = B.getInt(isSigned(D) ? Hi.sext(WW) : Hi.zext(WW));
    XW = B.CreateSelect(B.CreateICmpSLT(XW, LoW), LoW, XW);
    XW = B.CreateSelect(B.CreateICmpSGT(XW, HiW), HiW, XW);
    L.write(I.Operands[0], D, B.CreateTrunc(XW, DT));
    return true;
  }
  llvm::Value *R = DW > SW ? (isSigned(S) ? B.CreateSExt(X, DT) : B.CreateZExt(X, DT)) : B.CreateTrunc(X, DT);
  L.write(I.Operands[0], D, R);
  return true;
}

/// cvt.pack.sat.{u4,s4,u8,s8}.s32.b32 d, a, b, c and cvt.pack.sat.{u16,s16}.s32 d, a, b: a and b saturated to
/// the narrow type, b in the low bits, a above it, and c's low bits above both.
bool lowerConvertPack(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  ScalarType D = I.type(0);
  unsigned Size = ptx::bitWidth(D);
  bool Signed = ptx::kindOf(D) == ptx::TypeKind::Signed;
  if (!ptx::isInteger(D) || Size > 16 || I.type(1) != ScalarType::S32 || Ops.size() < 3 || Ops.size() > 4)
    return L.unsupported(I);
  int32_t Lo = Signed ? -(1 << (Size - 1)) : 0, Hi = Signed ? (1 << (Size - 1)) - 1 : (1 << Size) - 1;
  auto saturate = [&](const ptx::Operand &Op) {
    llvm::Value *X = L.read(Op, ScalarType::S32);
    X = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, X, B.getInt32(static_cast<uint32_t>(Lo)));
    X = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, X, B.getInt32(static_cast<uint32_t>(Hi)));
    return B.CreateAnd(X, B.getInt32((1u << Size) - 1));
  };
  llvm::Value *R = B.CreateOr(B.CreateShl(saturate(Ops[1]), Size), saturate(Ops[2]));
  if (Ops.size() == 4 && 2 * Size < 32)
    R = B.CreateOr(R, B.CreateShl(L.read(Ops[3], ScalarType::B32), 2 * Size));
  L.write(Ops[0], ScalarType::U32, R);
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerConvert(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Op == Opcode::Cvt && I.has(Modifier::Pack))
    return lowerConvertPack(L, I);
  if (I.Op != Opcode::Cvt || I.typeCount() != 2)
    return false;
  bool Handled;
  if (lowerNarrowConvert(L, I, Handled) || Handled)
    return true;
  if (I.Operands.size() != 2)
    return false;
  ScalarType D = I.type(0), S = I.type(1);
  llvm::Type *DF = L.floatType(D), *SF = L.floatType(S);
  if ((ptx::isFloat(D) && !DF) || (ptx::isFloat(S) && !SF))
    return L.unsupported(I);
  if (SF && !DF)
    return lowerFloatToInt(L, I);
  if (!SF && DF)
    return lowerIntToFloat(L, I, DF);
  if (SF && DF)
    return lowerFloatToFloat(L, I, DF, SF);
  return lowerIntToInt(L, I);
}
