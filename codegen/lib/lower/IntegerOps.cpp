// Integer arithmetic, comparisons and selects: add/sub (.sat, .cc and addc/subc carry chains), mul/mad (lo, hi,
// wide, .cc/madc), mul24/mad24, sad, div/rem, min/max (3 inputs, .relu, s16x2/u16x2), abs/neg, logic ops,
// shifts, setp/set/selp/slct (an f32/f64 comparison is FloatOps.cpp's compareFloat). The bit-manipulation
// instructions (bfe, prmt, lop3, ...) are in IntegerBitOps.cpp.
#include "FamilyLowering.h"

namespace ptxforge::codegen::detail {
/// Bit manipulation: popc/clz/brev/bfind/fns/bfe/bfi/bmsk/szext/prmt/shf/lop3/dp4a/dp2a (IntegerBitOps.cpp).
bool lowerIntegerBits(FunctionLowering &L, const ptx::Instruction &I);
/// vadd ... vset4 (VideoOps.cpp).
bool lowerVideo(FunctionLowering &L, const ptx::Instruction &I);
/// The lanes of an f16/bf16(x2) comparison (HalfOps.cpp).
llvm::SmallVector<llvm::Value *, 2> compareHalf(FunctionLowering &L, const ptx::Instruction &I, ptx::ScalarType T,
                                                const ptx::Operand &OA, const ptx::Operand &OB);
} // namespace ptxforge::codegen::detail

