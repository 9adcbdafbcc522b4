// atom/red on global, shared and generic addresses: host atomic read-modify-write (blocks run in parallel).
// An explicitly .shared atomic is a plain read-modify-write: a block never spans OS threads (its threads run in
// loops or as fibers switched only at barriers and collectives), so nothing can come between the load and the
// store, and a lock-prefixed instruction per access would make shared-memory histograms many times slower.
#include "../FunctionLowering.h"
#include "../Markers.h"
#include "../passes/Passes.h"

#include "llvm/Transforms/Utils/LowerAtomic.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

bool ptxforge::codegen::detail::lowerAtomic(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Op != Opcode::Atom && I.Op != Opcode::Red)
    return false;
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Red = I.Op == Opcode::Red;
  ScalarType T = I.type(I.typeCount() ? I.typeCount() - 1 : 0);
  if (I.vectorWidth() > 1 || T == ScalarType::None)
    return false;
  const ptx::Operand &Addr = Red ? Ops[0] : Ops[1];
  ptx::StateSpace S = I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) ? ptx::StateSpace::Shared
                                                                             : ptx::StateSpace::Global;
  llvm::Value *P = L.address(Addr, S);
  unsigned First = Red ? 1 : 2;
  if (Ops.size() <= First)
    return L.unsupported(I, "operands");
  // Half-precision adds/min/max (.f16, .bf16 and the packed x2 forms): a CAS loop in the runtime that rounds
  // like the GPU (no flush to zero).
  if (T == ScalarType::F16 || T == ScalarType::BF16 || T == ScalarType::F16x2 || T == ScalarType::BF16x2) {
    bool X2 = T == ScalarType::F16x2 || T == ScalarType::BF16x2;
    bool BF = T == ScalarType::BF16 || T == ScalarType::BF16x2;
    unsigned Op = I.has(Modifier::Add) ? 0 : I.has(Modifier::Min) ? 1 : I.has(Modifier::Max) ? 2 : 3;
    if (Op == 3)
      return L.unsupported(I, "half-precision atomic operation");
    ScalarType BT = X2 ? ScalarType::B32 : ScalarType::B16;
    llvm::Value *V = B.CreateZExt(L.read(Ops[First], BT), B.getInt32Ty());
    llvm::Value *Old = L.callHelper("ptxrt_atom_half", B.getInt32Ty(),
                                    {P, V, B.getInt32((BF ? 1 : 0) | (X2 ? 2 : 0) | Op << 2)});
    if (!Red)
      L.write(Ops[0], BT, X2 ? Old : B.CreateTrunc(Old, B.getInt16Ty()));
    return true;
  }
  // Atomics need their natural alignment (PTX requires it; an under-aligned LLVM atomic becomes a libcall).
  llvm::MaybeAlign Natural(std::max<unsigned>(1, ptx::bitWidth(T) / 8));
  bool Signed = ptx::kindOf(T) == ptx::TypeKind::Signed;
  bool Float = ptx::isFloat(T);
  llvm::AtomicRMWInst::BinOp Op;
  bool Plain = S == ptx::StateSpace::Shared;
  if (I.has(Modifier::Cas)) {
    llvm::Value *Cmp = L.read(Ops[First], T), *New = L.read(Ops[First + 1], T);
    if (Plain) {
      llvm::LoadInst *Old = B.CreateAlignedLoad(Cmp->getType(), P, Natural);
      markSerialReadModifyWrite(Old, B.CreateAlignedStore(B.CreateSelect(B.CreateICmpEQ(Old, Cmp), New, Old), P, Natural));
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
  if (I.has(Modifier::Add))
    Op = Float ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
  else if (I.has(Modifier::Min))
    Op = Float ? llvm::AtomicRMWInst::FMin : (Signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin);
  else if (I.has(Modifier::Max))
    Op = Float ? llvm::AtomicRMWInst::FMax : (Signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax);
  else if (I.has(Modifier::And))
    Op = llvm::AtomicRMWInst::And;
  else if (I.has(Modifier::Or))
    Op = llvm::AtomicRMWInst::Or;
  else if (I.has(Modifier::Xor))
    Op = llvm::AtomicRMWInst::Xor;
  else if (I.has(Modifier::Exch))
    Op = llvm::AtomicRMWInst::Xchg;
  else if (I.has(Modifier::Inc))
    Op = llvm::AtomicRMWInst::UIncWrap;
  else if (I.has(Modifier::Dec))
    Op = llvm::AtomicRMWInst::UDecWrap;
  else
    return false;
  llvm::Value *V = Float ? L.readFloat(Ops[First], T) : L.read(Ops[First], T);
  llvm::Value *Old;
  if (Plain) {
    auto *Load = B.CreateAlignedLoad(V->getType(), P, Natural);
    Old = Load;
    auto *Store = B.CreateAlignedStore(llvm::buildAtomicRMWValue(Op, B, Old, V), P, Natural);
    codegen::passes::markAccess(Load, codegen::passes::MemoryClass::Shared);
    codegen::passes::markAccess(Store, codegen::passes::MemoryClass::Shared);
    markSerialReadModifyWrite(Load, Store);
  } else {
    Old = B.CreateAtomicRMW(Op, P, V, Natural, llvm::AtomicOrdering::SequentiallyConsistent);
  }
  if (!Red)
    L.write(Ops[0], T, Old);
  return true;
}
