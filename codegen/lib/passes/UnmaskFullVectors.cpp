// See Passes.h: masked vector memory operations get a plain path for all-true masks and none for all-false.
//
// Before:
//   %x = call @llvm.masked.load(%a, %m, ...); ...; call @llvm.masked.store(%y, %c, %m)
// After:
//   br (and-reduce %m), %full, %masked
//   full:   %x = load %a; ...; store %y, %c                           ; the whole stretch, plain
//   masked: each access: plain when and-reduce(%m), masked when or-reduce(%m), skipped otherwise
#include "Passes.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace {

bool isLoad(const IntrinsicInst *II) { return II->getIntrinsicID() == Intrinsic::masked_load; }
Value *maskOf(const IntrinsicInst *II) { return II->getArgOperand(isLoad(II) ? 1 : 2); }

/// A masked load/store with a mask that is not a constant: what this pass works on.
IntrinsicInst *maskedAccess(Instruction &I) {
  auto *II = dyn_cast<IntrinsicInst>(&I);
  if (!II || (II->getIntrinsicID() != Intrinsic::masked_load && II->getIntrinsicID() != Intrinsic::masked_store))
    return nullptr;
  Value *Mask = maskOf(II);
  return isa<FixedVectorType>(Mask->getType()) && !isa<Constant>(Mask) ? II : nullptr;
}

/// The plain load or store that II is when its mask is all true.
Instruction *plainAccess(IRBuilder<> &B, IntrinsicInst *II) {
  // masked.load(ptr, mask, passthru), masked.store(value, ptr, mask); the alignment is the pointer's.
  unsigned PtrArg = isLoad(II) ? 0 : 1;
  Value *Ptr = II->getArgOperand(PtrArg);
  Align A = II->getParamAlign(PtrArg).valueOrOne();
  Instruction *Plain = isLoad(II) ? static_cast<Instruction *>(B.CreateAlignedLoad(II->getType(), Ptr, A))
                                  : B.CreateAlignedStore(II->getArgOperand(0), Ptr, A);
  Plain->copyMetadata(*II);
  return Plain;
}