namespace {

bool isSigned(ScalarType T) { return ptx::kindOf(T) == ptx::TypeKind::Signed; }

bool isPacked16(ScalarType T) { return T == ScalarType::S16x2 || T == ScalarType::U16x2; }

/// Floating types the integer family compares itself (f16/bf16 and packed halves belong to the half family).
bool isWideFloat(ScalarType T) { return T == ScalarType::F32 || T == ScalarType::F64; }

bool isHalfFloat(ScalarType T) {
  return T == ScalarType::F16 || T == ScalarType::BF16 || T == ScalarType::F16x2 || T == ScalarType::BF16x2;
}

ScalarType widened(ScalarType T) {
  switch (T) {
  case ScalarType::U16:
    return ScalarType::U32;
  case ScalarType::S16:
    return ScalarType::S32;
  case ScalarType::U32:
    return ScalarType::U64;
  case ScalarType::S32:
    return ScalarType::S64;
  case ScalarType::B16:
    return ScalarType::B32;
  case ScalarType::B32:
    return ScalarType::B64;
  default:
    return T;
  }
}

llvm::Value *cint(llvm::Type *Ty, uint64_t V) { return llvm::ConstantInt::get(Ty, V); }

llvm::Intrinsic::ID saturatingAddSub(bool Sub, bool Signed) {
  if (Sub)
    return Signed ? llvm::Intrinsic::ssub_sat : llvm::Intrinsic::usub_sat;
  return Signed ? llvm::Intrinsic::sadd_sat : llvm::Intrinsic::uadd_sat;
}

llvm::Intrinsic::ID minMaxIntrinsic(Opcode Op, bool Signed) {
  if (Op == Opcode::Min)
    return Signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin;
  return Signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax;
}

/// The product a*b of mul/mad: .lo (low half), .hi (high half) or .wide (double width).
llvm::Value *product(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *A, llvm::Value *Bv, ScalarType T,
                     ScalarType &ResultType) {
  auto &B = L.b();
  unsigned W = A->getType()->getIntegerBitWidth();
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

/// The 48-bit product of mul24/mad24 (operands are the low 24 bits, sign- or zero-extended), .lo: bits 31..0,
/// .hi: bits 47..16.
llvm::Value *product24(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *A, llvm::Value *Bv, ScalarType T) {
  auto &B = L.b();
  llvm::Type *I24 = B.getIntNTy(24), *I64 = B.getInt64Ty();
  auto ext = [&](llvm::Value *X) {
    X = B.CreateTrunc(X, I24);
    return isSigned(T) ? B.CreateSExt(X, I64) : B.CreateZExt(X, I64);
  };
  llvm::Value *P = B.CreateMul(ext(A), ext(Bv));
  if (I.has(Modifier::Hi))
    P = B.CreateLShr(P, 16);
  return B.CreateTrunc(P, B.getInt32Ty());
}

// ---- CC.CF: the carry flag of add.cc/addc/sub.cc/subc/mad.cc/madc ----

/// The function's carry-flag slot: an i1 alloca at the top of the entry block, created on first use (SROA
/// turns it into SSA values). Marked with metadata so later carry instructions find it again.
llvm::AllocaInst *carryFlag(FunctionLowering &L) {
  llvm::Function *F = L.function();
  llvm::BasicBlock &Entry = F->getEntryBlock();
  unsigned Kind = L.ctx().getMDKindID("ptxforge.cc.cf");
  for (llvm::Instruction &Inst : Entry)
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(&Inst))
      if (A->getMetadata(Kind))
        return A;
  llvm::IRBuilder<> EB(&Entry, Entry.begin());
  llvm::AllocaInst *A = EB.CreateAlloca(EB.getInt1Ty(), nullptr, "cc.cf");
  A->setMetadata(Kind, llvm::MDNode::get(L.ctx(), {}));
  EB.CreateStore(EB.getFalse(), A); // CC is undefined before the first .cc instruction: start from 0
  return A;
}

/// a + b + cin with the carry out of the whole operation.
std::pair<llvm::Value *, llvm::Value *> addWithCarry(FunctionLowering &L, llvm::Value *A, llvm::Value *Bv,
                                                     llvm::Value *CarryIn) {
  auto &B = L.b();
  llvm::Value *R = B.CreateBinaryIntrinsic(llvm::Intrinsic::uadd_with_overflow, A, Bv);
  llvm::Value *V = B.CreateExtractValue(R, 0), *C = B.CreateExtractValue(R, 1);
  if (CarryIn) {
    llvm::Value *R2 =
        B.CreateBinaryIntrinsic(llvm::Intrinsic::uadd_with_overflow, V, B.CreateZExt(CarryIn, V->getType()));
    V = B.CreateExtractValue(R2, 0);
    C = B.CreateOr(C, B.CreateExtractValue(R2, 1));
  }
  return {V, C};
}

/// add.cc, addc{.cc}, sub.cc, subc{.cc}, mad{.lo,.hi}.cc, madc{.lo,.hi}{.cc}.
///
/// The GPU has one carry flag with carry semantics for both directions: a subtraction is a + ~b + 1
/// (sub.cc) or a + ~b + CF (subc), and CF is its carry out, i.e. NOT borrow. In a pure sub.cc/subc chain this is
/// exactly the ISA's borrow description; mixed chains (sub.cc then addc, add.cc then subc) were checked on an
/// H100: addc after sub.cc adds 1 when there was no borrow.
bool lowerCarryOp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  bool CarryIn = I.Op == Opcode::Addc || I.Op == Opcode::Subc || I.Op == Opcode::Madc;
  bool Sub = I.Op == Opcode::Sub || I.Op == Opcode::Subc;
  llvm::AllocaInst *CF = carryFlag(L);
  llvm::Value *Cin = nullptr;
  if (CarryIn)
    Cin = B.CreateLoad(B.getInt1Ty(), CF);
  else if (Sub)
    Cin = B.getTrue();
  llvm::Value *A, *Bv;
  if (I.Op == Opcode::Mad || I.Op == Opcode::Madc) {
    ScalarType RT;
    A = product(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T, RT);
    Bv = L.read(Ops[3], T);
  } else {
    A = L.read(Ops[1], T);
    Bv = L.read(Ops[2], T);
    if (Sub)
      Bv = B.CreateNot(Bv);
  }
  auto [V, Cout] = addWithCarry(L, A, Bv, Cin);
  if (I.has(Modifier::Cc))
    B.CreateStore(Cout, CF);
  L.write(Ops[0], T, V);
  return true;
}

// ---- comparisons ----

