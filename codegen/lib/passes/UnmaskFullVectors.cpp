// See Passes.h: masked vector memory operations get a plain path for all-true masks and none for all-false.
#include "Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

PreservedAnalyses ptxforge::codegen::passes::UnmaskFullVectorsPass::run(Function &F, FunctionAnalysisManager &) {
  SmallVector<IntrinsicInst *, 16> Ops;
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if ((II->getIntrinsicID() == Intrinsic::masked_load || II->getIntrinsicID() == Intrinsic::masked_store) &&
          isa<FixedVectorType>(II->getArgOperand(II->getIntrinsicID() == Intrinsic::masked_load ? 1 : 2)->getType()) &&
          !isa<Constant>(II->getArgOperand(II->getIntrinsicID() == Intrinsic::masked_load ? 1 : 2)))
        Ops.push_back(II);
  MDNode *Likely = MDBuilder(F.getContext()).createLikelyBranchWeights();
  for (IntrinsicInst *II : Ops) {
    bool Load = II->getIntrinsicID() == Intrinsic::masked_load;
    // masked.load(ptr, mask, passthru), masked.store(value, ptr, mask); the alignment is the pointer's.
    unsigned PtrArg = Load ? 0 : 1;
    Value *Ptr = II->getArgOperand(PtrArg);
    Value *Mask = II->getArgOperand(Load ? 1 : 2);
    Align A = II->getParamAlign(PtrArg).valueOrOne();
    IRBuilder<> B(II);
    Instruction *Then = nullptr, *Else = nullptr;
    SplitBlockAndInsertIfThenElse(B.CreateAndReduce(Mask), II, &Then, &Else, Likely);
    B.SetInsertPoint(Then);
    Instruction *Plain = Load ? static_cast<Instruction *>(B.CreateAlignedLoad(II->getType(), Ptr, A))
                              : B.CreateAlignedStore(II->getArgOperand(0), Ptr, A);
    Plain->copyMetadata(*II);
    // Not all true: the masked operation, skipped when no lane is on (the other side of a thread-divergent
    // branch, such as a stencil's boundary case, is all false almost everywhere).
    B.SetInsertPoint(Else);
    BasicBlock *Head = Else->getParent();
    Instruction *Partial = SplitBlockAndInsertIfThen(B.CreateOrReduce(Mask), Else, /*Unreachable=*/false);
    II->moveBefore(Partial->getIterator());
    if (Load) {
      BasicBlock *Tail = Else->getParent();
      B.SetInsertPoint(Then->getParent()->getSingleSuccessor()->getFirstNonPHIIt());
      PHINode *Result = B.CreatePHI(II->getType(), 2);
      II->replaceAllUsesWith(Result);
      B.SetInsertPoint(Tail->getFirstNonPHIIt());
      PHINode *Masked = B.CreatePHI(II->getType(), 2);
      Masked->addIncoming(II, II->getParent());
      Masked->addIncoming(II->getArgOperand(2), Head);
      Result->addIncoming(Plain, Plain->getParent());
      Result->addIncoming(Masked, Tail);
    }
  }
  return Ops.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
