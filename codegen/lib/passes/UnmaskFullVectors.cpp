// See Passes.h: masked vector memory operations get an unmasked fast path for all-true masks.
#include "Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace {

/// `all lanes of Mask set`.
Value *allTrue(IRBuilder<> &B, Value *Mask) { return B.CreateAndReduce(Mask); }

} // namespace

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
    SplitBlockAndInsertIfThenElse(allTrue(B, Mask), II, &Then, &Else, Likely);
    B.SetInsertPoint(Then);
    Instruction *Plain;
    if (Load) {
      Plain = B.CreateAlignedLoad(II->getType(), Ptr, A);
    } else {
      Plain = B.CreateAlignedStore(II->getArgOperand(0), Ptr, A);
    }
    Plain->copyMetadata(*II);
    II->moveBefore(Else->getIterator());
    if (Load) {
      B.SetInsertPoint(II->getParent()->getSingleSuccessor()->getFirstNonPHIIt());
      PHINode *Phi = B.CreatePHI(II->getType(), 2);
      II->replaceAllUsesWith(Phi);
      Phi->addIncoming(Plain, Plain->getParent());
      Phi->addIncoming(II, II->getParent());
    }
  }
  return Ops.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
