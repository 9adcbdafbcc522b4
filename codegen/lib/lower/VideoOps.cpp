// The video instructions, as integer IR, bit for bit as an sm_90 GPU runs them (its results for every form in
// tests/conformance/cases/video decided what the ISA text leaves open, and a few places where the GPU departs
// from that text; see the functions below and tests/conformance/cases/README.md):
//  - scalar vadd/vsub/vabsdiff/vmin/vmax/vshl/vshr/vset: each source a byte, half or word of a 32-bit register
//    (selectors `.b0`-`.b3`, `.h0`/`.h1`), sign- or zero-extended by its type; the operation computed exactly
//    in i128 (a shift keeps 34 bits, as the GPU does); then .sat, and either a secondary operation with c
//    (.add/.min/.max) or a merge into one byte or half of c;
//  - vmad: (+/-a) * (+/-b) + (+/-c) (+1 with .po) exactly, shifted right by 7 or 15, optionally clamped;
//  - the SIMD forms vadd2 ... vset4: each of 2 (4) lanes takes a half (byte) of a:b by its selector, the lane
//    results clamped to 16 (8) bits with .sat and merged into the lanes of c the mask names, or summed into
//    c (.add).
#include "FamilyLowering.h"

namespace ptxforge::codegen::detail {
bool lowerVideo(FunctionLowering &L, const ptx::Instruction &I); // called from IntegerOps.cpp
}

namespace {

enum class VOp { Add, Sub, Absdiff, Min, Max, Shl, Shr, Avrg, Set };

VOp videoOp(Opcode Op) {
  switch (Op) {
  case Opcode::Vadd:
  case Opcode::Vadd2:
  case Opcode::Vadd4:
    return VOp::Add;
  case Opcode::Vsub:
  case Opcode::Vsub2:
  case Opcode::Vsub4:
    return VOp::Sub;
  case Opcode::Vabsdiff:
  case Opcode::Vabsdiff2:
  case Opcode::Vabsdiff4:
    return VOp::Absdiff;
  case Opcode::Vmin:
  case Opcode::Vmin2:
  case Opcode::Vmin4:
    return VOp::Min;
  case Opcode::Vmax:
  case Opcode::Vmax2:
  case Opcode::Vmax4:
    return VOp::Max;
  case Opcode::Vshl:
    return VOp::Shl;
  case Opcode::Vshr:
    return VOp::Shr;
  case Opcode::Vavrg2:
  case Opcode::Vavrg4:
    return VOp::Avrg;
  default:
    return VOp::Set;
  }
}

bool isSigned(ScalarType T) { return T == ScalarType::S32; }

class Video {
public:
  Video(FunctionLowering &L, const ptx::Instruction &I) : L(L), B(L.b()), I(I), Ops(I.Operands) {}

  bool lower() {
    if (I.Op == Opcode::Vmad)
      return lowerMad();
    unsigned Lanes = ptx::videoLanes(I.Op);
    return Lanes == 1 ? lowerScalar() : lowerSimd(Lanes);
  }

private:
  FunctionLowering &L;
  llvm::IRBuilderBase &B;
  const ptx::Instruction &I;
  llvm::ArrayRef<ptx::Operand> Ops;

  llvm::Type *wide() { return B.getInt128Ty(); }
  llvm::Value *c128(int64_t V) { return llvm::ConstantInt::getSigned(wide(), V); }

  /// The type qualifiers: vset has no destination type (atype, btype).
  ScalarType dtype() const {
    return I.Op == Opcode::Vset || I.Op == Opcode::Vset2 || I.Op == Opcode::Vset4 ? ScalarType::None : I.type(0);
  }
  ScalarType atype() const { return I.type(dtype() == ScalarType::None ? 0 : 1); }
  ScalarType btype() const { return I.type(dtype() == ScalarType::None ? 1 : 2); }

  /// A scalar source: the selected byte/half (or the word), extended by its type to i128.
  llvm::Value *part(const ptx::Operand &Op, bool Signed) {
    llvm::Value *V = L.read(Op, ScalarType::B32);
    unsigned Bits = 32;
    if (Op.SelKind) {
      Bits = Op.SelKind == 'b' ? 8 : 16;
      V = B.CreateTrunc(B.CreateLShr(V, Op.SelDigits * Bits), B.getIntNTy(Bits));
    }
    return Signed ? B.CreateSExt(V, wide()) : B.CreateZExt(V, wide());
  }

