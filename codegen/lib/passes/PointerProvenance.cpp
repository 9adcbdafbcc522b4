// See Passes.h: give integer-computed addresses a pointer base.
//
// Before:
//   %a = load i64, ptr %params                      ; a pointer parameter
//   %p = inttoptr i64 (add %a, %off) to ptr addrspace(1)
// After:
//   %a.ptr = load ptr addrspace(1), ptr %params
//   %p = getelementptr i8, ptr addrspace(1) %a.ptr, i64 (add %a, %off) - ptrtoint(%a.ptr)
#include "Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace {

/// The kernel parameter buffer: an argument the lowering marks noalias + readonly.
bool isParamBuffer(const Value *V) {
  const auto *A = dyn_cast<Argument>(V);
  return A && A->getType()->isPointerTy() && A->hasNoAliasAttr() && A->onlyReadsMemory();
}

/// Loads of 64-bit kernel parameters become pointer loads (+ ptrtoint for the integer uses).
bool loadParamsAsPointers(Function &F) {
  SmallVector<LoadInst *, 16> Loads;
  for (Instruction &I : instructions(F))
    if (auto *L = dyn_cast<LoadInst>(&I))
      if (L->getType()->isIntegerTy(64) && L->isSimple() && isParamBuffer(getUnderlyingObject(L->getPointerOperand())))
        Loads.push_back(L);
  for (LoadInst *L : Loads) {
    IRBuilder<> B(L);
    LoadInst *P = B.CreateLoad(B.getPtrTy(ptxforge::codegen::passes::PtxAddressSpace), L->getPointerOperand(),
                               L->getName() + ".ptr");
    P->setAlignment(L->getAlign());
    P->copyMetadata(*L);
    Value *I = B.CreatePtrToInt(P, L->getType());
    L->replaceAllUsesWith(I);
    L->eraseFromParent();
  }
  return !Loads.empty();
}

using ptxforge::codegen::passes::PtxAddressSpace;

bool isBaseSpace(const Type *T) {
  unsigned AS = T->getPointerAddressSpace();
  return AS == 0 || AS == PtxAddressSpace;
}

/// Replaces Old (a PTX address) with New, the same address in another address space: memory accesses and
/// address arithmetic move to New's space, anything else gets New cast back.
void replaceAcrossSpaces(Instruction *Old, Value *New) {
  for (Use &U : make_early_inc_range(Old->uses())) {
    auto *User = cast<Instruction>(U.getUser());
    bool Access = isa<LoadInst>(User) || isa<AtomicRMWInst>(User) || isa<AtomicCmpXchgInst>(User)
                      ? U.getOperandNo() == 0
                      : isa<StoreInst>(User) && U.getOperandNo() == StoreInst::getPointerOperandIndex();
    if (Access) {
      U.set(New);
      continue;
    }
    if (isa<AddrSpaceCastInst>(User) && User->getType() == New->getType()) { // a runtime helper's argument
      User->replaceAllUsesWith(New);
      User->eraseFromParent();
      continue;
    }
    if (auto *G = dyn_cast<GetElementPtrInst>(User); G && U.getOperandNo() == 0) {
      IRBuilder<> B(G);
      SmallVector<Value *, 4> Indices(G->indices());
      Value *Moved = B.CreateGEP(G->getSourceElementType(), New, Indices, G->getName(), G->getNoWrapFlags());
      replaceAcrossSpaces(G, Moved);
      G->eraseFromParent();
      continue;
    }
    IRBuilder<> B(User);
    if (auto *Phi = dyn_cast<PHINode>(User))
      B.SetInsertPoint(Phi->getIncomingBlock(U)->getTerminator());
    U.set(B.CreateAddrSpaceCast(New, Old->getType()));
  }
}

/// Finds the one pointer an integer address is based on. Conflict: two different bases (or one added twice).
class BaseFinder {
public:
  /// A sentinel, never dereferenced.
  static inline char ConflictTag;
  static inline Value *const Conflict = reinterpret_cast<Value *>(&ConflictTag);

  /// Null: no pointer in V; Conflict: no single base; otherwise the base pointer.
  Value *find(Value *V) { return walk(V, 0); }

private:
  DenseMap<Value *, Value *> Memo;

  static Value *join(Value *A, Value *B) {
    if (!A)
      return B;
    if (!B || A == B)
      return A;
    return Conflict;
  }
  /// Both operands add up: a base may come from at most one of them.
  static Value *sum(Value *A, Value *B) {
    if (A == Conflict || B == Conflict || (A && B))
      return Conflict;
    return A ? A : B;
  }

