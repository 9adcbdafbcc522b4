// See Passes.h: a narrow recurrence whose wrap check LLVM 22's loop vectorizer would drop is hidden from SCEV.
//
// Before (d[t] = s[2t - (t & 3)], t the loop's counter):
//   %low = and i32 %t, 3          ; SCEV: (zext i2 {0,+,1} to i32), an i2 recurrence that wraps every 4 trips
//   %i = sub i32 %twice, %low     ; 2t - t = {0,+,1} if the i2 recurrence did not wrap: "consecutive"
// After:
//   %low = and i32 %t, 3
//   %low.fr = freeze i32 %low     ; opaque to SCEV: s[%i] is a gather, and no wrap check is needed
//   %i = sub i32 %twice, %low.fr
#include "Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

using namespace llvm;

namespace {

/// The integer width of AR's values.
unsigned widthOf(const SCEVAddRecExpr *AR, ScalarEvolution &SE) { return SE.getTypeSizeInBits(AR->getType()); }

/// The recurrences of L whose wrap checks the loop vectorizer would drop: it turns each access's address into a
/// recurrence under wrap predicates (convertSCEVToAddRecWithPredicates, as LoopAccessAnalysis and the
/// vectorizer's legality do), and keeps a predicate out of its checks when another one implies it. LLVM 22's
/// SCEVWrapPredicate::implies takes no-wrap of a wider recurrence to imply no-wrap of a narrower one with no
/// greater start and step (llvm/llvm-project#191382), which is false: {0,+,4}<i32> not wrapping says nothing
/// about {0,+,1}<i2>, which wraps after 4 trips. The same call answers here, so on an LLVM that fixed it
/// (#191498) nothing is found.
SmallSetVector<const SCEVAddRecExpr *, 4> droppedWrapChecks(Loop &L, ScalarEvolution &SE) {
  SmallSetVector<const SCEVWrapPredicate *, 8> Wraps; // each access of a recurrence asks for its predicate again
  for (BasicBlock *BB : L.blocks())
    for (Instruction &I : *BB) {
      Value *Ptr = getLoadStorePointerOperand(&I);
      if (!Ptr)
        continue;
      SmallVector<const SCEVPredicate *, 4> Preds;
      SE.convertSCEVToAddRecWithPredicates(SE.getSCEV(Ptr), &L, Preds);
      for (const SCEVPredicate *P : Preds)
        if (const auto *W = dyn_cast<SCEVWrapPredicate>(P))
          Wraps.insert(W);
    }
  SmallSetVector<const SCEVAddRecExpr *, 4> Dropped;
  for (const SCEVWrapPredicate *Narrow : Wraps)
    for (const SCEVWrapPredicate *Wide : Wraps)
      if (widthOf(Wide->getExpr(), SE) > widthOf(Narrow->getExpr(), SE) && Wide->implies(Narrow, SE)) {
        Dropped.insert(Narrow->getExpr());
        break;
      }
  return Dropped;
}

/// Freezes the values of L where AR enters SCEV's view of them (an instruction whose SCEV holds AR while none of
/// its operands' does: `and %t, 3` for (zext i2 {0,+,1})): a frozen value is opaque to SCEV, so no address built
/// on it is taken for a recurrence under AR's wrap predicate. Freezing a value that is not poison changes
/// nothing else. Returns whether it froze any.
bool freezeSources(Loop &L, const SCEVAddRecExpr *AR, ScalarEvolution &SE) {
  auto holdsAR = [&](Value *V) {
    return SE.isSCEVable(V->getType()) && SCEVExprContains(SE.getSCEV(V), [AR](const SCEV *S) { return S == AR; });
  };
  auto isFrozen = [](Instruction &I) { return I.hasOneUse() && isa<FreezeInst>(*I.user_begin()); };
  std::vector<Instruction *> Sources;
  for (BasicBlock *BB : L.blocks())
    for (Instruction &I : *BB)
      if (I.getType()->isIntegerTy() && !I.isTerminator() && !isFrozen(I) && holdsAR(&I) &&
          llvm::none_of(I.operands(), [&](Value *Op) {
            auto *OpI = dyn_cast<Instruction>(Op);
            return OpI && L.contains(OpI) && holdsAR(OpI);
          }))
        Sources.push_back(&I);
  for (Instruction *I : Sources) {
    auto Where = isa<PHINode>(I) ? I->getParent()->getFirstInsertionPt() : std::next(I->getIterator());
    SE.forgetValue(I); // and its users, found while they still use I
    auto *Frozen = new FreezeInst(I, I->getName() + ".fr", Where);
    I->replaceUsesWithIf(Frozen, [Frozen](Use &U) { return U.getUser() != Frozen; });
  }
  return !Sources.empty();
}

/// Hides the recurrences of innermost loop L whose wrap checks would be dropped, until none is left; a loop
/// where that does not converge (a recurrence no value of the loop holds) is left unvectorized.
bool guardLoop(Loop &L, ScalarEvolution &SE) {
  constexpr unsigned MaxRounds = 4; // each round hides at least one recurrence; loops have few
  bool Changed = false;
  for (unsigned Round = 0; Round < MaxRounds; ++Round) {
    SmallSetVector<const SCEVAddRecExpr *, 4> Dropped = droppedWrapChecks(L, SE);
    if (Dropped.empty())
      return Changed;
    bool Froze = false;
    for (const SCEVAddRecExpr *AR : Dropped)
      Froze |= freezeSources(L, AR, SE);
    Changed = true;
    if (!Froze)
      break;
    SE.forgetLoop(&L);
  }
  addStringMetadataToLoop(&L, "llvm.loop.vectorize.enable", 0);
  return true;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::HideNarrowRecurrencesPass::run(Function &F, FunctionAnalysisManager &AM) {
  LoopInfo &LI = AM.getResult<LoopAnalysis>(F);
  ScalarEvolution &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
  bool Changed = false;
  for (Loop *L : LI.getLoopsInPreorder())
    if (L->isInnermost() && !(hasVectorizeTransformation(L) & TM_Disable))
      Changed |= guardLoop(*L, SE);
  if (!Changed)
    return PreservedAnalyses::all();
  PreservedAnalyses PA;
  PA.preserveSet<CFGAnalyses>();
  return PA;
}
