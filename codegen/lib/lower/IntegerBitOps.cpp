// Integer bit manipulation, lowered inline following the PTX ISA pseudo-code: popc/clz/brev, bfind
// (.shiftamt), bfe/bfi, bmsk/szext, prmt (all modes, constant or register selectors), shf (.l/.r, .wrap/.clamp),
// lop3 (any immLut, optional .and/.or predicate result), dp4a/dp2a. fns calls a runtime helper
// (exec/IntegerHelpers.cpp).
#include "FamilyLowering.h"

namespace ptxforge::codegen::detail {
bool lowerIntegerBits(FunctionLowering &L, const ptx::Instruction &I); // called from IntegerOps.cpp
} // namespace ptxforge::codegen::detail

namespace {

/// Operand a (1) of a bit instruction, read as its type, with that type and its width.
struct Source {
  llvm::Value *A;
  llvm::Type *Ty;
  unsigned Width;
};
Source readSource(FunctionLowering &L, const ptx::Instruction &I) {
  llvm::Value *A = L.read(I.Operands[1], I.type());
  return {A, A->getType(), A->getType()->getIntegerBitWidth()};
}

/// Operands a and b (1 and 2) of a two-source bit instruction, read as its type, and that type's width.
struct Sources {
  llvm::Value *A, *B;
  llvm::Type *Ty;
  unsigned Width;
};
Sources readSources(FunctionLowering &L, const ptx::Instruction &I) {
  Source S = readSource(L, I);
  return {S.A, L.read(I.Operands[2], I.type()), S.Ty, S.Width};
}

bool isSigned(ScalarType T) { return ptx::kindOf(T) == ptx::TypeKind::Signed; }

llvm::Value *cint(llvm::Type *Ty, uint64_t V) { return llvm::ConstantInt::get(Ty, V); }

/// popc/clz (u32 results), brev.
bool lowerBitCount(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  llvm::Value *X = L.read(Ops[1], T);
  if (I.Op == Opcode::Brev) {
    L.write(Ops[0], T, B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, X));
    return true;
  }
  llvm::Value *R = I.Op == Opcode::Popc ? B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, X)
                                        : B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, X, B.getFalse());
  L.write(Ops[0], ScalarType::U32, B.CreateZExtOrTrunc(R, B.getInt32Ty()));
  return true;
}

/// bfind{.shiftamt}: position of the most significant non-sign bit, 0xffffffff when there is none.
bool lowerBfind(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  auto [X, Ty, W] = readSource(L, I);
  if (isSigned(T))
    X = B.CreateSelect(B.CreateICmpSLT(X, cint(Ty, 0)), B.CreateNot(X), X);
  llvm::Value *Lz = B.CreateZExtOrTrunc(B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, X, B.getTrue()), B.getInt32Ty());
  llvm::Value *R = I.has(Modifier::Shiftamt) ? Lz : B.CreateSub(B.getInt32(W - 1), Lz);
  R = B.CreateSelect(B.CreateICmpEQ(X, cint(Ty, 0)), B.getInt32(0xffffffffu), R);
  L.write(Ops[0], ScalarType::U32, R);
  return true;
}

/// Start and length operands of bfe/bfi as i64 values. The ISA restricts both to 0..255 (`& 0xff`), which the
/// GPU does for 32-bit types; for 64-bit types it uses the whole u32 (recorded in int/bfe_64: start 260 or
/// length 264 are not wrapped).
std::pair<llvm::Value *, llvm::Value *> fieldPosLen(FunctionLowering &L, const ptx::Operand &OP, const ptx::Operand &OL,
                                                    unsigned W) {
  auto &B = L.b();
  llvm::Value *P = L.read(OP, ScalarType::U32), *N = L.read(OL, ScalarType::U32);
  if (W <= 32) {
    P = B.CreateAnd(P, 0xff);
    N = B.CreateAnd(N, 0xff);
  }
  return {B.CreateZExt(P, B.getInt64Ty()), B.CreateZExt(N, B.getInt64Ty())};
}

