// See Passes.h: a gather or scatter whose lanes turn out to address consecutive elements runs as a vector load or
// store instead.
//
// Before:
//   %v = call <4 x float> @llvm.masked.gather(<4 x ptr> %p, <4 x i1> %m, ...)
// After:
//   %first = extractelement <4 x ptr> %p, i64 0
//   br (every lane on in %m points at %first + lane * 4, and lane 0 is on), %vector, %gather
//   vector: %a = call @llvm.masked.load(ptr %first, <4 x i1> %m, ...)
//   gather: %b = call @llvm.masked.gather(<4 x ptr> %p, <4 x i1> %m, ...)
//   %v = phi [ %a, %vector ], [ %b, %gather ]
#include "Passes.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <optional>

using namespace llvm;

namespace {

/// Gathers and scatters of at least this many lanes are worth the test (below it a gather is a few loads).
constexpr unsigned MinLanes = 4;

/// A gather or scatter this pass rewrites: masked.gather(ptrs, mask, passthru) or masked.scatter(value, ptrs,
/// mask), N lanes of Size-byte elements; the alignment is each element's.
struct Access {
  IntrinsicInst *II;
  bool Gather;
  Value *Ptrs, *Mask;
  Align A;
  unsigned N;
  uint64_t Size;
};

std::optional<Access> accessOf(Instruction &I, const DataLayout &DL) {
  auto *II = dyn_cast<IntrinsicInst>(&I);
  if (!II || (II->getIntrinsicID() != Intrinsic::masked_gather && II->getIntrinsicID() != Intrinsic::masked_scatter))
    return std::nullopt;
  bool Gather = II->getIntrinsicID() == Intrinsic::masked_gather;
  unsigned PtrsArg = Gather ? 0 : 1;
  auto *PtrsTy = dyn_cast<FixedVectorType>(II->getArgOperand(PtrsArg)->getType());
  Type *Elt = (Gather ? II->getType() : II->getArgOperand(0)->getType())->getScalarType();
  // Elements of whole bytes only: a vector of i1 packs bits, where the gather reads a byte per lane.
  if (!PtrsTy || PtrsTy->getNumElements() < MinLanes || DL.getTypeSizeInBits(Elt) % 8 ||
      DL.getTypeStoreSize(Elt) != DL.getTypeAllocSize(Elt))
    return std::nullopt;
  return Access{II,
                Gather,
                II->getArgOperand(PtrsArg),
                II->getArgOperand(Gather ? 1 : 2),
                II->getParamAlign(PtrsArg).valueOrOne(),
                PtrsTy->getNumElements(),
                DL.getTypeAllocSize(Elt)};
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::ContiguousGathersPass::run(Function &F, FunctionAnalysisManager &) {
  const DataLayout &DL = F.getDataLayout();
  SmallVector<Access, 16> Ops;
  for (Instruction &I : instructions(F))
    if (std::optional<Access> Op = accessOf(I, DL))
      Ops.push_back(*Op);
  MDNode *Likely = MDBuilder(F.getContext()).createLikelyBranchWeights();
  for (Access &Op : Ops) {
    // Read again: an earlier rewrite may have replaced an operand (a mask that was another gather's result).
    Op = *accessOf(*Op.II, DL);
    IntrinsicInst *II = Op.II;
    bool Gather = Op.Gather;
    Value *Ptrs = Op.Ptrs, *Mask = Op.Mask;
    Align A = Op.A;
    unsigned N = Op.N;
    uint64_t Size = Op.Size;
    IRBuilder<> B(II);
    Type *IntPtr = DL.getIntPtrType(Ptrs->getType()->getScalarType());
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