/// `a CmpOp b` for integer operands of type T; null when the instruction has no integer comparison operator
/// (the unordered ones, num and nan are for floats only).
llvm::Value *compareInteger(FunctionLowering &L, const ptx::Instruction &I, ScalarType T, const ptx::Operand &OA,
                            const ptx::Operand &OB) {
  using P = llvm::CmpInst::Predicate;
  struct IntegerPredicate {
    Modifier Op;
    P Signed, Unsigned;
  };
  static const IntegerPredicate Preds[] = {
      {Modifier::Eq, P::ICMP_EQ, P::ICMP_EQ},   {Modifier::Ne, P::ICMP_NE, P::ICMP_NE},
      {Modifier::Lt, P::ICMP_SLT, P::ICMP_ULT}, {Modifier::Le, P::ICMP_SLE, P::ICMP_ULE},
      {Modifier::Gt, P::ICMP_SGT, P::ICMP_UGT}, {Modifier::Ge, P::ICMP_SGE, P::ICMP_UGE},
      {Modifier::Lo, P::ICMP_ULT, P::ICMP_ULT}, {Modifier::Ls, P::ICMP_ULE, P::ICMP_ULE},
      {Modifier::Hi, P::ICMP_UGT, P::ICMP_UGT}, {Modifier::Hs, P::ICMP_UGE, P::ICMP_UGE}};
  for (const IntegerPredicate &Pr : Preds)
    if (I.has(Pr.Op)) {
      llvm::Value *A = L.read(OA, T), *Bv = L.read(OB, T);
      return L.b().CreateICmp(isSigned(T) ? Pr.Signed : Pr.Unsigned, A, Bv);
    }
  return nullptr;
}

/// `a CmpOp b` for operands of type T, one value per lane (two for f16x2/bf16x2, low lane first); empty when
/// the form is not valid here.
llvm::SmallVector<llvm::Value *, 2> compare(FunctionLowering &L, const ptx::Instruction &I, ScalarType T,
                                            const ptx::Operand &OA, const ptx::Operand &OB) {
  if (isHalfFloat(T))
    return compareHalf(L, I, T, OA, OB);
  llvm::Value *R = nullptr;
  if (isWideFloat(T))
    R = compareFloat(L, I, T, OA, OB);
  else if (ptx::isInteger(T))
    R = compareInteger(L, I, T, OA, OB);
  if (!R)
    return {};
  return {R};
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

bool lowerSetp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  auto &Ops = I.Operands;
  llvm::SmallVector<llvm::Value *, 2> R = compare(L, I, T, Ops[1], Ops[2]);
  if (R.empty())
    return L.unsupported(I);
  const ptx::Operand *C = Ops.size() > 3 ? &Ops[3] : nullptr;
  if (Ops[0].Kind == ptx::OperandKind::RegPair) {
    // p = t BoolOp c and q = !t BoolOp c; for the x2 types p takes the low lane's t and q the high lane's.
    ptx::Operand P = Ops[0], Q = Ops[0];
    P.Kind = Q.Kind = ptx::OperandKind::Register;
    Q.Reg = Ops[0].Reg2;
    llvm::Value *PV = combine(L, I, R[0], C), *QV = combine(L, I, R.size() > 1 ? R[1] : B.CreateNot(R[0]), C);
    L.write(P, ScalarType::Pred, PV);
    L.write(Q, ScalarType::Pred, QV);
  } else {
    L.write(Ops[0], ScalarType::Pred, combine(L, I, R[0], C));
  }
  return true;
}

/// What set writes for true in a destination (or a 16-bit lane of it) of type DT: 1.0 for the float types,
/// all ones for the integers.
llvm::Value *setTrueValue(llvm::IRBuilderBase &B, ScalarType DT, unsigned Bits) {
  switch (DT) {
  case ScalarType::F32:
    return B.getInt32(0x3f800000u);
  case ScalarType::F16:
  case ScalarType::F16x2:
    return B.getIntN(Bits, 0x3c00);
  case ScalarType::BF16:
  case ScalarType::BF16x2:
    return B.getIntN(Bits, 0x3f80);
  default:
    return llvm::Constant::getAllOnesValue(B.getIntNTy(Bits));
  }
}

/// set.CmpOp{.BoolOp}.dtype.stype: 1.0 (f32/f16/bf16) or all ones (integers) when true, 0 when false; an
/// x2 source type compares and writes each 16-bit lane of the destination on its own.
bool lowerSet(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType DT = I.type(0), ST = I.type(1);
  auto &Ops = I.Operands;
  llvm::SmallVector<llvm::Value *, 2> R = compare(L, I, ST, Ops[1], Ops[2]);
  if (R.empty() || (DT != ScalarType::F32 && !isHalfFloat(DT) && !ptx::isInteger(DT)))
    return L.unsupported(I);
  const ptx::Operand *C = Ops.size() > 3 ? &Ops[3] : nullptr;
  unsigned W = ptx::bitWidth(DT);
  unsigned LaneBits = W / R.size();
  llvm::Type *Ty = B.getIntNTy(W);
  llvm::Value *D = cint(Ty, 0);
  for (unsigned K = 0; K < R.size(); ++K) {
    llvm::Value *Lane = B.CreateSelect(combine(L, I, R[K], C), setTrueValue(B, DT, LaneBits), B.getIntN(LaneBits, 0));
    D = B.CreateOr(D, B.CreateShl(B.CreateZExt(Lane, Ty), K * LaneBits));
  }
  L.write(Ops[0], DT, D);
  return true;
}