/// The field of len bits at pos clipped to the register: returns (pos < W, effective length, low mask of that
/// length as iW, pos as a shift amount valid in iW).
struct Field {
  llvm::Value *InRange, *Len, *LowMask, *Shift;
};
Field clipField(FunctionLowering &L, llvm::Value *Pos, llvm::Value *Len, llvm::Type *Ty) {
  auto &B = L.b();
  unsigned W = Ty->getIntegerBitWidth();
  llvm::Type *I64 = B.getInt64Ty();
  llvm::Value *InRange = B.CreateICmpULT(Pos, cint(I64, W));
  llvm::Value *SafePos = B.CreateSelect(InRange, Pos, cint(I64, 0));
  llvm::Value *Avail = B.CreateSub(cint(I64, W), SafePos);
  llvm::Value *Eff = B.CreateSelect(InRange, B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Len, Avail), cint(I64, 0));
  // Eff in [0, W]: mask = Eff ? ~0 >> (W - Eff) : 0.
  llvm::Value *Ones = llvm::Constant::getAllOnesValue(Ty);
  llvm::Value *Sh = B.CreateTrunc(
      B.CreateSub(cint(I64, W), B.CreateSelect(B.CreateICmpEQ(Eff, cint(I64, 0)), cint(I64, W), Eff)), Ty);
  llvm::Value *Mask = B.CreateSelect(B.CreateICmpEQ(Eff, cint(I64, 0)), cint(Ty, 0), B.CreateLShr(Ones, Sh));
  return {InRange, Eff, Mask, B.CreateZExtOrTrunc(SafePos, Ty)};
}

/// bfe.type d, a, pos, len.
bool lowerBfe(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  auto [A, Ty, W] = readSource(L, I);
  auto [Pos, Len] = fieldPosLen(L, Ops[2], Ops[3], W);
  Field F = clipField(L, Pos, Len, Ty);
  llvm::Value *Shifted = B.CreateSelect(F.InRange, B.CreateLShr(A, F.Shift), cint(Ty, 0));
  llvm::Value *R = B.CreateAnd(Shifted, F.LowMask);
  if (isSigned(T)) {
    // sbit = a[min(pos + len - 1, msb)] (0 when len == 0) fills every bit above the field.
    llvm::Type *I64 = B.getInt64Ty();
    llvm::Value *Top = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateSub(B.CreateAdd(Pos, Len), cint(I64, 1)),
                                               cint(I64, W - 1));
    llvm::Value *Sbit = B.CreateTrunc(B.CreateLShr(A, B.CreateZExtOrTrunc(Top, Ty)), B.getInt1Ty());
    Sbit = B.CreateAnd(Sbit, B.CreateICmpNE(Len, cint(I64, 0)));
    R = B.CreateSelect(Sbit, B.CreateOr(R, B.CreateNot(F.LowMask)), R);
  }
  L.write(Ops[0], T, R);
  return true;
}

/// bfi.type f, a, b, pos, len: the low len bits of a inserted into b at pos.
bool lowerBfi(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  Sources S = readSources(L, I);
  auto [Pos, Len] = fieldPosLen(L, I.Operands[3], I.Operands[4], S.Width);
  Field F = clipField(L, Pos, Len, S.Ty);
  llvm::Value *Mask = B.CreateShl(F.LowMask, F.Shift);
  llvm::Value *R = B.CreateOr(B.CreateAnd(S.B, B.CreateNot(Mask)), B.CreateAnd(B.CreateShl(S.A, F.Shift), Mask));
  L.write(I.Operands[0], I.type(), R);
  return true;
}

/// bmsk.mode.b32 d, a, b: a mask of b bits starting at bit a (ISA pseudo-code).
bool lowerBmsk(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Value *A = L.read(Ops[1], ScalarType::U32), *Bv = L.read(Ops[2], ScalarType::U32);
  llvm::Value *Ones = B.getInt32(0xffffffffu), *Zero = B.getInt32(0);
  llvm::Value *A1 = B.CreateAnd(A, 31), *B1 = B.CreateAnd(Bv, 31);
  llvm::Value *Mask0 = B.CreateShl(Ones, A1);
  llvm::Value *Sum = B.CreateAdd(A1, B1);
  llvm::Value *Ovf = B.CreateICmpUGE(Sum, B.getInt32(32));
  llvm::Value *Mask1 = B.CreateShl(Ones, B.CreateAnd(Sum, 31)); // only used when Sum < 32
  if (I.has(Modifier::Clamp)) {
    llvm::Value *PosOvf = B.CreateICmpUGE(A, B.getInt32(32));
    Mask0 = B.CreateSelect(PosOvf, Zero, Mask0);
    Ovf = B.CreateOr(Ovf, B.CreateOr(PosOvf, B.CreateICmpUGE(Bv, B.getInt32(32))));
  }
  Mask1 = B.CreateSelect(Ovf, Zero, B.CreateSelect(B.CreateICmpEQ(B1, Zero), Ones, Mask1));
  L.write(Ops[0], ScalarType::B32, B.CreateAnd(Mask0, B.CreateNot(Mask1)));
  return true;
}

