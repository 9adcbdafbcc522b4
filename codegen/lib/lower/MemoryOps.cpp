// Memory and data movement: ld/ldu/st (scalar and vector, every state space), mov (incl. pack/unpack),
// cvta, isspacep; the misaligned-address accumulator that loads and stores feed.
#include "../Markers.h"
#include "../passes/Passes.h"
#include "FamilyLowering.h"

#include "llvm/Analysis/InstructionSimplify.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Local.h"

namespace {

StateSpace spaceOf(const ptx::Instruction &I) {
  if (I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) || I.has(Modifier::Shared_Cluster))
    return StateSpace::Shared;
  if (I.has(Modifier::Global))
    return StateSpace::Global;
  if (I.has(Modifier::Local))
    return StateSpace::Local;
  if (I.has(Modifier::Const))
    return StateSpace::Const;
  if (I.has(Modifier::Param))
    return StateSpace::Param;
  return StateSpace::Generic;
}

void markAccess(llvm::Instruction *A, StateSpace S) {
  using codegen::passes::MemoryClass;
  bool Simple = llvm::isa<llvm::LoadInst>(A) ? llvm::cast<llvm::LoadInst>(A)->isSimple()
                                             : llvm::cast<llvm::StoreInst>(A)->isSimple();
  if (Simple && (S == StateSpace::Shared || S == StateSpace::Global))
    codegen::passes::markThreadParallel(A);
  codegen::passes::markAccess(A, S == StateSpace::Shared   ? MemoryClass::Shared
                                 : S == StateSpace::Global ? MemoryClass::Global
                                                           : MemoryClass::OtherPtx);
}

/// Memory accesses of `.volatile`/`.relaxed`/`.acquire` forms must not be merged or hoisted (spin loops).
bool isOrdered(const ptx::Instruction &I) {
  return I.has(Modifier::Volatile) || I.has(Modifier::Relaxed) || I.has(Modifier::Acquire) || I.has(Modifier::Release);
}

void setOrdering(FunctionLowering &L, llvm::Instruction *Inst, const ptx::Instruction &I, unsigned Bytes) {
  if (!isOrdered(I) || (Bytes & (Bytes - 1)) || Bytes > 8)
    return;
  if (auto *LI = llvm::dyn_cast<llvm::LoadInst>(Inst))
    LI->setAtomic(llvm::AtomicOrdering::Monotonic);
  else if (auto *SI = llvm::dyn_cast<llvm::StoreInst>(Inst))
    SI->setAtomic(llvm::AtomicOrdering::Monotonic);
  // Only the block's own threads reach its shared window when no block of the module addresses another's
  // (mapa, .shared::cluster): the region builder may relax these (relaxBlockVolatiles).
  if (I.has(Modifier::Volatile) && (I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta)) &&
      !distributedShared(L.module()))
    codegen::detail::markBlockVolatile(Inst);
}

/// Whether an access of Bytes through Addr is aligned whatever the registers hold: a variable or parameter
/// symbol (laid out at its alignment) plus a constant offset.
bool knownAligned(FunctionLowering &L, const ptx::Operand &Addr, unsigned Bytes) {
  if (Addr.Reg != ptx::NoReg || Addr.Name.empty() || Addr.offset() % Bytes)
    return false;
  switch (Addr.Target.Kind) {
  case ptx::SymbolKind::Param:
  case ptx::SymbolKind::ReturnParam:
    return true;
  case ptx::SymbolKind::Variable:
    return L.module().M.Globals[Addr.Target.Index].alignment() >= Bytes;
  case ptx::SymbolKind::LocalVariable:
    return L.fn().Locals[Addr.Target.Index].alignment() >= Bytes;
  default:
    return false;
  }
}

/// Memcheck mode: the access of Bytes at P goes first to ptxrt_mc_access, which checks it against the launch's
/// allocations and shadows and returns the pointer to use: P, or a scratch buffer for an access that must not
/// happen (out of bounds, freed), so that the thread runs on and its later errors are reported too, as the
/// sanitizer reports every faulting thread. Local, const and param accesses are not checked.
llvm::Value *checkedAccess(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *P, unsigned Bytes, bool Load) {
  StateSpace S = spaceOf(I);
  if (!L.module().Memcheck || (S != StateSpace::Global && S != StateSpace::Shared && S != StateSpace::Generic) ||
      I.has(Modifier::Shared_Cluster)) // another block's shared memory: its shadow is not this worker's
    return P;
  auto &B = L.b();
  unsigned Flags = (Load ? 0u : 1u) |
                   (S == StateSpace::Global   ? 2u
                    : S == StateSpace::Shared ? 4u
                                              : 0u) |
                   (isOrdered(I) ? 8u : 0u);
  std::string Where = L.fn().Name.str() + " in " + L.module().where(I.Loc);
  llvm::Value *R = L.callHelper("ptxrt_mc_access", B.getInt64Ty(),
                                {L.threadCtx(), B.CreatePtrToInt(P, B.getInt64Ty()), B.getInt32(Bytes),
                                 B.getInt32(Flags), B.CreateGlobalString(Where, "ptx.mc.loc")});
  return B.CreateIntToPtr(R, P->getType());
}