/// A vector iteration of a thread loop has several masked accesses, each under one of a few masks (one per
/// interleaved vector). Rather than a test and branch per access, the stretch of BB from the first such access
/// to the last is versioned once: when every mask is all true (almost always), a copy with plain accesses runs.
/// The masked version keeps the accesses (the caller gives each its own tests): where one of the masks is the
/// rare side of a divergent branch (a stencil's boundary store, all false almost everywhere), the others are
/// still all true there. Returns whether BB was versioned.
bool versionFullStretch(BasicBlock &BB, MDNode *Likely) {
  SmallVector<IntrinsicInst *, 8> Ops;
  for (Instruction &I : BB)
    if (IntrinsicInst *II = maskedAccess(I))
      Ops.push_back(II);
  if (Ops.size() < 2)
    return false;
  // Every mask must be known where the stretch starts: defined outside BB (then it dominates BB) or above it.
  Instruction *First = Ops.front();
  SmallPtrSet<const Instruction *, 32> Above;
  for (Instruction &I : BB) {
    if (&I == First)
      break;
    Above.insert(&I);
  }
  SmallVector<IntrinsicInst *, 8> Group;
  SmallVector<Value *, 4> Masks;
  for (IntrinsicInst *II : Ops) {
    auto *MI = dyn_cast<Instruction>(maskOf(II));
    if (MI && MI->getParent() == &BB && !Above.contains(MI))
      continue;
    Group.push_back(II);
    if (!is_contained(Masks, maskOf(II)))
      Masks.push_back(maskOf(II));
  }
  if (Group.size() < 2)
    return false;
  IRBuilder<> B(First);
  Value *All = Masks.front();
  for (Value *M : drop_begin(Masks))
    All = B.CreateAnd(All, M);
  Value *AllOn = B.CreateAndReduce(All);
  BasicBlock *Masked = SplitBlock(&BB, First);
  BasicBlock *Tail = SplitBlock(Masked, Group.back()->getNextNode());
  ValueToValueMapTy VMap;
  BasicBlock *Full = CloneBasicBlock(Masked, VMap, ".full", BB.getParent());
  Full->moveBefore(Masked);
  for (Instruction &I : *Full)
    RemapInstruction(&I, VMap, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
  for (IntrinsicInst *II : Group) {
    auto *Copy = cast<IntrinsicInst>(VMap[II]);
    B.SetInsertPoint(Copy);
    Instruction *Plain = plainAccess(B, Copy);
    Copy->replaceAllUsesWith(Plain);
    Copy->eraseFromParent();
    VMap[II] = Plain;
  }
  BB.getTerminator()->eraseFromParent();
  B.SetInsertPoint(&BB);
  B.CreateCondBr(AllOn, Full, Masked, Likely);
  // Values of the stretch used below it come from whichever version ran.
  for (Instruction &I : *Masked) {
    SmallVector<Use *, 8> Outside;
    for (Use &U : I.uses())
      if (cast<Instruction>(U.getUser())->getParent() != Masked)
        Outside.push_back(&U);
    if (Outside.empty())
      continue;
    PHINode *Phi = PHINode::Create(I.getType(), 2, I.getName() + ".merged");
    Phi->insertBefore(Tail->begin());
    Phi->addIncoming(&I, Masked);
    Phi->addIncoming(VMap[&I], Full);
    for (Use *U : Outside)
      U->set(Phi);
  }
  return true;
}

/// Not all true: the masked operation, skipped when no lane is on (the other side of a thread-divergent branch,
/// such as a stencil's boundary case, is all false almost everywhere). A load's users then read the returned phi
/// of it (null for a store).
PHINode *skipWhenAllOff(IntrinsicInst *II) {
  IRBuilder<> B(II);
  BasicBlock *Head = II->getParent();
  Instruction *Then = SplitBlockAndInsertIfThen(B.CreateOrReduce(maskOf(II)), II, /*Unreachable=*/false);
  II->moveBefore(Then->getIterator());
  if (!isLoad(II))
    return nullptr;
  BasicBlock *Tail = Then->getParent()->getSingleSuccessor();
  B.SetInsertPoint(Tail->getFirstNonPHIIt());
  PHINode *Result = B.CreatePHI(II->getType(), 2);
  II->replaceUsesWithIf(Result, [&](Use &U) { return U.getUser() != Result; });
  Result->addIncoming(II, II->getParent());
  Result->addIncoming(II->getArgOperand(2), Head);
  return Result;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::UnmaskFullVectorsPass::run(Function &F, FunctionAnalysisManager &) {
  MDNode *Likely = MDBuilder(F.getContext()).createLikelyBranchWeights();
  bool Changed = false;
  SmallVector<BasicBlock *, 32> Blocks;
  for (BasicBlock &BB : F)
    Blocks.push_back(&BB);
  for (BasicBlock *BB : Blocks)
    Changed |= versionFullStretch(*BB, Likely);
  SmallVector<IntrinsicInst *, 16> Ops;
  for (Instruction &I : instructions(F))
    if (IntrinsicInst *II = maskedAccess(I))
      Ops.push_back(II);
  for (IntrinsicInst *II : Ops) {
    Changed = true;
    IRBuilder<> B(II);
    Instruction *Then = nullptr, *Else = nullptr;
    SplitBlockAndInsertIfThenElse(B.CreateAndReduce(maskOf(II)), II, &Then, &Else, Likely);
    B.SetInsertPoint(Then);
    Instruction *Plain = plainAccess(B, II);
    II->moveBefore(Else->getIterator());
    if (PHINode *Partial = skipWhenAllOff(II)) {
      // II's users now read the all-off skip's phi; the plain path joins below.
      BasicBlock *Join = Then->getParent()->getSingleSuccessor();
      B.SetInsertPoint(Join->getFirstNonPHIIt());
      PHINode *Result = B.CreatePHI(II->getType(), 2);
      Partial->replaceUsesWithIf(Result, [&](Use &U) { return U.getUser() != Result; });
      Result->addIncoming(Plain, Plain->getParent());
      Result->addIncoming(Partial, Else->getParent());
    }
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
