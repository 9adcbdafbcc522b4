// See Passes.h: a gather or scatter whose lanes turn out to address consecutive elements runs as a vector load or
// store instead.
#include "Passes.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace {

/// Gathers and scatters of at least this many lanes are worth the test (below it a gather is a few loads).
constexpr unsigned MinLanes = 4;

} // namespace

PreservedAnalyses ptxforge::codegen::passes::ContiguousGathersPass::run(Function &F, FunctionAnalysisManager &) {
  const DataLayout &DL = F.getDataLayout();
  SmallVector<IntrinsicInst *, 16> Ops;
  for (Instruction &I : instructions(F)) {
    auto *II = dyn_cast<IntrinsicInst>(&I);
    if (!II || (II->getIntrinsicID() != Intrinsic::masked_gather && II->getIntrinsicID() != Intrinsic::masked_scatter))
      continue;
    bool Gather = II->getIntrinsicID() == Intrinsic::masked_gather;
    auto *PtrsTy = dyn_cast<FixedVectorType>(II->getArgOperand(Gather ? 0 : 1)->getType());
    Type *Elt = (Gather ? II->getType() : II->getArgOperand(0)->getType())->getScalarType();
    if (PtrsTy && PtrsTy->getNumElements() >= MinLanes && DL.getTypeStoreSize(Elt) == DL.getTypeAllocSize(Elt))
      Ops.push_back(II);
  }
  MDNode *Likely = MDBuilder(F.getContext()).createLikelyBranchWeights();
  for (IntrinsicInst *II : Ops) {
    bool Gather = II->getIntrinsicID() == Intrinsic::masked_gather;
    // masked.gather(ptrs, mask, passthru), masked.scatter(value, ptrs, mask); the alignment is each element's.
    unsigned PtrsArg = Gather ? 0 : 1;
    Value *Ptrs = II->getArgOperand(PtrsArg);
    Value *Mask = II->getArgOperand(Gather ? 1 : 2);
    Align A = II->getParamAlign(PtrsArg).valueOrOne();
    auto *PtrsTy = cast<FixedVectorType>(Ptrs->getType());
    unsigned N = PtrsTy->getNumElements();
    Type *Elt = (Gather ? II->getType() : II->getArgOperand(0)->getType())->getScalarType();
    uint64_t Size = DL.getTypeAllocSize(Elt);
    IRBuilder<> B(II);
    Type *IntPtr = DL.getIntPtrType(PtrsTy->getElementType());
    // Lane 0 names the base; it must be on (an off lane's pointer may be anything). Every other lane that is on
    // must point Size bytes past its left neighbour's slot: lane I at base + I * Size.
    Value *First = B.CreateExtractElement(Ptrs, uint64_t(0));
    Value *Expected = B.CreateAdd(B.CreateVectorSplat(N, B.CreatePtrToInt(First, IntPtr)), [&] {
      SmallVector<Constant *, 16> Offsets;
      for (unsigned I = 0; I < N; ++I)
        Offsets.push_back(ConstantInt::get(IntPtr, I * Size));
      return ConstantVector::get(Offsets);
    }());
    Value *Same = B.CreateFreeze(B.CreateICmpEQ(B.CreatePtrToInt(Ptrs, Expected->getType()), Expected));
    // An unconditional thread loop's gather has a constant all-true mask: no lane to leave out, a plain access.
    auto *ConstMask = dyn_cast<Constant>(Mask);
    bool AllOn = ConstMask && ConstMask->isAllOnesValue();
    Value *Contiguous = AllOn ? B.CreateAndReduce(Same)
                              : B.CreateAnd(B.CreateAndReduce(B.CreateOr(Same, B.CreateNot(Mask))),
                                            B.CreateExtractElement(Mask, uint64_t(0)));
    Instruction *Then = nullptr, *Else = nullptr;
    SplitBlockAndInsertIfThenElse(Contiguous, II, &Then, &Else, Likely);
    B.SetInsertPoint(Then);
    // The same lanes touch the same bytes as the gather/scatter would, so faults and results are the same.
    Instruction *Vector;
    if (AllOn)
      Vector = Gather ? static_cast<Instruction *>(B.CreateAlignedLoad(II->getType(), First, A))
                      : B.CreateAlignedStore(II->getArgOperand(0), First, A);
    else
      Vector = Gather ? B.CreateMaskedLoad(II->getType(), First, A, Mask, II->getArgOperand(2))
                      : B.CreateMaskedStore(II->getArgOperand(0), First, A, Mask);
    Vector->copyMetadata(*II);
    II->moveBefore(Else->getIterator());
    if (Gather) {
      B.SetInsertPoint(Then->getParent()->getSingleSuccessor()->getFirstNonPHIIt());
      PHINode *Result = B.CreatePHI(II->getType(), 2);
      II->replaceAllUsesWith(Result);
      Result->addIncoming(Vector, Vector->getParent());
      Result->addIncoming(II, II->getParent());
    }
  }
  return Ops.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