bool lowerLoadStore(FunctionLowering &L, const ptx::Instruction &I, bool Load) {
  auto &B = L.b();
  ScalarType T = I.type(I.typeCount() ? I.typeCount() - 1 : 0);
  if (T == ScalarType::None)
    return L.unsupported(I, "no type");
  const ptx::Operand &Addr = Load ? I.Operands[1] : I.Operands[0];
  const ptx::Operand &Val = Load ? I.Operands[0] : I.Operands[1];
  if (Addr.Kind != ptx::OperandKind::Address)
    return L.unsupported(I, "address operand expected");
  llvm::Value *P = L.address(Addr, spaceOf(I));
  unsigned Width = I.vectorWidth();
  unsigned Bits = ptx::bitWidth(T);
  unsigned Bytes = Bits < 8 ? 1 : Bits / 8;
  llvm::Type *ElemTy = B.getIntNTy(Bytes * 8);
  // A vector access needs the alignment of the whole vector.
  if (Bytes * Width > 1 && !knownAligned(L, Addr, Bytes * Width)) {
    unsigned Size = Bytes * Width;
    // [reg + k*Size] is misaligned exactly when reg is (a shared window's base is 16-byte aligned, as malloc's
    // memory is): checking the register lets every access through it share one check, where the pointers'
    // ORed bits (sgemm's 32 shared loads per thread) cost vector instructions per access.
    if (Addr.Reg != ptx::NoReg && Addr.offset() % Size == 0 && (spaceOf(I) != StateSpace::Shared || Size <= 16)) {
      accumulateMisalignmentBits(L, B.CreateAnd(L.addressRegister(Addr), B.getInt64(Size - 1)));
    } else {
      accumulateMisalignment(L, P, Size);
    }
  }
  P = checkedAccess(L, I, P, Bytes * Width, Load);
  for (unsigned K = 0; K < Width; ++K) {
    const ptx::Operand &V = Width > 1 ? Val.Elements[K] : Val;
    // nusw as on the rebased parameter pointers (passes/PointerProvenance.cpp): a vector's elements never wrap
    // past the end of the address space, so its element accesses stay consecutive for the vectorizer.
    llvm::GEPNoWrapFlags NW = P->getType()->getPointerAddressSpace() == codegen::passes::PtxAddressSpace
                                  ? llvm::GEPNoWrapFlags::noUnsignedSignedWrap()
                                  : llvm::GEPNoWrapFlags::none();
    llvm::Value *EP = K ? B.CreateGEP(B.getInt8Ty(), P, B.getInt64(K * Bytes), "", NW) : P;
    // Ordered (volatile/relaxed) accesses become atomics, which need their natural alignment.
    llvm::Align Al(isOrdered(I) && !(Bytes & (Bytes - 1)) && Bytes <= 8 ? Bytes : 1);
    if (Load) {
      auto *LI = B.CreateAlignedLoad(ElemTy, EP, Al);
      setOrdering(L, LI, I, Bytes);
      markAccess(LI, spaceOf(I));
      if ((I.has(Modifier::Nc) || spaceOf(I) == StateSpace::Const) && LI->isSimple())
        codegen::passes::markReadOnlyLoad(LI);
      if (V.Kind != ptx::OperandKind::Sink)
        L.write(V, T, LI);
    } else {
      llvm::Value *X = L.read(V, T);
      if (X->getType()->isIntegerTy(1))
        X = B.CreateZExt(X, ElemTy);
      auto *SI = B.CreateAlignedStore(X, EP, Al);
      setOrdering(L, SI, I, Bytes);
      markAccess(SI, spaceOf(I));
    }
  }
  return true;
}