/// slct.dtype.s32 / slct{.ftz}.dtype.f32: d = c >= 0 ? a : b.
bool lowerSlct(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType DT = I.type(0), CT = I.type(1);
  auto &Ops = I.Operands;
  llvm::Value *Cond;
  if (CT == ScalarType::F32) {
    llvm::Value *C = L.readFloat(Ops[3], CT);
    if (I.has(Modifier::Ftz))
      C = flushDenormal(L, C);
    Cond = B.CreateFCmpOGE(C, llvm::ConstantFP::get(C->getType(), 0.0)); // NaN selects b
  } else if (ptx::isInteger(CT)) {
    llvm::Value *C = L.read(Ops[3], CT);
    Cond = B.CreateICmpSGE(C, cint(C->getType(), 0));
  } else {
    return L.unsupported(I);
  }
  L.write(Ops[0], DT, B.CreateSelect(Cond, L.read(Ops[1], DT), L.read(Ops[2], DT)));
  return true;
}

// ---- s16x2 / u16x2 ----

/// add/sub/min/max on two 16-bit lanes (min/max may have a third input and .relu).
bool lowerPacked16(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  bool S = T == ScalarType::S16x2;
  auto &Ops = I.Operands;
  auto *VT = llvm::FixedVectorType::get(B.getInt16Ty(), 2);
  auto in = [&](unsigned K) { return B.CreateBitCast(L.read(Ops[K], ScalarType::B32), VT); };
  auto out = [&](llvm::Value *V) {
    L.write(Ops[0], ScalarType::B32, B.CreateBitCast(V, B.getInt32Ty()));
    return true;
  };
  switch (I.Op) {
  case Opcode::Add:
  case Opcode::Sub: {
    bool IsSub = I.Op == Opcode::Sub;
    if (I.has(Modifier::Sat))
      return out(B.CreateBinaryIntrinsic(saturatingAddSub(IsSub, S), in(1), in(2)));
    return out(IsSub ? B.CreateSub(in(1), in(2)) : B.CreateAdd(in(1), in(2)));
  }
  case Opcode::Min:
  case Opcode::Max: {
    llvm::Intrinsic::ID ID = minMaxIntrinsic(I.Op, S);
    llvm::Value *R = B.CreateBinaryIntrinsic(ID, in(1), in(2));
    if (Ops.size() > 3)
      R = B.CreateBinaryIntrinsic(ID, R, in(3));
    if (I.has(Modifier::Relu))
      R = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, R, llvm::Constant::getNullValue(VT));
    return out(R);
  }
  default:
    return false;
  }
}

// ---- arithmetic and logic, one function per opcode group ----

/// d = Fn(a, b) for a two-input operation of type T.
template <typename Fn> bool lowerBinary(FunctionLowering &L, const ptx::Instruction &I, ScalarType T, Fn F) {
  auto &Ops = I.Operands;
  L.write(Ops[0], T, F(L.read(Ops[1], T), L.read(Ops[2], T)));
  return true;
}

/// selp: d = c ? a : b.
bool lowerSelp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  ScalarType T = I.type();
  llvm::Value *C = L.read(Ops[3], ScalarType::Pred);
  L.write(Ops[0], T, B.CreateSelect(C, L.read(Ops[1], T), L.read(Ops[2], T)));
  return true;
}

/// add/sub (wrapping, or .sat).
bool lowerAddSub(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  bool Sub = I.Op == Opcode::Sub;
  if (I.has(Modifier::Sat)) {
    llvm::Intrinsic::ID ID = saturatingAddSub(Sub, isSigned(T));
    return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateBinaryIntrinsic(ID, A, Bv); });
  }
  if (Sub)
    return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateSub(A, Bv); });
  return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateAdd(A, Bv); });
}

