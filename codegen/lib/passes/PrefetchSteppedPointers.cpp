// See Passes.h: gathers through stepped per-thread pointers prefetch the next step's lines.
//
// Before:
//   %next = add <4 x i64> %p, splat(%s); store %next, %slots       ; the pointer, stepped and stored back
//   %v = call @llvm.masked.gather(inttoptr %next, ...)
// After, ahead of the gather:
//   call @llvm.prefetch(gep i8 (extractelement %ptrs, 0), %s)
//   call @llvm.prefetch(gep i8 (extractelement %ptrs, 3), %s)
#include "Passes.h"

#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/PatternMatch.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {
/// The step S of a gather's pointer vector X = Y + splat(S) that is also stored back (a pointer the kernel's loop
/// advances), or null.
Value *stepOf(Value *Ptrs) {
  Value *X = Ptrs, *Y, *Step;
  match(Ptrs, m_IntToPtr(m_Value(X)));
  if (!match(X, m_Add(m_Value(Y), m_Value(Step))))
    return nullptr;
  Value *S = getSplatValue(Step);
  if (!S || !X->getType()->isVectorTy())
    return nullptr;
  for (User *U : X->users())
    if (auto *St = dyn_cast<StoreInst>(U); St && St->getValueOperand() == X)
      return S;
  return nullptr;
}
} // namespace

PreservedAnalyses ptxforge::codegen::passes::PrefetchSteppedPointersPass::run(Function &F, FunctionAnalysisManager &) {
  SmallVector<std::pair<IntrinsicInst *, Value *>, 8> Gathers;
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I); II && II->getIntrinsicID() == Intrinsic::masked_gather)
      if (Value *S = stepOf(II->getArgOperand(0)))
        Gathers.push_back({II, S});
  for (auto [II, S] : Gathers) {
    IRBuilder<> B(II);
    Value *Ptrs = II->getArgOperand(0);
    unsigned N = cast<FixedVectorType>(Ptrs->getType())->getNumElements();
    Value *Step = B.CreateSExtOrTrunc(S, B.getInt64Ty());
    for (unsigned Lane : {0u, N - 1}) {
      Value *P = B.CreateExtractElement(Ptrs, uint64_t(Lane));
      Value *Next = B.CreateGEP(B.getInt8Ty(), P, Step);
      // read, keep in all cache levels, data
      B.CreateIntrinsic(Intrinsic::prefetch, {Next->getType()}, {Next, B.getInt32(0), B.getInt32(3), B.getInt32(1)});
    }
  }
  return Gathers.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
