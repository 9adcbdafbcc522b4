// See LoopCuts.h.
#include "LoopCuts.h"
#include "Markers.h"

#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <algorithm>
#include <functional>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

namespace {

/// The edges into one block that a loop cut stops threads at.
struct LoopCutTarget {
  llvm::BasicBlock *Entry;               ///< where the threads resume: a new region's entry
  std::vector<llvm::BasicBlock *> Stops; ///< blocks ending in an unconditional branch to Entry: the cuts
};

/// Each cut loop's region is copied into the fast, the generic and maybe a uniform region loop; nbody's body,
/// unrolled 8 times, is about 1000 instructions before optimization. Larger bodies only amortize the
/// dispatcher round better, so the bound is on compile time.
constexpr unsigned MaxLoopInstructions = 4000;

/// Loops without calls or atomic or volatile accesses. Those that only compute into the thread's registers
/// (reductions, dot products) the cut lets LLVM vectorize across threads. One that writes memory (a histogram's
/// shared read-modify-writes) stays scalar, but a pass then reads the threads' consecutive elements: uncut,
/// each thread strides through its input by the grid size, and a power-of-two stride puts every line into one
/// L1 and L2 set (on Zen 4 the histogram ran 4.5x slower so). Threads of a block are unordered between
/// barriers, so running their iterations interleaved is one of the executions the GPU may produce.
bool worthCutting(const llvm::Loop &L, const llvm::DenseSet<llvm::Instruction *> &CutExits,
                  const llvm::DenseSet<llvm::BasicBlock *> &RegionEntries) {
  unsigned Size = 0;
  for (llvm::BasicBlock *BB : L.blocks()) {
    if (RegionEntries.count(BB) || CutExits.count(BB->getTerminator()))
      return false;
    for (llvm::Instruction &I : *BB) {
      if (++Size > MaxLoopInstructions)
        return false;
      if (auto *CI = llvm::dyn_cast<llvm::CallBase>(&I)) {
        if (!llvm::isa<llvm::IntrinsicInst>(CI) || CI->mayWriteToMemory() || CI->mayThrow())
          return false;
      } else if (I.isAtomic() || I.isVolatile() || (I.mayWriteToMemory() && !llvm::isa<llvm::StoreInst>(I))) {
        return false;
      }
    }
  }
  return true;
}

/// A pass of a cut loop runs one iteration of every thread; a short body (reduce's grid-stride loop is a load
/// and an add) then spends most of its time in the loop's setup and the dispatch between passes. Such bodies
/// are unrolled to about this many instructions first (each copy keeps its exits), so a pass runs several
/// iterations.
constexpr unsigned UnrolledLoopInstructions = 160;
constexpr unsigned MaxUnroll = 4;

/// Unrolls L Count times for a cut at its (single) latch: copy k's back edge enters copy k + 1, the last
/// copy's the original header. The lowering's code is phi-free (registers are allocas), so a copy needs no
/// value remapping beyond its own blocks; loops whose values are used outside are left alone.
void unrollForCut(llvm::Loop &L, unsigned Count) {
  llvm::BasicBlock *H = L.getHeader(), *Latch = L.getLoopLatch();
  if (!Latch || Count < 2)
    return;
  for (llvm::BasicBlock *BB : L.blocks())
    for (llvm::Instruction &I : *BB) {
      if (llvm::isa<llvm::PHINode>(I) ||
          (I.isTerminator() && !llvm::isa<llvm::BranchInst>(I) && !llvm::isa<llvm::SwitchInst>(I)))
        return;
      for (llvm::User *U : I.users())
        if (!L.contains(llvm::cast<llvm::Instruction>(U)->getParent()))
          return;
    }
  std::vector<llvm::BasicBlock *> Orig(L.blocks().begin(), L.blocks().end());
  llvm::Function *F = H->getParent();
  std::vector<llvm::BasicBlock *> Headers{H}, Latches{Latch};
  for (unsigned K = 1; K < Count; ++K) {
    llvm::ValueToValueMapTy VMap;
    cloneBlocks(Orig, VMap, ".u" + llvm::Twine(K), F);
    Headers.push_back(llvm::cast<llvm::BasicBlock>(VMap[H]));
    Latches.push_back(llvm::cast<llvm::BasicBlock>(VMap[Latch]));
  }
  for (unsigned K = 0; K < Count; ++K)
    Latches[K]->getTerminator()->replaceSuccessorWith(Headers[K], Headers[(K + 1) % Count]);
}

/// Cuts F's innermost loops worth cutting, the first MaxLoops in preorder. CutExits: the terminators that
/// already end a region; RegionEntries: the regions' entry blocks so far.
std::vector<LoopCutTarget> cutInnermostLoops(llvm::Function &F, const llvm::DenseSet<llvm::Instruction *> &CutExits,
                                             const llvm::DenseSet<llvm::BasicBlock *> &RegionEntries, size_t MaxLoops) {
  // The loops to cut, by header (unrolling keeps each loop's header and adds its copies to the same loop).
  llvm::SmallPtrSet<llvm::BasicBlock *, 8> Headers;
  {
    llvm::DominatorTree DT(F);
    llvm::LoopInfo LI(DT);
    std::vector<std::pair<llvm::Loop *, unsigned>> Chosen;
    for (llvm::Loop *L : LI.getLoopsInPreorder()) {
      if (Chosen.size() == MaxLoops)
        break;
      if (!L->isInnermost() || !worthCutting(*L, CutExits, RegionEntries))
        continue;
      unsigned Size = 0;
      for (llvm::BasicBlock *BB : L->blocks())
        Size += static_cast<unsigned>(BB->size());
      Chosen.push_back({L, std::min(MaxUnroll, UnrolledLoopInstructions / std::max(Size, 1u))});
      Headers.insert(L->getHeader());
    }
    for (auto &[L, Count] : Chosen) // innermost loops share no blocks: each unrolls on its own
      unrollForCut(*L, Count);
  }
  llvm::DominatorTree DT(F);
  llvm::LoopInfo LI(DT);
  // All edges first: splitting them changes the CFG the analyses describe.
  llvm::MapVector<llvm::BasicBlock *, std::vector<llvm::BasicBlock *>> Edges; // target -> sources
  for (llvm::Loop *L : LI.getLoopsInPreorder()) {
    if (!Headers.count(L->getHeader()))
      continue;
    llvm::BasicBlock *H = L->getHeader();
    for (llvm::BasicBlock *P : llvm::predecessors(H))
      Edges[H].push_back(P);
    llvm::SmallVector<llvm::Loop::Edge, 4> Exits;
    L->getExitEdges(Exits);
    for (auto &[From, To] : Exits)
      Edges[const_cast<llvm::BasicBlock *>(To)].push_back(const_cast<llvm::BasicBlock *>(From));
  }
  std::vector<LoopCutTarget> Targets;
  llvm::LLVMContext &C = F.getContext();
  for (auto &[To, Froms] : Edges) {
    // A fresh entry block: the region builder puts per-region code (recomputed registers) at region entries,
    // which To's other predecessors need not run.
    llvm::BasicBlock *Entry = llvm::BasicBlock::Create(C, "loop.cut", &F, To);
    llvm::BranchInst::Create(To, Entry);
    LoopCutTarget T{Entry, {}};
    llvm::SmallPtrSet<llvm::BasicBlock *, 4> Seen;
    for (llvm::BasicBlock *From : Froms) {
      if (!Seen.insert(From).second)
        continue;
      llvm::BasicBlock *Stop = llvm::BasicBlock::Create(C, "loop.stop", &F, To);
      llvm::BranchInst::Create(Entry, Stop);
      From->getTerminator()->replaceSuccessorWith(To, Stop);
      T.Stops.push_back(Stop);
    }
    Targets.push_back(std::move(T));
  }
  return Targets;
}

} // namespace