/// szext.mode.type d, a, b: sign- or zero-extend the low b bits of a (ISA pseudo-code).
bool lowerSzext(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  llvm::Value *A = L.read(Ops[1], ScalarType::U32), *Bv = L.read(Ops[2], ScalarType::U32);
  llvm::Value *Zero = B.getInt32(0);
  llvm::Value *B1 = B.CreateAnd(Bv, 31);
  llvm::Value *TooLarge = I.has(Modifier::Clamp) ? B.CreateICmpUGE(Bv, B.getInt32(32)) : B.getFalse();
  llvm::Value *Mask = B.CreateSelect(TooLarge, Zero, B.CreateShl(B.getInt32(0xffffffffu), B1));
  llvm::Value *R = B.CreateAnd(A, B.CreateNot(Mask));
  if (isSigned(T)) {
    llvm::Value *SignPos = B.CreateAnd(B.CreateSub(B1, B.getInt32(1)), 31);
    llvm::Value *Sbit = B.CreateTrunc(B.CreateLShr(A, SignPos), B.getInt1Ty());
    Sbit = B.CreateAnd(Sbit, B.CreateAnd(B.CreateICmpNE(B1, Zero), B.CreateNot(TooLarge)));
    R = B.CreateSelect(Sbit, B.CreateOr(R, Mask), R);
  }
  L.write(Ops[0], T, R);
  return true;
}

/// prmt.b32{.mode} d, a, b, c: bytes of {b, a} picked by c.
bool lowerPrmt(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Type *I64 = B.getInt64Ty(), *I32 = B.getInt32Ty();
  llvm::Value *Src = B.CreateOr(B.CreateShl(B.CreateZExt(L.read(Ops[2], ScalarType::B32), I64), 32),
                                B.CreateZExt(L.read(Ops[1], ScalarType::B32), I64));
  llvm::Value *C = L.read(Ops[3], ScalarType::B32);
  enum { Generic, F4e, B4e, Rc8, Ecl, Ecr, Rc16 } Mode = Generic;
  if (I.has(Modifier::F4e))
    Mode = F4e;
  else if (I.has(Modifier::B4e))
    Mode = B4e;
  else if (I.has(Modifier::Rc8))
    Mode = Rc8;
  else if (I.has(Modifier::Ecl))
    Mode = Ecl;
  else if (I.has(Modifier::Ecr))
    Mode = Ecr;
  else if (I.has(Modifier::Rc16))
    Mode = Rc16;
  llvm::Value *Sel = B.CreateAnd(C, 3);
  llvm::Value *R = B.getInt32(0);
  for (unsigned K = 0; K < 4; ++K) {
    llvm::Value *Idx, *Sign = nullptr;
    switch (Mode) {
    case Generic: {
      llvm::Value *Nib = B.CreateAnd(B.CreateLShr(C, 4 * K), 0xf);
      Idx = B.CreateAnd(Nib, 7);
      Sign = B.CreateICmpNE(B.CreateAnd(Nib, 8), B.getInt32(0));
      break;
    }
    case F4e:
      Idx = B.CreateAnd(B.CreateAdd(Sel, B.getInt32(K)), 7);
      break;
    case B4e:
      Idx = B.CreateAnd(B.CreateSub(B.CreateAdd(Sel, B.getInt32(8)), B.getInt32(K)), 7);
      break;
    case Rc8:
      Idx = Sel;
      break;
    case Ecl:
      Idx = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Sel, B.getInt32(K));
      break;
    case Ecr:
      Idx = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Sel, B.getInt32(K));
      break;
    case Rc16:
      Idx = B.CreateOr(B.CreateShl(B.CreateAnd(Sel, 1), 1), B.getInt32(K & 1));
      break;
    }
    llvm::Value *Byte = B.CreateTrunc(B.CreateLShr(Src, B.CreateZExt(B.CreateShl(Idx, 3), I64)), B.getInt8Ty());
    if (Sign) // msb of the selector: replicate the byte's sign
      Byte = B.CreateSelect(Sign, B.CreateAShr(Byte, 7), Byte);
    R = B.CreateOr(R, B.CreateShl(B.CreateZExt(Byte, I32), 8 * K));
  }
  L.write(Ops[0], ScalarType::B32, R);
  return true;
}

/// shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: funnel shift of {b, a}.
bool lowerShf(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto [A, Bv, Ty, W] = readSources(L, I);
  llvm::Value *C = L.read(I.Operands[3], ScalarType::U32);
  bool Left = I.has(Modifier::L);
  llvm::Value *R;
  if (!I.has(Modifier::Clamp)) {
    // .wrap: n = c mod W, exactly LLVM's funnel shifts.
    llvm::Value *N = B.CreateZExtOrTrunc(B.CreateAnd(C, W - 1), Ty);
    R = B.CreateIntrinsic(Left ? llvm::Intrinsic::fshl : llvm::Intrinsic::fshr, {Ty}, {Bv, A, N});
  } else {
    // .clamp: n = min(c, W) shifts the 2W-bit value {b, a}; n == W gives a (left) or b (right).
    llvm::Type *Wide = B.getIntNTy(2 * W);
    llvm::Value *N = B.CreateZExtOrTrunc(B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, C, B.getInt32(W)), Wide);
    llvm::Value *V = B.CreateOr(B.CreateShl(B.CreateZExt(Bv, Wide), W), B.CreateZExt(A, Wide));
    R = Left ? B.CreateLShr(B.CreateShl(V, N), W) : B.CreateLShr(V, N);
    R = B.CreateTrunc(R, Ty);
  }
  L.write(I.Operands[0], I.type(), R);
  return true;
}

/// The 3-input function with truth table Lut (bit a*4 + b*2 + c) of the values Vars[0..N), built by Shannon
/// expansion on the first variable with the usual simplifications.
llvm::Value *lut3(FunctionLowering &L, unsigned Lut, llvm::ArrayRef<llvm::Value *> Vars) {
  auto &B = L.b();
  unsigned N = Vars.size();
  unsigned Bits = 1u << N, Full = (1u << Bits) - 1;
  llvm::Type *Ty = Vars.empty() ? nullptr : Vars[0]->getType();
  Lut &= Full;
  if (N == 0)
    return nullptr; // unreachable: N == 0 is handled by the constant cases of the caller
  if (Lut == 0)
    return cint(Ty, 0);
  if (Lut == Full)
    return llvm::Constant::getAllOnesValue(Ty);
  unsigned Half = Bits / 2, HalfMask = (1u << Half) - 1;
  unsigned Hi = (Lut >> Half) & HalfMask, Lo = Lut & HalfMask;
  llvm::Value *V = Vars[0];
  llvm::ArrayRef<llvm::Value *> Rest = Vars.drop_front();
  auto sub = [&](unsigned T) -> llvm::Value * {
    if (Rest.empty())
      return T ? llvm::Constant::getAllOnesValue(Ty) : cint(Ty, 0);
    return lut3(L, T, Rest);
  };
  if (Hi == Lo)
    return sub(Lo);
  if (Hi == (~Lo & HalfMask))
    return B.CreateXor(V, sub(Lo));
  if (Lo == 0)
    return B.CreateAnd(V, sub(Hi));
  if (Hi == 0)
    return B.CreateAnd(B.CreateNot(V), sub(Lo));
  if (Hi == HalfMask)
    return B.CreateOr(V, sub(Lo));
  if (Lo == HalfMask)
    return B.CreateOr(B.CreateNot(V), sub(Hi));
  // v ? H : L as a bit select: L ^ (v & (H ^ L)).
  llvm::Value *HV = sub(Hi), *LV = sub(Lo);
  return B.CreateXor(LV, B.CreateAnd(V, B.CreateXor(HV, LV)));
}

