// See Passes.h: full-vector global stores of launches that write more than the cache holds bypass the cache.
//
// Before (a block function's memory-bound loop):
//   store <8 x float> %v, ptr addrspace(1) %p, align 4
// After:
//   entry: %stream = icmp uge (%ntid.x * ... * %nctaid.z), threshold / 4
//   br (%stream and %p 32-byte aligned), %nt, %plain
//   nt:    store <8 x float> %v, ptr addrspace(1) %p, align 32, !nontemporal
//   plain: store <8 x float> %v, ptr addrspace(1) %p, align 4
//   ...    call @llvm.x86.sse.sfence() before each return
#include "Passes.h"

#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <cstddef>
#include <set>

using namespace llvm;
using ptxforge::codegen::ThreadContext;

namespace {

/// Whether F may order its memory accesses against other threads' (atomics, fences, volatile accesses, calls that
/// may do any of that): streaming stores are weakly ordered, so such functions keep plain ones.
bool ordersMemory(Function &F) {
  for (Instruction &I : instructions(F)) {
    if (I.isAtomic() || isa<FenceInst>(I))
      return true;
    if (auto *L = dyn_cast<LoadInst>(&I); L && L->isVolatile())
      return true;
    if (auto *S = dyn_cast<StoreInst>(&I); S && S->isVolatile())
      return true;
    if (auto *CB = dyn_cast<CallBase>(&I)) {
      const Function *Callee = CB->getCalledFunction();
      if (isa<IntrinsicInst>(CB) || CB->doesNotAccessMemory())
        continue;
      // The region dispatchers only read and write the block function's own arrays; a misaligned access ends
      // the launch with an error.
      if (Callee && (Callee->getName().starts_with("ptxrt_region_") || Callee->getName() == "ptxrt_misaligned"))
        continue;
      return true;
    }
  }
  return false;
}

/// A plain store of a whole vector of at least 32 bytes (a power of two) to PTX global memory.
bool streamable(const StoreInst &S) {
  auto *VT = dyn_cast<FixedVectorType>(S.getValueOperand()->getType());
  if (!VT || S.isVolatile() || S.getMetadata(LLVMContext::MD_nontemporal) ||
      !ptxforge::codegen::passes::isGlobalAccess(S))
    return false;
  TypeSize Bits = S.getModule()->getDataLayout().getTypeStoreSizeInBits(VT);
  uint64_t Bytes = Bits.getFixedValue() / 8;
  return Bits.getFixedValue() % 8 == 0 && Bytes >= 32 && isPowerOf2_64(Bytes);
}

/// Whether L's accesses outweigh its arithmetic: a floating-point operation or math intrinsic per access at most
/// twice. Long computations (black-scholes: ~60 per store) leave the cache time to fetch the lines they write,
/// and there the extra branch per store cost more than streaming saved (+25%).
bool memoryBound(const Loop &L) {
  unsigned Accesses = 0, Arithmetic = 0;
  for (const BasicBlock *BB : L.blocks())
    for (const Instruction &I : *BB) {
      if (isa<LoadInst>(I) || isa<StoreInst>(I))
        ++Accesses;
      else if (const auto *II = dyn_cast<IntrinsicInst>(&I))
        switch (II->getIntrinsicID()) {
        case Intrinsic::masked_load:
        case Intrinsic::masked_store:
        case Intrinsic::masked_gather:
        case Intrinsic::masked_scatter:
          ++Accesses;
          break;
        default:
          Arithmetic += II->getType()->isFPOrFPVectorTy();
          break;
        }
      else if (isa<BinaryOperator>(I) && I.getType()->isFPOrFPVectorTy())
        ++Arithmetic;
    }
  return Arithmetic <= 2 * Accesses;
}

/// Where a pointer points: its base and constant byte offset.
std::pair<const Value *, int64_t> addressOf(const Value *P, const DataLayout &DL) {
  APInt Offset(DL.getIndexTypeSizeInBits(P->getType()), 0);
  const Value *Base = P->stripAndAccumulateConstantOffsets(DL, Offset, /*AllowNonInbounds=*/true);
  return {Base, Offset.getSExtValue()};
}

/// The addresses F loads from: a store to one of them finds its line in the cache already (saxpy's
/// y = a*x + y), so streaming it saves no fetch and only evicts the line (saxpy +10%).
std::set<std::pair<const Value *, int64_t>> loadedAddresses(Function &F) {
  std::set<std::pair<const Value *, int64_t>> Loaded;
  const DataLayout &DL = F.getDataLayout();
  for (Instruction &I : instructions(F)) {
    if (auto *L = dyn_cast<LoadInst>(&I))
      Loaded.insert(addressOf(L->getPointerOperand(), DL));
    else if (auto *II = dyn_cast<IntrinsicInst>(&I); II && II->getIntrinsicID() == Intrinsic::masked_load)
      Loaded.insert(addressOf(II->getArgOperand(0), DL));
  }
  return Loaded;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::StreamingStoresPass::run(Function &F, FunctionAnalysisManager &AM) {
  unsigned CtxArg = 0;
  bool Block = F.hasFnAttribute(ContextArgumentAttr)
                   ? !F.getFnAttribute(ContextArgumentAttr).getValueAsString().getAsInteger(10, CtxArg)
                   : F.getName().starts_with("__ptx_block_");
  if (!Block || F.arg_size() <= CtxArg || !F.getArg(CtxArg)->getType()->isPointerTy() ||
      !Triple(F.getParent()->getTargetTriple()).isX86() || !ThresholdBytes)
    return PreservedAnalyses::all();
  // Most block functions have no candidate: one scan decides, before loops and addresses are looked at.
  SmallVector<StoreInst *, 8> Candidates, Stores;
  for (Instruction &I : instructions(F))
    if (auto *S = dyn_cast<StoreInst>(&I); S && streamable(*S))
      Candidates.push_back(S);
  if (Candidates.empty() || ordersMemory(F))
    return PreservedAnalyses::all();
  LoopInfo &LI = AM.getResult<LoopAnalysis>(F);
  std::set<std::pair<const Value *, int64_t>> Loaded = loadedAddresses(F);
  for (StoreInst *S : Candidates)
    if (const Loop *L = LI.getLoopFor(S->getParent());
        L && memoryBound(*L) && !Loaded.count(addressOf(S->getPointerOperand(), F.getDataLayout())))
      Stores.push_back(S);
  if (Stores.empty())
    return PreservedAnalyses::all();

  // The launch's thread count, from the block function's context (argument 0): %ntid and %nctaid.
  LLVMContext &C = F.getContext();
  IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
  Value *Ctx = F.getArg(CtxArg);
  Value *Threads = B.getInt64(1);
  for (size_t Field : {offsetof(ThreadContext, Ntid), offsetof(ThreadContext, Nctaid)})
    for (unsigned D = 0; D < 3; ++D) {
      Value *P = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Ctx, Field + 4 * D);
      Threads = B.CreateMul(Threads, B.CreateZExt(B.CreateLoad(B.getInt32Ty(), P), B.getInt64Ty()), "", true, true);
    }
  MDNode *NonTemporal = MDNode::get(C, ConstantAsMetadata::get(B.getInt32(1)));
  const DataLayout &DL = F.getDataLayout();
  IRBuilder<> EB(cast<Instruction>(Threads)->getNextNode());
  DenseMap<uint64_t, Value *> LargeFor; // by the bytes a thread stores
  for (StoreInst *S : Stores) {
    auto *VT = cast<FixedVectorType>(S->getValueOperand()->getType());
    uint64_t Bytes = DL.getTypeStoreSize(VT).getFixedValue();
    uint64_t PerThread = Bytes / VT->getNumElements();
    Value *&Large = LargeFor[PerThread];
    if (!Large)
      Large = EB.CreateICmpUGE(Threads, EB.getInt64((ThresholdBytes + PerThread - 1) / PerThread), "stream");
    // Streaming stores of a whole vector need its natural alignment; a thread loop's vectors mostly have it.
    IRBuilder<> SB(S);
    Value *Addr = SB.CreatePtrToInt(S->getPointerOperand(), SB.getInt64Ty());
    Value *Aligned = SB.CreateICmpEQ(SB.CreateAnd(Addr, Bytes - 1), SB.getInt64(0));
    Instruction *Then, *Else;
    SplitBlockAndInsertIfThenElse(SB.CreateAnd(Large, Aligned), S, &Then, &Else);
    auto *Streamed = cast<StoreInst>(S->clone());
    Streamed->insertBefore(Then->getIterator());
    Streamed->setAlignment(Align(Bytes));
    Streamed->setMetadata(LLVMContext::MD_nontemporal, NonTemporal);
    S->moveBefore(Else->getIterator());
  }
  // Streaming stores are weakly ordered: an sfence before each return makes them visible before the launch's
  // end is (the workers' completion is only an atomic counter).
  for (BasicBlock &BB : F)
    if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator()))
      IRBuilder<>(R).CreateIntrinsic(Intrinsic::x86_sse_sfence, {});
  return PreservedAnalyses::none();
}