llvm::Expected<bool> ptxforge::codegen::detail::cutLoops(llvm::Function &F, unsigned CutBudget) {
  if (llvm::Error E = checkThreadContract(F))
    return E;
  // The regions so far: the first, one after each marked call and rendezvous, one for each earlier loop cut.
  size_t Regions = 1;
  unsigned Orders = 0;
  llvm::DenseSet<llvm::Instruction *> CutExits;
  llvm::DenseSet<llvm::BasicBlock *> Entries;
  for (llvm::BasicBlock &BB : F) {
    for (llvm::Instruction &I : BB)
      if (auto *CI = llvm::dyn_cast<llvm::CallInst>(&I); CI && regionCutOf(CI))
        ++Regions;
    std::optional<CutEdge> E = cutEdgeOf(BB.getTerminator());
    if (!E)
      continue;
    CutExits.insert(BB.getTerminator());
    Entries.insert(BB.getTerminator()->getSuccessor(0));
    if (!isLoopCutEdge(*E))
      ++Regions;
    else
      Orders = std::max(Orders, E->Order + 1);
  }
  Regions += Orders;
  if (Regions >= CutBudget)
    return false;
  std::vector<LoopCutTarget> Targets = cutInnermostLoops(F, CutExits, Entries, (CutBudget - Regions) / 3);
  for (size_t K = 0; K < Targets.size(); ++K)
    for (llvm::BasicBlock *Stop : Targets[K].Stops)
      markCutEdge(llvm::cast<llvm::BranchInst>(Stop->getTerminator()),
                  {{RCLoop, 0}, Orders + static_cast<unsigned>(K)});
  return !Targets.empty();
}

