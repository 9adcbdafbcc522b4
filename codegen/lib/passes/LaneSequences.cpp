// See Passes.h: a vector built lane by lane from base + 0, base + 1, ... becomes one vector add.
//
// Before:
//   %t1 = add i32 %tid, 1 ... %v0 = insertelement poison, %tid, 0 ... %v3 = insertelement %v2, %t3, 3
// After:
//   %v3 = add <4 x i32> splat(%tid), <i32 0, i32 1, i32 2, i32 3>
#include "Passes.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

/// V as X + K: `or disjoint X, K` or `add X, K` with a constant K; V itself with K = 0 otherwise.
std::pair<Value *, uint64_t> offsetOf(Value *V) {
  Value *X;
  const APInt *C;
  if (match(V, m_DisjointOr(m_Value(X), m_APInt(C))) || match(V, m_Add(m_Value(X), m_APInt(C))))
    return {X, C->getZExtValue()};
  return {V, 0};
}

/// Whether B is A + I, both being X + K for one X.
bool steps(Value *A, Value *B, uint64_t I) {
  auto [XA, KA] = offsetOf(A);
  auto [XB, KB] = offsetOf(B);
  return XA == XB && KB == KA + I;
}

/// Whether lane I's value is lane 0's plus I: both Base + (Index + I) with the same Base and Index (either operand
/// order), or Index + I itself.
bool isLaneStep(Value *Lane0, Value *LaneI, uint64_t I) {
  Value *A0, *B0, *AI, *BI;
  if (match(Lane0, m_Add(m_Value(A0), m_Value(B0))) && match(LaneI, m_Add(m_Value(AI), m_Value(BI))))
    for (int Swap0 = 0; Swap0 < 2; ++Swap0, std::swap(A0, B0))
      for (int SwapI = 0; SwapI < 2; ++SwapI, std::swap(AI, BI))
        if (B0 == BI && steps(A0, AI, I))
          return true;
  return steps(Lane0, LaneI, I);
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