  Value *walk(Value *V, unsigned Depth) {
    if (Depth > 16)
      return Conflict;
    if (auto *P2I = dyn_cast<PtrToIntOperator>(V))
      return isBaseSpace(P2I->getPointerOperand()->getType()) ? P2I->getPointerOperand() : Conflict;
    auto *I = dyn_cast<Instruction>(V);
    if (!I)
      return nullptr;
    if (auto It = Memo.find(I); It != Memo.end())
      return It->second;
    Memo[I] = nullptr; // a cycle through a phi adds nothing new
    Value *R = nullptr;
    switch (I->getOpcode()) {
    case Instruction::Add:
      R = sum(walk(I->getOperand(0), Depth + 1), walk(I->getOperand(1), Depth + 1));
      break;
    case Instruction::Or:
      R = cast<PossiblyDisjointInst>(I)->isDisjoint()
              ? sum(walk(I->getOperand(0), Depth + 1), walk(I->getOperand(1), Depth + 1))
              : (walk(I->getOperand(0), Depth + 1) || walk(I->getOperand(1), Depth + 1) ? Conflict : nullptr);
      break;
    case Instruction::Sub:
      R = walk(I->getOperand(1), Depth + 1) ? Conflict : walk(I->getOperand(0), Depth + 1);
      break;
    case Instruction::PHI:
      for (Value *In : cast<PHINode>(I)->incoming_values())
        R = join(R, walk(In, Depth + 1));
      break;
    case Instruction::Select:
      R = join(walk(I->getOperand(1), Depth + 1), walk(I->getOperand(2), Depth + 1));
      break;
    default:
      R = nullptr; // mul, shifts, loads...: an offset, or a pointer we cannot see
    }
    Memo[I] = R;
    return R;
  }
};

bool rebaseIntToPtr(Function &F, DominatorTree &DT) {
  SmallVector<IntToPtrInst *, 32> Casts;
  for (Instruction &I : instructions(F))
    if (auto *C = dyn_cast<IntToPtrInst>(&I))
      if (isBaseSpace(C->getType()) && C->getSrcTy()->isIntegerTy(64))
        Casts.push_back(C);
  BaseFinder Finder;
  bool Changed = false;
  for (IntToPtrInst *C : Casts) {
    Value *Base = Finder.find(C->getOperand(0));
    if (!Base || Base == BaseFinder::Conflict)
      continue;
    if (auto *BI = dyn_cast<Instruction>(Base); BI && !DT.dominates(BI, C))
      continue;
    unsigned BaseSpace = Base->getType()->getPointerAddressSpace();
    // A PTX address (may be 0) stays one; an address space 0 cast (ptxforge's own) keeps its space.
    if (BaseSpace != C->getType()->getPointerAddressSpace() && BaseSpace == PtxAddressSpace)
      continue;
    IRBuilder<> B(C);
    Value *Offset = B.CreateSub(C->getOperand(0), B.CreatePtrToInt(Base, B.getInt64Ty()));
    // A parameter plus an offset that wraps past either end of the address space faults on the GPU, and no
    // kernel parameter is a value LLVM knows, so nusw costs nothing in meaning; without it the vectorizer
    // can no longer assume that consecutive accesses do not wrap (it did from null being undefined in address
    // space 0) and checks every thread loop's pointers at run time.
    GEPNoWrapFlags NW = BaseSpace == PtxAddressSpace ? GEPNoWrapFlags::noUnsignedSignedWrap() : GEPNoWrapFlags::none();
    Value *GEP = B.CreateGEP(B.getInt8Ty(), Base, Offset, C->getName(), NW);
    if (GEP->getType() == C->getType())
      C->replaceAllUsesWith(GEP);
    else
      replaceAcrossSpaces(C, GEP);
    C->eraseFromParent();
    Changed = true;
  }
  return Changed;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::PointerProvenancePass::run(Function &F, FunctionAnalysisManager &AM) {
  bool Changed = loadParamsAsPointers(F);
  Changed |= rebaseIntToPtr(F, AM.getResult<DominatorTreeAnalysis>(F));
  if (!Changed)
    return PreservedAnalyses::all();
  PreservedAnalyses PA;
  PA.preserveSet<CFGAnalyses>();
  return PA;
}