bool lowerMov(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  const ptx::Operand &D = I.Operands[0], &S = I.Operands[1];
  unsigned W = ptx::bitWidth(T);
  if (S.Kind == ptx::OperandKind::Vector && D.Kind != ptx::OperandKind::Vector) {
    // Pack: element K lands at bits [K*w, (K+1)*w).
    unsigned EW = W / S.Elements.size();
    llvm::Value *Acc = B.getIntN(W, 0);
    for (size_t K = 0; K < S.Elements.size(); ++K) {
      if (S.Elements[K].Kind == ptx::OperandKind::Sink)
        continue;
      llvm::Value *E = L.read(S.Elements[K], ptx::lookupType("b" + std::to_string(EW)).value_or(ScalarType::B32));
      Acc = B.CreateOr(Acc, B.CreateShl(B.CreateZExt(E, B.getIntNTy(W)), K * EW));
    }
    L.write(D, T, Acc);
    return true;
  }
  if (D.Kind == ptx::OperandKind::Vector && S.Kind != ptx::OperandKind::Vector) {
    unsigned EW = W / D.Elements.size();
    llvm::Value *X = L.read(S, T);
    ScalarType ET = ptx::lookupType("b" + std::to_string(EW)).value_or(ScalarType::B32);
    for (size_t K = 0; K < D.Elements.size(); ++K)
      L.write(D.Elements[K], ET, B.CreateTrunc(B.CreateLShr(X, K * EW), B.getIntNTy(EW)));
    return true;
  }
  if (D.Kind == ptx::OperandKind::Vector) {
    for (size_t K = 0; K < D.Elements.size() && K < S.Elements.size(); ++K)
      L.write(D.Elements[K], T, L.read(S.Elements[K], T));
    return true;
  }
  L.write(D, T, L.read(S, T));
  return true;
}

bool lowerCvta(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  StateSpace S = spaceOf(I);
  llvm::Value *X = L.read(I.Operands[1], T);
  if (S == StateSpace::Shared) {
    llvm::Value *Base = B.CreatePtrToInt(L.sharedBase(), B.getInt64Ty());
    llvm::Value *X64 = B.CreateZExtOrTrunc(X, B.getInt64Ty());
    llvm::Value *R = I.has(Modifier::To) ? B.CreateSub(X64, Base) : B.CreateAdd(X64, Base);
    L.write(I.Operands[0], T, B.CreateZExtOrTrunc(R, X->getType()));
    return true;
  }
  // Global, local, const and param addresses are host pointers already.
  L.write(I.Operands[0], T, X);
  return true;
}

bool lowerIsspacep(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  llvm::Value *X = L.read(I.Operands[1], ScalarType::U64);
  llvm::Value *Base = B.CreatePtrToInt(L.sharedBase(), B.getInt64Ty());
  llvm::Value *Size = B.CreateZExt(L.ctxField(codegen::TCTotalSmemSize), B.getInt64Ty());
  llvm::Value *InShared = B.CreateAnd(B.CreateICmpUGE(X, Base), B.CreateICmpULT(X, B.CreateAdd(Base, Size)));
  llvm::Value *R;
  // Another block of the cluster's shared memory is neither global nor local memory either.
  if (!I.has(Modifier::Shared) && !I.has(Modifier::Shared_Cta) && distributedShared(L.module()))
    InShared =
        B.CreateICmpNE(L.callHelper("ptxrt_cluster_is_shared", B.getInt32Ty(), {L.threadCtx(), X}), B.getInt32(0));
  if (I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta))
    R = InShared;
  else if (I.has(Modifier::Global))
    R = B.CreateAnd(B.CreateNot(InShared), callHelper(L, "ptxrt_is_global", X));
  else if (I.has(Modifier::Local))
    R = B.CreateAnd(B.CreateNot(InShared), B.CreateNot(callHelper(L, "ptxrt_is_global", X)));
  else
    R = B.getInt1(false);
  L.write(I.Operands[0], ScalarType::Pred, R);
  return true;
}

