// atom/red on global, shared and generic addresses: host atomic read-modify-write (blocks run in parallel).
// An explicitly .shared atomic is a plain read-modify-write: a block never spans OS threads (its threads run in
// loops or as fibers switched only at barriers and collectives), so nothing can come between the load and the
// store, and a lock-prefixed instruction per access would make shared-memory histograms many times slower. In a
// module that reaches other blocks' shared memory (thread-block clusters) shared atomics are host atomics.
// f32 adds on global memory flush subnormals as the GPU does (recorded: tests/conformance/cases/atomic/
// f32_add_subnormal); the vector forms (.v2/.v4/.v8, sm_90) are one atomic access per element.
#include "../Markers.h"
#include "../passes/Passes.h"
#include "FamilyLowering.h"

#include "llvm/Transforms/Utils/LowerAtomic.h"

namespace {

bool isHalfType(ScalarType T) {
  return T == ScalarType::F16 || T == ScalarType::BF16 || T == ScalarType::F16x2 || T == ScalarType::BF16x2;
}

/// The register type a half-precision atomic reads and writes (the bits of one f16/bf16, or of a pair).
ScalarType halfBits(ScalarType T) {
  return T == ScalarType::F16x2 || T == ScalarType::BF16x2 ? ScalarType::B32 : ScalarType::B16;
}

/// The read-modify-write operation of a non-CAS atom/red; false when I names none.
bool rmwOperation(const ptx::Instruction &I, ScalarType T, llvm::AtomicRMWInst::BinOp &Op) {
  bool Signed = ptx::kindOf(T) == ptx::TypeKind::Signed;
  bool Float = ptx::isFloat(T);
  using R = llvm::AtomicRMWInst;
  if (I.has(Modifier::Add))
    Op = Float ? R::FAdd : R::Add;
  else if (I.has(Modifier::Min))
    Op = Float ? R::FMin : (Signed ? R::Min : R::UMin);
  else if (I.has(Modifier::Max))
    Op = Float ? R::FMax : (Signed ? R::Max : R::UMax);
  else if (I.has(Modifier::And))
    Op = R::And;
  else if (I.has(Modifier::Or))
    Op = R::Or;
  else if (I.has(Modifier::Xor))
    Op = R::Xor;
  else if (I.has(Modifier::Exch))
    Op = R::Xchg;
  else if (I.has(Modifier::Inc))
    Op = R::UIncWrap;
  else if (I.has(Modifier::Dec))
    Op = R::UDecWrap;
  else
    return false;
  return true;
}

/// One element's atomic update at P with the value operand V (a scalar atom/red, or one lane of a vector
/// form, each lane its own atomic access as on the GPU); Plain: a shared-memory access (see the file comment).
/// Returns the old value (as halfBits(T) for the half types), null after reporting an unsupported form.
llvm::Value *atomicElement(FunctionLowering &L, const ptx::Instruction &I, ScalarType T, llvm::Value *P, bool Plain,
                           const ptx::Operand &V) {
  auto &B = L.b();
  // Half-precision adds/min/max (.f16, .bf16 and the packed x2 forms): a CAS loop in the runtime that rounds
  // like the GPU (no flush to zero).
  if (isHalfType(T)) {
    bool X2 = halfBits(T) == ScalarType::B32;
    bool BF = T == ScalarType::BF16 || T == ScalarType::BF16x2;
    unsigned Op = I.has(Modifier::Add) ? 0 : I.has(Modifier::Min) ? 1 : I.has(Modifier::Max) ? 2 : 3;
    if (Op == 3) {
      L.unsupported(I, "half-precision atomic operation");
      return nullptr;
    }
    llvm::Value *Val = B.CreateZExt(L.read(V, halfBits(T)), B.getInt32Ty());
    llvm::Value *Old =
        L.callHelper("ptxrt_atom_half", B.getInt32Ty(), {P, Val, B.getInt32((BF ? 1 : 0) | (X2 ? 2 : 0) | Op << 2)});
    return X2 ? Old : B.CreateTrunc(Old, B.getInt16Ty());
  }
  llvm::AtomicRMWInst::BinOp Op;
  if (!rmwOperation(I, T, Op)) {
    L.unsupported(I);
    return nullptr;
  }
  if (T == ScalarType::F32 && Op == llvm::AtomicRMWInst::FAdd && !Plain) {
    // Global memory flushes subnormals (ptxrt_atom_add_f32); a generic address does where it is not shared.
    llvm::Value *Flush = B.getInt32(1);
    if (!I.has(Modifier::Global)) {
      llvm::Value *X = B.CreatePtrToInt(P, B.getInt64Ty());
      llvm::Value *Base = B.CreatePtrToInt(L.sharedBase(), B.getInt64Ty());
      llvm::Value *Size = B.CreateZExt(L.ctxField(codegen::TCTotalSmemSize), B.getInt64Ty());
      llvm::Value *InShared = B.CreateAnd(B.CreateICmpUGE(X, Base), B.CreateICmpULT(X, B.CreateAdd(Base, Size)));
      Flush = B.CreateZExt(B.CreateNot(InShared), B.getInt32Ty());
    }
    llvm::Value *Old = L.callHelper("ptxrt_atom_add_f32", B.getInt32Ty(), {P, L.read(V, ScalarType::B32), Flush});
    return B.CreateBitCast(Old, B.getFloatTy());
  }
  // Atomics need their natural alignment (PTX requires it; an under-aligned LLVM atomic becomes a libcall).
  llvm::MaybeAlign Natural(std::max<unsigned>(1, ptx::bitWidth(T) / 8));
  llvm::Value *Val = ptx::isFloat(T) ? L.readFloat(V, T) : L.read(V, T);
  if (!Plain)
    return B.CreateAtomicRMW(Op, P, Val, Natural, llvm::AtomicOrdering::SequentiallyConsistent);
  auto *Load = B.CreateAlignedLoad(Val->getType(), P, Natural);
  auto *Store = B.CreateAlignedStore(llvm::buildAtomicRMWValue(Op, B, Load, Val), P, Natural);
  codegen::passes::markAccess(Load, codegen::passes::MemoryClass::Shared);
  codegen::passes::markAccess(Store, codegen::passes::MemoryClass::Shared);
  markSerialReadModifyWrite(Load, Store);
  return Load;
}

/// atom.cas / red.cas (scalar only).
bool lowerCas(FunctionLowering &L, const ptx::Instruction &I, ScalarType T, llvm::Value *P, bool Plain,
              unsigned First) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Red = I.Op == Opcode::Red;
  if (Ops.size() <= First + 1)
    return L.unsupported(I, "operands");
  llvm::MaybeAlign Natural(std::max<unsigned>(1, ptx::bitWidth(T) / 8));
  llvm::Value *Cmp = L.read(Ops[First], T), *New = L.read(Ops[First + 1], T);
  if (Plain) {
    llvm::LoadInst *Old = B.CreateAlignedLoad(Cmp->getType(), P, Natural);
    llvm::Value *Swapped = B.CreateSelect(B.CreateICmpEQ(Old, Cmp), New, Old);
    markSerialReadModifyWrite(Old, B.CreateAlignedStore(Swapped, P, Natural));
    if (!Red)
      L.write(Ops[0], T, Old);
    return true;
  }
  auto *X = B.CreateAtomicCmpXchg(P, Cmp, New, Natural, llvm::AtomicOrdering::SequentiallyConsistent,
                                  llvm::AtomicOrdering::SequentiallyConsistent);
  if (!Red)
    L.write(Ops[0], T, B.CreateExtractValue(X, 0));
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerAtomic(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Op != Opcode::Atom && I.Op != Opcode::Red)
    return false;
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Red = I.Op == Opcode::Red;
  ScalarType T = I.type(I.typeCount() ? I.typeCount() - 1 : 0);
  if (T == ScalarType::None)
    return false;
  const ptx::Operand &Addr = Red ? Ops[0] : Ops[1];
  // .shared::cluster may name another block's shared memory, which another worker updates at the same time.
  bool Cluster = I.has(Modifier::Shared_Cluster);
  ptx::StateSpace S = I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) || Cluster ? ptx::StateSpace::Shared
                                                                                        : ptx::StateSpace::Global;
  bool Plain = S == ptx::StateSpace::Shared && !Cluster && !distributedShared(L.module());
  llvm::Value *P = L.address(Addr, S);
  unsigned First = Red ? 1 : 2;
  if (Ops.size() <= First)
    return L.unsupported(I, "operands");
  ScalarType WriteT = isHalfType(T) ? halfBits(T) : T;
  unsigned N = I.vectorWidth();
  if (N == 1) {
    if (I.has(Modifier::Cas))
      return lowerCas(L, I, T, P, Plain, First);
    llvm::Value *Old = atomicElement(L, I, T, P, Plain, Ops[First]);
    if (Old && !Red)
      L.write(Ops[0], WriteT, Old);
    return Old != nullptr;
  }
  // .v2/.v4/.v8 (sm_90, global): element K of the vectors updates the K-th element at the address.
  auto vectorOf = [&](const ptx::Operand &Op) {
    return Op.Kind == ptx::OperandKind::Vector && Op.Elements.size() == N;
  };
  if (!vectorOf(Ops[First]) || (!Red && !vectorOf(Ops[0])) || I.has(Modifier::Cas))
    return L.unsupported(I, "vector operands");
  unsigned Bytes = ptx::bitWidth(T) / 8;
  for (unsigned K = 0; K < N; ++K) {
    llvm::Value *PK = B.CreateConstGEP1_64(B.getInt8Ty(), P, uint64_t(K) * Bytes);
    llvm::Value *Old = atomicElement(L, I, T, PK, Plain, Ops[First].Elements[K]);
    if (!Old)
      return false;
    if (!Red)
      L.write(Ops[0].Elements[K], WriteT, Old);
  }
  return true;
}