  /// Clamps X to the range of a Bits-wide signed or unsigned integer.
  llvm::Value *clamp(llvm::Value *X, unsigned Bits, bool Signed) {
    llvm::Type *T = X->getType();
    unsigned W = T->getIntegerBitWidth();
    llvm::APInt Lo = Signed ? llvm::APInt::getSignedMinValue(Bits).sext(W) : llvm::APInt::getZero(W);
    llvm::APInt Hi = Signed ? llvm::APInt::getSignedMaxValue(Bits).sext(W) : llvm::APInt::getMaxValue(Bits).zext(W);
    X = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, X, llvm::ConstantInt::get(T, Lo));
    return B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, X, llvm::ConstantInt::get(T, Hi));
  }

  llvm::Value *compare(llvm::Value *A, llvm::Value *Bv) {
    using P = llvm::CmpInst::Predicate;
    P Pr = I.has(Modifier::Eq)   ? P::ICMP_EQ
           : I.has(Modifier::Ne) ? P::ICMP_NE
           : I.has(Modifier::Lt) ? P::ICMP_SLT
           : I.has(Modifier::Le) ? P::ICMP_SLE
           : I.has(Modifier::Gt) ? P::ICMP_SGT
                                 : P::ICMP_SGE;
    return B.CreateICmp(Pr, A, Bv); // sources are extended by their own types: a signed compare is exact
  }

  /// The lane operation on exactly extended operands.
  llvm::Value *apply(VOp Op, llvm::Value *A, llvm::Value *Bv) {
    llvm::Type *T = A->getType();
    switch (Op) {
    case VOp::Add:
      return B.CreateAdd(A, Bv);
    case VOp::Sub:
      return B.CreateSub(A, Bv);
    case VOp::Absdiff:
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, B.CreateSub(A, Bv), B.getFalse());
    case VOp::Min:
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, A, Bv);
    case VOp::Max:
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, A, Bv);
    case VOp::Avrg: { // (a + b + 1) >> 1 for a non-negative sum, (a + b) >> 1 otherwise
      llvm::Value *S = B.CreateAdd(A, Bv);
      llvm::Value *Up = B.CreateZExt(B.CreateICmpSGE(S, llvm::ConstantInt::get(T, 0)), T);
      return B.CreateAShr(B.CreateAdd(S, Up), 1);
    }
    case VOp::Set:
      return B.CreateZExt(compare(A, Bv), T);
    case VOp::Shl:
    case VOp::Shr: {
      // The shift amount: .clamp limits it to 32, .wrap takes it modulo 32.
      llvm::Value *N = I.has(Modifier::Wrap)
                           ? B.CreateAnd(Bv, llvm::ConstantInt::get(T, 31))
                           : B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Bv, llvm::ConstantInt::get(T, 32));
      return Op == VOp::Shl ? B.CreateShl(A, N) : B.CreateAShr(A, N); // A is extended: ashr is exact for both
    }
    }
    return nullptr;
  }

  /// d.dsel: c with the byte or half Sel replaced. What goes in, as the GPU does it: with .sat the result
  /// clamped (shifts: to the destination type's 32-bit range; the others: the 32-bit result compared as an
  /// unsigned number with the field's largest value, so a negative result gives that value) and moved into
  /// the field; without .sat the result's low bits moved into a byte field (vset's 0/1 too), but the
  /// result's own bits at a half field's place.
  llvm::Value *merge(llvm::Value *C, llvm::Value *T, const ptx::Operand &Sel, VOp Op, bool DSigned) {
    unsigned Bits = Sel.SelKind == 'b' ? 8 : 16;
    unsigned Shift = Sel.SelDigits * Bits;
    uint32_t Mask = static_cast<uint32_t>(((uint64_t(1) << Bits) - 1) << Shift);
    llvm::Value *V;
    bool Sat = I.has(Modifier::Sat) && Op != VOp::Set;
    if (!Sat && Sel.SelKind == 'h') {
      V = B.CreateTrunc(T, B.getInt32Ty());
    } else {
      if (Sat && (Op == VOp::Shl || Op == VOp::Shr)) {
        T = clamp(T, 32, DSigned);
      } else if (Sat) {
        uint64_t Max = DSigned ? (uint64_t(1) << (Bits - 1)) - 1 : (uint64_t(1) << Bits) - 1;
        T = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateTrunc(T, B.getInt32Ty()), B.getInt32(Max));
      }
      V = B.CreateShl(B.CreateTrunc(T, B.getInt32Ty()), Shift);
    }
    llvm::Value *Kept = B.CreateAnd(C, B.getInt32(~Mask));
    return B.CreateOr(Kept, B.CreateAnd(V, B.getInt32(Mask)));
  }

  /// .sat without a merge: signed results clamp to the s32 range; unsigned shift results to [0, 2^32 - 1];
  /// the other unsigned results only at 0 (an overflowing vadd.u32 wraps on the GPU).
  llvm::Value *saturate(llvm::Value *T, VOp Op, bool DSigned) {
    if (DSigned || Op == VOp::Shl || Op == VOp::Shr)
      return clamp(T, 32, DSigned);
    return B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, T, c128(0));
  }

  /// The secondary operation with c (extended by the destination's signedness). vadd/vsub hand it their
  /// 32-bit result, the other operations their exact one.
  llvm::Value *secondary(llvm::Value *T, llvm::Value *C, VOp Op, bool DSigned) {
    C = DSigned ? B.CreateSExt(C, wide()) : B.CreateZExt(C, wide());
    if (Op == VOp::Add || Op == VOp::Sub) {
      llvm::Value *T32 = B.CreateTrunc(T, B.getInt32Ty());
      T = DSigned ? B.CreateSExt(T32, wide()) : B.CreateZExt(T32, wide());
    }
    if (I.has(Modifier::Add))
      return B.CreateAdd(T, C);
    if (I.has(Modifier::Min))
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, T, C);
    if (I.has(Modifier::Max))
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, T, C);
    return nullptr;
  }

  bool lowerScalar() {
    if (Ops.size() < 3)
      return L.unsupported(I, "operands");
    VOp Op = videoOp(I.Op);
    // vset has no destination type: its secondary operation compares as a is typed.
    bool DSigned = isSigned(Op == VOp::Set ? atype() : dtype());
    llvm::Value *A = part(Ops[1], isSigned(atype())), *Bv = part(Ops[2], isSigned(btype()));
    llvm::Value *T = apply(Op, A, Bv);
    if (Op == VOp::Shl || Op == VOp::Shr) // the GPU keeps 34 bits of a shifted value
      T = B.CreateSExt(B.CreateTrunc(T, B.getIntNTy(34)), wide());
    const ptx::Operand &D = Ops[0];
    llvm::Value *R;
    if (D.SelKind) {
      if (Ops.size() < 4)
        return L.unsupported(I, "merge without c");
      R = merge(L.read(Ops[3], ScalarType::B32), T, D, Op, DSigned);
    } else {
      if (I.has(Modifier::Sat) && Op != VOp::Set)
        T = saturate(T, Op, DSigned);
      if (Ops.size() > 3) {
        T = secondary(T, L.read(Ops[3], ScalarType::B32), Op, DSigned);
        if (!T)
          return L.unsupported(I, "secondary operation");
      }
      R = B.CreateTrunc(T, B.getInt32Ty());
    }
    L.write(Ops[0], ScalarType::B32, R);
    return true;
  }

  /// vmad.dtype.atype.btype{.po}{.sat}{.shr7|.shr15} d, {-}a{.asel}, {-}b{.bsel}, {-}c. On the GPU a whole-word
  /// a or b, and c, count as signed whatever the types say; the types choose the extension of selected parts
  /// and, with the negations, whether .sat clamps to the s32 or the u32 range.
  bool lowerMad() {
    if (Ops.size() < 4)
      return L.unsupported(I, "operands");
    bool NegAB = Ops[1].Negated != Ops[2].Negated, NegC = Ops[3].Negated;
    bool SignedFinal = isSigned(atype()) || isSigned(btype()) || NegAB || NegC;
    auto source = [&](const ptx::Operand &Op, ScalarType T) { return part(Op, Op.SelKind ? isSigned(T) : true); };
    llvm::Value *A = source(Ops[1], atype());
    llvm::Value *P = B.CreateMul(A, source(Ops[2], btype()));
    llvm::Value *C = L.read(Ops[3], ScalarType::B32);
    int64_t Lsb = 0;
    if (I.has(Modifier::Po)) {
      Lsb = 1;
    } else if (NegAB) {
      P = B.CreateNot(P);
      Lsb = 1;
    } else if (NegC) {
      C = B.CreateNot(C);
      Lsb = 1;
    }
    llvm::Value *T = B.CreateAdd(B.CreateAdd(P, B.CreateSExt(C, wide())), c128(Lsb));
    if (I.has(Modifier::Shr7))
      T = B.CreateAShr(T, 7);
    else if (I.has(Modifier::Shr15))
      T = B.CreateAShr(T, 15);
    if (I.has(Modifier::Sat))
      T = clamp(T, 32, SignedFinal);
    L.write(Ops[0], ScalarType::B32, B.CreateTrunc(T, B.getInt32Ty()));
    return true;
  }

  /// Lane K's source among the halves (bytes) of a:b, by the selector's digit K or the default selector.
  llvm::Value *simdLane(llvm::Value *AB, const ptx::Operand &Op, unsigned K, unsigned Lanes, unsigned Default,
                        bool Signed) {
    unsigned Bits = 32 / Lanes;
    unsigned Index = Op.SelKind ? (Op.SelDigits >> (4 * K)) & 0xf : (Default >> (4 * K)) & 0xf;
    llvm::Value *V = B.CreateTrunc(B.CreateLShr(AB, Index * Bits), B.getIntNTy(Bits));
    return Signed ? B.CreateSExt(V, B.getInt32Ty()) : B.CreateZExt(V, B.getInt32Ty());
  }

  bool lowerSimd(unsigned Lanes) {
    if (Ops.size() < 4)
      return L.unsupported(I, "operands");
    VOp Op = videoOp(I.Op);
    unsigned Bits = 32 / Lanes;
    bool DSigned = dtype() != ScalarType::None && isSigned(dtype());
    llvm::Type *I64 = B.getInt64Ty();
    llvm::Value *Lo = B.CreateZExt(L.read(Ops[1], ScalarType::B32), I64);
    llvm::Value *AB = B.CreateOr(Lo, B.CreateShl(B.CreateZExt(L.read(Ops[2], ScalarType::B32), I64), 32));
    // Defaults: a's own lanes for a (.h10, .b3210), b's for b (.h32, .b7654).
    unsigned DefA = Lanes == 2 ? 0x10 : 0x3210, DefB = Lanes == 2 ? 0x32 : 0x7654;
    // The destination lanes written: the mask's digits, all by default.
    unsigned Mask = 0;
    const ptx::Operand &D = Ops[0];
    for (unsigned K = 0; K < (D.SelKind ? D.SelCount : 0u); ++K)
      Mask |= 1u << ((D.SelDigits >> (4 * K)) & 0xf);
    if (!D.SelKind)
      Mask = (1u << Lanes) - 1;
    llvm::Value *C = L.read(Ops[3], ScalarType::B32);
    bool Accumulate = I.has(Modifier::Add);
    llvm::Value *R = Accumulate ? C : B.getInt32(0);
    for (unsigned K = 0; K < Lanes; ++K) {
      llvm::Value *X = simdLane(AB, Ops[1], K, Lanes, DefA, isSigned(atype()));
      llvm::Value *Y = simdLane(AB, Ops[2], K, Lanes, DefB, isSigned(btype()));
      llvm::Value *T = apply(Op, X, Y);
      if (I.has(Modifier::Sat) && Op != VOp::Set)
        T = clamp(T, Bits, DSigned);
      if (Accumulate) {
        if (Mask >> K & 1)
          R = B.CreateAdd(R, T);
        continue;
      }
      uint32_t Field = static_cast<uint32_t>(((uint64_t(1) << Bits) - 1) << (K * Bits));
      llvm::Value *V = Mask >> K & 1 ? B.CreateShl(T, K * Bits) : C;
      R = B.CreateOr(R, B.CreateAnd(V, B.getInt32(Field)));
    }
    L.write(Ops[0], ScalarType::B32, R);
    return true;
  }
};

} // namespace

bool ptxforge::codegen::detail::lowerVideo(FunctionLowering &L, const ptx::Instruction &I) {
  if (!ptx::videoLanes(I.Op))
    return false;
  return Video(L, I).lower();
}