/// mul/mad (.lo, .hi, .wide), mul24/mad24 and sad.
bool lowerMultiply(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  switch (I.Op) {
  case Opcode::Mul: {
    ScalarType RT;
    llvm::Value *P = product(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T, RT);
    L.write(Ops[0], RT, P);
    return true;
  }
  case Opcode::Mad: {
    // mad.hi.sat.s32: the GPU wraps like mad.hi.s32 (recorded: int/mad_32 has 158 overflowing cases, none
    // saturated), so .sat changes nothing.
    ScalarType RT;
    llvm::Value *P = product(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T, RT);
    L.write(Ops[0], RT, B.CreateAdd(P, L.read(Ops[3], RT)));
    return true;
  }
  case Opcode::Mul24:
    L.write(Ops[0], T, product24(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T));
    return true;
  case Opcode::Mad24: {
    // Unlike mad.hi.sat, mad24.hi.sat.s32 does saturate t<47..16> + c on the GPU (checked on an H100).
    llvm::Value *P = product24(L, I, L.read(Ops[1], T), L.read(Ops[2], T), T), *C = L.read(Ops[3], T);
    L.write(Ops[0], T,
            I.has(Modifier::Sat) && isSigned(T) ? B.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_sat, P, C)
                                                : B.CreateAdd(P, C));
    return true;
  }
  default: { // sad: d = c + |a - b|, the difference taken in the type's width.
    llvm::Value *A = L.read(Ops[1], T), *Bv = L.read(Ops[2], T);
    llvm::Value *Lt = isSigned(T) ? B.CreateICmpSLT(A, Bv) : B.CreateICmpULT(A, Bv);
    llvm::Value *D = B.CreateSelect(Lt, B.CreateSub(Bv, A), B.CreateSub(A, Bv));
    L.write(Ops[0], T, B.CreateAdd(L.read(Ops[3], T), D));
    return true;
  }
  }
}

/// and/or/xor/not/cnot.
bool lowerLogic(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  switch (I.Op) {
  case Opcode::And:
    return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateAnd(A, Bv); });
  case Opcode::Or:
    return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateOr(A, Bv); });
  case Opcode::Xor:
    return lowerBinary(L, I, T, [&](auto *A, auto *Bv) { return B.CreateXor(A, Bv); });
  case Opcode::Not:
    L.write(Ops[0], T, B.CreateNot(L.read(Ops[1], T)));
    return true;
  default: { // cnot: d = a == 0
    llvm::Value *X = L.read(Ops[1], T);
    L.write(Ops[0], T, B.CreateZExt(B.CreateICmpEQ(X, cint(X->getType(), 0)), X->getType()));
    return true;
  }
  }
}

/// neg, abs (abs(INT_MIN) = INT_MIN).
bool lowerNegAbs(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (I.Op == Opcode::Neg)
    L.write(Ops[0], T, B.CreateNeg(L.read(Ops[1], T)));
  else
    L.write(Ops[0], T, B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, L.read(Ops[1], T), B.getFalse()));
  return true;
}

/// min/max with an optional third input and .relu.
bool lowerMinMax(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Intrinsic::ID ID = minMaxIntrinsic(I.Op, isSigned(T));
  llvm::Value *R = B.CreateBinaryIntrinsic(ID, L.read(Ops[1], T), L.read(Ops[2], T));
  if (Ops.size() > 3)
    R = B.CreateBinaryIntrinsic(ID, R, L.read(Ops[3], T));
  if (I.has(Modifier::Relu))
    R = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, R, cint(R->getType(), 0));
  L.write(Ops[0], T, R);
  return true;
}

/// shl/shr.
bool lowerShift(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Value *X = L.read(Ops[1], T);
  llvm::Type *Ty = X->getType();
  unsigned W = Ty->getIntegerBitWidth();
  // The amount is a u32 even for 16/64-bit shifts: compare before narrowing it. PTX clamps shift amounts past
  // the width (x86 masks them).
  llvm::Value *N32 = L.read(Ops[2], ScalarType::U32);
  llvm::Value *Over = B.CreateICmpUGE(N32, B.getInt32(W));
  llvm::Value *N = B.CreateZExtOrTrunc(N32, Ty);
  llvm::Value *R;
  if (I.Op == Opcode::Shl)
    R = B.CreateSelect(Over, cint(Ty, 0), B.CreateShl(X, N));
  else if (isSigned(T))
    R = B.CreateAShr(X, B.CreateSelect(Over, cint(Ty, W - 1), N));
  else
    R = B.CreateSelect(Over, cint(Ty, 0), B.CreateLShr(X, N));
  L.write(Ops[0], T, R);
  return true;
}