llvm::GlobalVariable *ptxforge::codegen::detail::emitCutTable(llvm::Module &M, llvm::Function &F,
                                                              llvm::ArrayRef<RegionCut> Cuts) {
  std::vector<uint32_t> Table;
  for (const RegionCut &Cut : Cuts) {
    Table.push_back(Cut.Kind);
    Table.push_back(Cut.Arg);
  }
  llvm::Constant *Init = llvm::ConstantDataArray::get(M.getContext(), Table);
  return new llvm::GlobalVariable(M, Init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, Init,
                                  F.getName() + ".cuts");
}

namespace {

/// How many instructions and registers apart a counter and the address it feeds may be: each PTX instruction
/// is a load, an operation (a shift two: the lowering's select) and a store to a register, so 12 missed a scan's
/// offset (`sub` index, `shl` by 2, `add` the array's base, the shared window's zext, mask and GEP).
constexpr unsigned MaxAddressDepth = 32, MaxAddressSearch = 512;

/// Whether V, a register's value, feeds an address through arithmetic and other registers: a loop counter or
/// an index.
bool feedsAddress(llvm::Value *V, llvm::SmallPtrSetImpl<llvm::Value *> &Seen, unsigned Depth = 0) {
  // A bounded search: through registers a value reaches much of a large kernel (compute_gemm's 5,000 registers
  // and 2,000 wmma: every load of a barrier region searched most of the function, minutes of compile time), and
  // a register found late is no likely counter anyway.
  if (Depth > MaxAddressDepth || Seen.size() >= MaxAddressSearch || !Seen.insert(V).second)
    return false;
  for (llvm::User *U : V->users()) {
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(U); L && L->getPointerOperand() == V)
      return true;
    if (auto *S = llvm::dyn_cast<llvm::StoreInst>(U)) {
      if (S->getPointerOperand() == V)
        return true;
      // Through registers, not a helper's buffer (an array: a matrix collective's fragments, which every mma of
      // the kernel passes through).
      if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(S->getPointerOperand()); A && !A->isArrayAllocation())
        for (llvm::User *AU : A->users())
          if (llvm::isa<llvm::LoadInst>(AU) && feedsAddress(AU, Seen, Depth + 1))
            return true;
      continue;
    }
    if ((llvm::isa<llvm::BinaryOperator>(U) || llvm::isa<llvm::CastInst>(U) || llvm::isa<llvm::SelectInst>(U) ||
         llvm::isa<llvm::GetElementPtrInst>(U)) &&
        feedsAddress(U, Seen, Depth + 1))
      return true;
  }
  return false;
}

} // namespace