/// alloca.type ptr, size{, immAlign}; stacksave.type d; stackrestore.type a. Local addresses are host pointers,
/// so these are the LLVM dynamic alloca and stack save/restore on the executing thread's stack.
bool lowerStackOps(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type() == ScalarType::None ? ScalarType::U64 : I.type();
  llvm::Type *IT = B.getIntNTy(ptx::bitWidth(T));
  if (I.Op == Opcode::Alloca) {
    if (I.Operands.size() < 2)
      return L.unsupported(I, "operands");
    llvm::Value *Size = B.CreateZExt(L.read(I.Operands[1], T), B.getInt64Ty());
    uint64_t Al = I.Operands.size() > 2 && I.Operands[2].Kind == ptx::OperandKind::Immediate ? I.Operands[2].Bits : 8;
    if (Al < 8 || (Al & (Al - 1)))
      Al = 8;
    llvm::AllocaInst *A = B.CreateAlloca(B.getInt8Ty(), Size);
    A->setAlignment(llvm::Align(Al));
    L.write(I.Operands[0], T, B.CreatePtrToInt(A, IT));
    return true;
  }
  if (I.Op == Opcode::Stacksave) {
    L.write(I.Operands[0], T, B.CreatePtrToInt(B.CreateStackSave(), IT));
    return true;
  }
  B.CreateStackRestore(B.CreateIntToPtr(B.CreateZExt(L.read(I.Operands[0], T), B.getInt64Ty()), B.getPtrTy()));
  return true;
}

} // namespace

namespace {
/// The function's accumulator of misaligned address bits: an i32 alloca at the top of the entry block, set to
/// zero there (mem2reg makes it an SSA value; in a loop it is an OR reduction the vectorizer handles). The bits
/// are below 16 (no access is wider), so 32 bits hold them: a thread loop's accumulator then takes one vector
/// register of the loop's 32-bit lanes, where 64-bit ones took two (or made LLVM halve the vector width).
llvm::AllocaInst *misalignmentAccumulator(FunctionLowering &L) {
  llvm::AllocaInst *&A = L.misalignedBits();
  if (A)
    return A;
  llvm::BasicBlock &Entry = L.function()->getEntryBlock();
  llvm::IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
  A = EB.CreateAlloca(EB.getInt32Ty(), nullptr, "misaligned.bits");
  markMisalignedAccumulator(A);
  EB.CreateStore(EB.getInt32(0), A);
  return A;
}
} // namespace

void ptxforge::codegen::detail::accumulateMisalignment(FunctionLowering &L, llvm::Value *Ptr, unsigned Bytes) {
  auto &B = L.b();
  accumulateMisalignmentBits(L, B.CreateAnd(B.CreatePtrToInt(Ptr, B.getInt64Ty()), B.getInt64(Bytes - 1)));
}

void ptxforge::codegen::detail::accumulateMisalignmentBits(FunctionLowering &L, llvm::Value *Bits) {
  auto &B = L.b();
  llvm::AllocaInst *Acc = misalignmentAccumulator(L);
  llvm::Value *Low = B.CreateTrunc(Bits, B.getInt32Ty());
  B.CreateStore(B.CreateOr(B.CreateLoad(B.getInt32Ty(), Acc), Low), Acc);
}

namespace {
/// if (Bits != 0) ptxrt_misaligned(Ctx), leaving B in the aligned continuation.
void faultIfSet(llvm::IRBuilder<> &B, llvm::Value *Bits, llvm::Value *Ctx) {
  llvm::LLVMContext &C = B.getContext();
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::BasicBlock *Fault = llvm::BasicBlock::Create(C, "misaligned", F);
  llvm::BasicBlock *Ok = llvm::BasicBlock::Create(C, "aligned", F);
  B.CreateCondBr(B.CreateICmpNE(Bits, llvm::ConstantInt::get(Bits->getType(), 0)), Fault, Ok,
                 llvm::MDBuilder(C).createUnlikelyBranchWeights());
  B.SetInsertPoint(Fault);
  llvm::Module &M = *F->getParent();
  B.CreateCall(M.getOrInsertFunction("ptxrt_misaligned", B.getVoidTy(), B.getPtrTy()), {Ctx});
  B.CreateUnreachable();
  B.SetInsertPoint(Ok);
}
} // namespace

void ptxforge::codegen::detail::checkMisalignment(FunctionLowering &L, bool Deferrable) {
  auto &B = L.b();
  // Always made, even before the accesses are lowered: a loop may branch back to a check above them. Without
  // accesses the accumulator stays the constant zero and the check folds away.
  llvm::Value *Bits = B.CreateLoad(B.getInt32Ty(), misalignmentAccumulator(L));
  if (!Deferrable) {
    faultIfSet(B, Bits, L.threadCtx());
    return;
  }
  llvm::BasicBlock *Defer = llvm::BasicBlock::Create(L.ctx(), "defer.misaligned", L.function());
  llvm::BasicBlock *Check = llvm::BasicBlock::Create(L.ctx(), "check.misaligned", L.function());
  llvm::BasicBlock *Done = llvm::BasicBlock::Create(L.ctx(), "checked", L.function());
  llvm::StructType *CtxTy = L.module().ThreadCtxTy;
  B.CreateCondBr(B.CreateICmpNE(L.ctxField(codegen::TCDeferChecks), B.getInt32(0)), Defer, Check);
  B.SetInsertPoint(Defer);
  llvm::Value *Field = B.CreateStructGEP(CtxTy, L.threadCtx(), codegen::TCMisalignedBits);
  B.CreateStore(B.CreateOr(B.CreateLoad(B.getInt32Ty(), Field), Bits), Field);
  B.CreateBr(Done);
  B.SetInsertPoint(Check);
  faultIfSet(B, Bits, L.threadCtx());
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
}

