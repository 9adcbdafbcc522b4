// See Passes.h: a vector built lane by lane from base + 0, base + 1, ... becomes one vector add.
#include "Passes.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

/// X + K where X | K is X + K: `or disjoint X, K` or `add X, K`; K = 0 for X itself.
bool offsetOf(Value *V, Value *&X, uint64_t &K) {
  const APInt *C;
  if (match(V, m_DisjointOr(m_Value(X), m_APInt(C))) || match(V, m_Add(m_Value(X), m_APInt(C)))) {
    K = C->getZExtValue();
    return true;
  }
  X = V;
  K = 0;
  return true;
}

/// Whether lane I's value is lane 0's plus I: both Base + (Index + I) with the same Base and Index (either operand
/// order), or Index + I itself.
bool isLaneStep(Value *Lane0, Value *LaneI, uint64_t I) {
  Value *A0, *B0, *AI, *BI;
  auto split = [](Value *V, Value *&A, Value *&B) { return match(V, m_Add(m_Value(A), m_Value(B))); };
  Value *X0, *XI;
  uint64_t K0, KI;
  if (split(Lane0, A0, B0) && split(LaneI, AI, BI)) {
    for (int Swap0 = 0; Swap0 < 2; ++Swap0, std::swap(A0, B0))
      for (int SwapI = 0; SwapI < 2; ++SwapI, std::swap(AI, BI))
        if (B0 == BI && offsetOf(A0, X0, K0) && offsetOf(AI, XI, KI) && X0 == XI && KI == K0 + I)
          return true;
  }
  return offsetOf(Lane0, X0, K0) && offsetOf(LaneI, XI, KI) && X0 == XI && KI == K0 + I;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::LaneSequencesPass::run(Function &F, FunctionAnalysisManager &) {
  SmallVector<InsertElementInst *, 8> Tops;
  for (Instruction &I : instructions(F))
    if (auto *IE = dyn_cast<InsertElementInst>(&I))
      if (!(IE->hasOneUse() && isa<InsertElementInst>(*IE->user_begin())))
        Tops.push_back(IE); // the last insert of a chain
  bool Changed = false;
  for (InsertElementInst *Top : Tops) {
    auto *VT = dyn_cast<FixedVectorType>(Top->getType());
    if (!VT || !VT->getElementType()->isIntegerTy() || VT->getNumElements() < 4)
      continue;
    unsigned N = VT->getNumElements();
    SmallVector<Value *, 16> Lanes(N, nullptr);
    Value *V = Top;
    bool Ok = true;
    while (auto *IE = dyn_cast<InsertElementInst>(V)) {
      auto *Idx = dyn_cast<ConstantInt>(IE->getOperand(2));
      if (!Idx || Idx->getZExtValue() >= N || Lanes[Idx->getZExtValue()] || (IE != Top && !IE->hasOneUse())) {
        Ok = false;
        break;
      }
      Lanes[Idx->getZExtValue()] = IE->getOperand(1);
      V = IE->getOperand(0);
    }
    if (!Ok || !isa<PoisonValue>(V) || is_contained(Lanes, nullptr))
      continue;
    for (unsigned I = 1; I < N && Ok; ++I)
      Ok = isLaneStep(Lanes[0], Lanes[I], I);
    if (!Ok)
      continue;
    IRBuilder<> B(Top);
    SmallVector<Constant *, 16> Steps;
    for (unsigned I = 0; I < N; ++I)
      Steps.push_back(ConstantInt::get(VT->getElementType(), I));
    Top->replaceAllUsesWith(B.CreateAdd(B.CreateVectorSplat(N, Lanes[0]), ConstantVector::get(Steps)));
    RecursivelyDeleteTriviallyDeadInstructions(Top); // the chain and the scalar steps only it used
    Changed = true;
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