/// lop3.b32 d, a, b, c, immLut and lop3.{and,or}.b32 d|p, a, b, c, immLut, q.
bool lowerLop3(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (Ops.size() < 5 || Ops[4].Kind != ptx::OperandKind::Immediate)
    return L.unsupported(I, "immLut must be an integer constant");
  llvm::Value *Vars[3] = {L.read(Ops[1], ScalarType::B32), L.read(Ops[2], ScalarType::B32),
                          L.read(Ops[3], ScalarType::B32)};
  llvm::Value *D = lut3(L, static_cast<unsigned>(Ops[4].Bits & 0xff), Vars);
  const ptx::Operand &Dst = Ops[0];
  if (Dst.Kind == ptx::OperandKind::RegPair) {
    ptx::Operand DR = Dst, PR = Dst;
    DR.Kind = PR.Kind = ptx::OperandKind::Register;
    PR.Reg = Dst.Reg2;
    llvm::Value *NZ = B.CreateICmpNE(D, B.getInt32(0));
    llvm::Value *Q = Ops.size() > 5 ? L.read(Ops[5], ScalarType::Pred) : B.getFalse();
    llvm::Value *P = I.has(Modifier::And) ? B.CreateAnd(NZ, Q) : B.CreateOr(NZ, Q);
    L.write(DR, ScalarType::B32, D);
    L.write(PR, ScalarType::Pred, P);
    return true;
  }
  L.write(Dst, ScalarType::B32, D);
  return true;
}

/// dp4a.atype.btype d, a, b, c and dp2a.{lo,hi}.atype.btype d, a, b, c (32-bit wrapping accumulation).
bool lowerDp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool SA = isSigned(I.type(0)), SB = isSigned(I.type(1));
  llvm::Value *A = L.read(Ops[1], ScalarType::B32), *Bv = L.read(Ops[2], ScalarType::B32);
  llvm::Value *C = L.read(Ops[3], ScalarType::B32);
  auto ext = [&](llvm::Value *V, bool S, unsigned N) {
    auto *VT = llvm::FixedVectorType::get(B.getInt32Ty(), N);
    return S ? B.CreateSExt(V, VT) : B.CreateZExt(V, VT);
  };
  llvm::Value *Bytes = B.CreateBitCast(Bv, llvm::FixedVectorType::get(B.getInt8Ty(), 4));
  llvm::Value *VA, *VB;
  if (I.Op == Opcode::Dp4a) {
    VA = ext(B.CreateBitCast(A, llvm::FixedVectorType::get(B.getInt8Ty(), 4)), SA, 4);
    VB = ext(Bytes, SB, 4);
  } else {
    VA = ext(B.CreateBitCast(A, llvm::FixedVectorType::get(B.getInt16Ty(), 2)), SA, 2);
    int First = I.has(Modifier::Hi) ? 2 : 0;
    VB = ext(B.CreateShuffleVector(Bytes, {First, First + 1}), SB, 2);
  }
  llvm::Value *Sum = B.CreateAddReduce(B.CreateMul(VA, VB));
  L.write(Ops[0], I.type(0) == ScalarType::S32 || I.type(1) == ScalarType::S32 ? ScalarType::S32 : ScalarType::U32,
          B.CreateAdd(C, Sum));
  return true;
}

/// fns.b32 d, mask, base, offset: the runtime helper walks the mask (ISA pseudo-code).
bool lowerFns(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Value *R =
      L.callHelper("ptxrt_fns", B.getInt32Ty(),
                   {L.read(Ops[1], ScalarType::B32), L.read(Ops[2], ScalarType::U32), L.read(Ops[3], ScalarType::S32)});
  L.write(Ops[0], ScalarType::B32, R);
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerIntegerBits(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Popc:
  case Opcode::Clz:
  case Opcode::Brev:
    return lowerBitCount(L, I);
  case Opcode::Bfind:
    return lowerBfind(L, I);
  case Opcode::Bfe:
    return lowerBfe(L, I);
  case Opcode::Bfi:
    return lowerBfi(L, I);
  case Opcode::Bmsk:
    return lowerBmsk(L, I);
  case Opcode::Szext:
    return lowerSzext(L, I);
  case Opcode::Prmt:
    return lowerPrmt(L, I);
  case Opcode::Shf:
    return lowerShf(L, I);
  case Opcode::Lop3:
    return lowerLop3(L, I);
  case Opcode::Dp4a:
  case Opcode::Dp2a:
    return lowerDp(L, I);
  case Opcode::Fns:
    return lowerFns(L, I);
  default:
    return false;
  }
}