std::vector<llvm::AllocaInst *>
ptxforge::codegen::detail::uniformCandidates(llvm::ArrayRef<llvm::BasicBlock *> Blocks,
                                             llvm::function_ref<bool(const llvm::Instruction *)> EndsRegion,
                                             const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread) {
  llvm::SmallPtrSet<llvm::BasicBlock *, 16> In(Blocks.begin(), Blocks.end());
  // A block that a thread may run twice in one pass (the region after a loop can hold other loops) would read
  // its own earlier write, not the pass's first value: only acyclic regions qualify.
  llvm::DenseMap<llvm::BasicBlock *, int> Color; // 1 on the path, 2 done
  std::function<bool(llvm::BasicBlock *)> Cyclic = [&](llvm::BasicBlock *BB) {
    int &C = Color[BB];
    if (C)
      return C == 1;
    C = 1;
    if (!EndsRegion(BB->getTerminator()))
      for (llvm::BasicBlock *S : llvm::successors(BB))
        if (In.count(S) && Cyclic(S))
          return true;
    Color[BB] = 2;
    return false;
  };
  if (!Blocks.empty() && Cyclic(Blocks.front()))
    return {};
  std::vector<llvm::BasicBlock *> Straight =
      straightEntry(Blocks.front(), [&](const llvm::BasicBlock *BB) { return In.count(BB) != 0; });
  llvm::SmallPtrSet<llvm::BasicBlock *, 8> First(Straight.begin(), Straight.end());
  std::vector<llvm::AllocaInst *> Found;
  for (auto &[A, Arr] : PerThread) {
    if (!A->getAllocatedType()->isIntegerTy() || A->isArrayAllocation())
      continue;
    bool Fits = true, Address = false;
    for (llvm::User *U : A->users()) {
      auto *I = llvm::dyn_cast<llvm::Instruction>(U);
      if (!I || !In.count(I->getParent()))
        continue;
      auto *L = llvm::dyn_cast<llvm::LoadInst>(I);
      Fits &= (L && L->getType() == A->getAllocatedType()) || llvm::isa<llvm::StoreInst>(I);
      llvm::SmallPtrSet<llvm::Value *, 32> Seen;
      Address |= L && First.count(I->getParent()) && feedsAddress(L, Seen);
    }
    if (Fits && Address)
      Found.push_back(A);
  }
  // A stable order: the per-thread map's is by pointer.
  llvm::sort(Found, [](llvm::AllocaInst *X, llvm::AllocaInst *Y) { return X->getName() < Y->getName(); });
  return Found;
}

llvm::Value *ptxforge::codegen::detail::emitSlotScan(llvm::IRBuilder<> &B,
                                                     llvm::ArrayRef<std::pair<llvm::Type *, llvm::Value *>> Arrays,
                                                     llvm::Value *N, SlotPattern Pattern) {
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::LLVMContext &C = F->getContext();
  llvm::Type *I64 = B.getInt64Ty();
  bool PlusThread = Pattern == SlotPattern::FirstPlusThread;
  llvm::Value *N64 = B.CreateZExt(N, I64);
  // FirstPlusThread compares in 64 bits, where first + T cannot wrap; the last thread's value must then fit.
  auto widen = [&](llvm::Value *V) { return PlusThread ? B.CreateSExt(V, I64) : V; };
  std::vector<llvm::Value *> First;
  llvm::Value *Ok = B.getTrue();
  for (auto &[Ty, Arr] : Arrays) {
    First.push_back(widen(B.CreateLoad(Ty, Arr)));
    if (PlusThread)
      Ok = B.CreateAnd(
          Ok, B.CreateICmpSLE(B.CreateAdd(First.back(), B.CreateSub(N64, B.getInt64(1))), B.getInt64(INT32_MAX)));
  }
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  llvm::BasicBlock *Body = llvm::BasicBlock::Create(C, "slot.scan", F);
  llvm::BasicBlock *Done = llvm::BasicBlock::Create(C, "slot.done", F);
  B.CreateBr(Body);
  B.SetInsertPoint(Body);
  llvm::PHINode *T = B.CreatePHI(I64, 2), *Mismatch = B.CreatePHI(B.getInt1Ty(), 2);
  T->addIncoming(B.getInt64(0), Pre);
  Mismatch->addIncoming(B.getFalse(), Pre);
  llvm::Value *Any = Mismatch;
  for (size_t K = 0; K < Arrays.size(); ++K) {
    auto [Ty, Arr] = Arrays[K];
    llvm::Value *V = widen(B.CreateLoad(Ty, B.CreateGEP(Ty, Arr, T)));
    Any = B.CreateOr(Any, B.CreateICmpNE(V, PlusThread ? B.CreateAdd(First[K], T) : First[K]));
  }
  llvm::Value *Next = B.CreateAdd(T, B.getInt64(1));
  T->addIncoming(Next, Body);
  Mismatch->addIncoming(Any, Body);
  B.CreateCondBr(B.CreateICmpULT(Next, N64), Body, Done);
  B.SetInsertPoint(Done);
  return B.CreateAnd(Ok, B.CreateNot(Any));
}