/// div/rem without x86's faults.
bool lowerDivRem(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  llvm::Value *A = L.read(Ops[1], T), *Bv = L.read(Ops[2], T);
  llvm::Type *Ty = A->getType();
  llvm::Value *Zero = cint(Ty, 0);
  llvm::Value *IsZero = B.CreateICmpEQ(Bv, Zero);
  // x86 division faults on /0 and INT_MIN/-1; the GPU returns values. Recorded: INT_MIN / -1 = INT_MIN and
  // INT_MIN % -1 = 0 (int/div_s32_overflow); division by zero gives all ones for div AND rem, signed or not,
  // 16/32/64-bit (checked on an H100).
  llvm::Value *Ones = llvm::Constant::getAllOnesValue(Ty);
  llvm::Value *SafeB = B.CreateSelect(IsZero, cint(Ty, 1), Bv);
  llvm::Value *R;
  if (isSigned(T)) {
    // b == -1: div is -a (INT_MIN stays INT_MIN), rem is 0; avoids the INT_MIN / -1 fault.
    llvm::Value *MinusOne = B.CreateICmpEQ(Bv, Ones);
    SafeB = B.CreateSelect(MinusOne, cint(Ty, 1), SafeB);
    if (I.Op == Opcode::Div)
      R = B.CreateSelect(MinusOne, B.CreateNeg(A), B.CreateSDiv(A, SafeB));
    else
      R = B.CreateSelect(MinusOne, Zero, B.CreateSRem(A, SafeB));
  } else {
    R = I.Op == Opcode::Div ? B.CreateUDiv(A, SafeB) : B.CreateURem(A, SafeB);
  }
  R = B.CreateSelect(IsZero, Ones, R);
  L.write(Ops[0], T, R);
  return true;
}

/// add.cc/sub.cc/mad.cc on integers and addc/subc/madc: the carry chain (lowerCarryOp).
bool isCarryOp(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Addc:
  case Opcode::Subc:
  case Opcode::Madc:
    return true;
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mad:
    return I.has(Modifier::Cc) && ptx::isInteger(I.type());
  default:
    return false;
  }
}

/// The scalar integer (and .pred logic) opcodes other than comparisons, carry chains and bit manipulation.
bool lowerScalarInteger(FunctionLowering &L, const ptx::Instruction &I, ScalarType T) {
  switch (I.Op) {
  case Opcode::Add:
  case Opcode::Sub:
    return lowerAddSub(L, I, T);
  case Opcode::Mul:
  case Opcode::Mad:
  case Opcode::Mul24:
  case Opcode::Mad24:
  case Opcode::Sad:
    return lowerMultiply(L, I, T);
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Cnot:
    return lowerLogic(L, I, T);
  case Opcode::Neg:
  case Opcode::Abs:
    return lowerNegAbs(L, I, T);
  case Opcode::Min:
  case Opcode::Max:
    return lowerMinMax(L, I, T);
  case Opcode::Shl:
  case Opcode::Shr:
    return lowerShift(L, I, T);
  case Opcode::Div:
  case Opcode::Rem:
    return lowerDivRem(L, I, T);
  default:
    return false;
  }
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
  switch (I.Op) {
  case Opcode::Setp:
    return lowerSetp(L, I);
  case Opcode::Set:
    return lowerSet(L, I);
  case Opcode::Selp:
    return lowerSelp(L, I);
  case Opcode::Slct:
    return lowerSlct(L, I);
  default:
    break;
  }
  if (isCarryOp(I))
    return lowerCarryOp(L, I);
  if (ptx::videoLanes(I.Op))
    return lowerVideo(L, I);
  if (lowerIntegerBits(L, I))
    return true;
  ScalarType T = I.type();
  if (isPacked16(T))
    return lowerPacked16(L, I);
  if (!ptx::isInteger(T) && T != ScalarType::Pred)
    return false;
  return lowerScalarInteger(L, I, T);
}