void ptxforge::codegen::detail::beginDeferredChecks(llvm::IRBuilder<> &B, ModuleLowering &ML, llvm::Value *Ctx) {
  B.CreateStore(B.getInt32(1), B.CreateStructGEP(ML.ThreadCtxTy, Ctx, codegen::TCDeferChecks));
  B.CreateStore(B.getInt32(0), B.CreateStructGEP(ML.ThreadCtxTy, Ctx, codegen::TCMisalignedBits));
}

void ptxforge::codegen::detail::foldDeferredChecks(ModuleLowering &ML, llvm::Function *F) {
  llvm::Argument *Ctx = F->getArg(0);
  std::vector<llvm::LoadInst *> Flags;
  for (llvm::BasicBlock &BB : *F)
    for (llvm::Instruction &I : BB)
      if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I))
        if (auto *G = llvm::dyn_cast<llvm::GetElementPtrInst>(L->getPointerOperand());
            G && G->getPointerOperand() == Ctx && G->getSourceElementType() == ML.ThreadCtxTy &&
            G->getNumIndices() == 2 && llvm::isa<llvm::ConstantInt>(G->getOperand(2)) &&
            llvm::cast<llvm::ConstantInt>(G->getOperand(2))->getZExtValue() == codegen::TCDeferChecks)
          Flags.push_back(L);
  // The immediate checks' branches fold away with the flag: a region loop keeps its thread ids in the context
  // only while it may call something, and a dead call to ptxrt_misaligned would count.
  std::vector<llvm::Instruction *> Compares;
  for (llvm::LoadInst *L : Flags) {
    for (llvm::User *U : L->users())
      if (auto *I = llvm::dyn_cast<llvm::ICmpInst>(U))
        Compares.push_back(I);
    L->replaceAllUsesWith(llvm::ConstantInt::get(L->getType(), 1));
    L->eraseFromParent();
  }
  if (Compares.empty())
    return;
  const llvm::DataLayout &DL = F->getDataLayout();
  for (llvm::Instruction *I : Compares)
    if (llvm::Value *V = llvm::simplifyInstruction(I, DL)) {
      I->replaceAllUsesWith(V);
      I->eraseFromParent();
    }
  for (llvm::BasicBlock &BB : *F)
    llvm::ConstantFoldTerminator(&BB);
  llvm::EliminateUnreachableBlocks(*F);
}

void ptxforge::codegen::detail::endDeferredChecks(llvm::IRBuilder<> &B, ModuleLowering &ML, llvm::Value *Ctx,
                                                  llvm::Value *FaultCtx) {
  faultIfSet(B, B.CreateLoad(B.getInt32Ty(), B.CreateStructGEP(ML.ThreadCtxTy, Ctx, codegen::TCMisalignedBits)),
             FaultCtx ? FaultCtx : Ctx);
}

llvm::Value *ptxforge::codegen::detail::callHelper(FunctionLowering &L, const char *Name, llvm::Value *X) {
  llvm::Value *R = L.callHelper(Name, L.b().getInt32Ty(), {X});
  return L.b().CreateICmpNE(R, L.b().getInt32(0));
}

bool ptxforge::codegen::detail::lowerMemory(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Ld:
  case Opcode::Ldu:
    return lowerLoadStore(L, I, true);
  case Opcode::St:
    return lowerLoadStore(L, I, false);
  case Opcode::Mov:
    return lowerMov(L, I);
  case Opcode::Cvta:
    return lowerCvta(L, I);
  case Opcode::Isspacep:
    return lowerIsspacep(L, I);
  case Opcode::Alloca:
  case Opcode::Stacksave:
  case Opcode::Stackrestore:
    return lowerStackOps(L, I);
  default:
    return false;
  }
}