std::vector<llvm::BasicBlock *>
ptxforge::codegen::detail::straightEntry(llvm::BasicBlock *Entry,
                                         llvm::function_ref<bool(const llvm::BasicBlock *)> In) {
  std::vector<llvm::BasicBlock *> Chain{Entry};
  for (;;) {
    auto *Br = llvm::dyn_cast<llvm::BranchInst>(Chain.back()->getTerminator());
    llvm::BasicBlock *Next = Br && Br->isUnconditional() ? Br->getSuccessor(0) : nullptr;
    if (!Next || !In(Next) || Next->getSinglePredecessor() != Chain.back() ||
        std::find(Chain.begin(), Chain.end(), Next) != Chain.end())
      return Chain;
    Chain.push_back(Next);
  }
}

std::vector<llvm::BasicBlock *> ptxforge::codegen::detail::cloneBlocks(llvm::ArrayRef<llvm::BasicBlock *> Blocks,
                                                                       llvm::ValueToValueMapTy &VMap,
                                                                       const llvm::Twine &Suffix, llvm::Function *F) {
  std::vector<llvm::BasicBlock *> Copies;
  for (llvm::BasicBlock *BB : Blocks) {
    llvm::BasicBlock *C = llvm::CloneBasicBlock(BB, VMap, Suffix, F);
    VMap[BB] = C;
    Copies.push_back(C);
  }
  for (llvm::BasicBlock *C : Copies)
    for (llvm::Instruction &I : *C)
      llvm::RemapInstruction(&I, VMap, llvm::RF_IgnoreMissingLocals | llvm::RF_NoModuleLevelChanges);
  return Copies;
}

bool ptxforge::codegen::detail::dependsOnThreadId(llvm::AllocaInst *A, llvm::Value *Ctx,
                                                  llvm::DenseMap<llvm::AllocaInst *, bool> &FromThreadId) {
  if (auto It = FromThreadId.find(A); It != FromThreadId.end())
    return It->second;
  FromThreadId[A] = false; // a register fed only by itself (a counter) does not
  std::function<bool(llvm::Value *, unsigned)> Depends = [&](llvm::Value *V, unsigned Depth) -> bool {
    auto *I = llvm::dyn_cast<llvm::Instruction>(V);
    if (!I || Depth > 64)
      return Depth > 64;
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(I)) {
      llvm::Value *P = L->getPointerOperand();
      if (auto *G = llvm::dyn_cast<llvm::GetElementPtrInst>(P); G && G->getPointerOperand() == Ctx) {
        auto *Field = G->getNumIndices() >= 2 ? llvm::dyn_cast<llvm::ConstantInt>(G->getOperand(2)) : nullptr;
        if (!Field)
          return true;
        uint64_t K = Field->getZExtValue();
        return K == TCTid || K == TCLaneId || K == TCWarpId || K == TCLinearTid;
      }
      if (auto *Other = llvm::dyn_cast<llvm::AllocaInst>(P); Other && Other != Ctx)
        return dependsOnThreadId(Other, Ctx, FromThreadId);
      return Depends(P, Depth + 1);
    }
    for (llvm::Value *Op : I->operands())
      if (!llvm::isa<llvm::BasicBlock>(Op) && Depends(Op, Depth + 1))
        return true;
    return false;
  };
  bool R = false;
  for (llvm::User *U : A->users())
    if (auto *S = llvm::dyn_cast<llvm::StoreInst>(U); S && S->getPointerOperand() == A)
      R |= Depends(S->getValueOperand(), 0);
  FromThreadId[A] = R;
  return R;
}
