// See LoopCuts.h.
#include "LoopCuts.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

#include <cstdlib>
#include <string_view>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

namespace {

/// A pass of a region loop costs a dispatcher round (a scan of the threads' states); a body much larger than
/// that gains little more from the cut and grows every region copy.
constexpr unsigned MaxLoopInstructions = 4000;

/// Loops whose iterations only compute into the thread's registers: reductions and dot products, which the
/// cut lets LLVM vectorize across threads. A loop that writes memory (a histogram's read-modify-writes) would
/// run scalar anyway, now paying a dispatcher round per iteration.
bool worthCutting(const llvm::Loop &L, const llvm::DenseSet<llvm::Instruction *> &CutExits,
                  const llvm::DenseSet<llvm::BasicBlock *> &RegionEntries) {
  unsigned Size = 0;
  for (llvm::BasicBlock *BB : L.blocks()) {
    if (RegionEntries.count(BB) || CutExits.count(BB->getTerminator()))
      return false;
    for (llvm::Instruction &I : *BB) {
      if (++Size > MaxLoopInstructions)
        return false;
      if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I)) {
        if (!S->isSimple() || !llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(S->getPointerOperand())))
          return false;
      } else if (auto *CI = llvm::dyn_cast<llvm::CallBase>(&I)) {
        if (!llvm::isa<llvm::IntrinsicInst>(CI) || CI->mayWriteToMemory() || CI->mayThrow())
          return false;
      } else if (I.mayWriteToMemory() || I.isAtomic() || llvm::isa<llvm::LoadInst>(I) &&
                                                           !llvm::cast<llvm::LoadInst>(I).isSimple()) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

std::vector<LoopCutTarget>
ptxforge::codegen::detail::cutInnermostLoops(llvm::Function &F, const llvm::DenseSet<llvm::Instruction *> &CutExits,
                                             const llvm::DenseSet<llvm::BasicBlock *> &RegionEntries) {
  // PTXFORGE_LOOP_CUTS=0 turns them off, to measure what they bring (or to rule them out).
  if (const char *Env = std::getenv("PTXFORGE_LOOP_CUTS"); Env && std::string_view(Env) == "0")
    return {};
  llvm::DominatorTree DT(F);
  llvm::LoopInfo LI(DT);
  // All edges first: splitting them changes the CFG the analyses describe.
  llvm::MapVector<llvm::BasicBlock *, std::vector<llvm::BasicBlock *>> Edges; // target -> sources
  for (llvm::Loop *L : LI.getLoopsInPreorder()) {
    if (!L->isInnermost() || !worthCutting(*L, CutExits, RegionEntries))
      continue;
    llvm::BasicBlock *H = L->getHeader();
    for (llvm::BasicBlock *P : llvm::predecessors(H))
      Edges[H].push_back(P);
    llvm::SmallVector<llvm::Loop::Edge, 4> Exits;
    L->getExitEdges(Exits);
    for (auto &[From, To] : Exits)
      Edges[const_cast<llvm::BasicBlock *>(To)].push_back(const_cast<llvm::BasicBlock *>(From));
  }
  std::vector<LoopCutTarget> Targets;
  llvm::LLVMContext &C = F.getContext();
  for (auto &[To, Froms] : Edges) {
    // A fresh entry block: the region builder puts per-region code (recomputed registers) at region entries,
    // which To's other predecessors need not run.
    llvm::BasicBlock *Entry = llvm::BasicBlock::Create(C, "loop.cut", &F, To);
    llvm::BranchInst::Create(To, Entry);
    LoopCutTarget T{Entry, {}};
    llvm::SmallPtrSet<llvm::BasicBlock *, 4> Seen;
    for (llvm::BasicBlock *From : Froms) {
      if (!Seen.insert(From).second)
        continue;
      llvm::BasicBlock *Stop = llvm::BasicBlock::Create(C, "loop.stop", &F, To);
      llvm::BranchInst::Create(Entry, Stop);
      From->getTerminator()->replaceSuccessorWith(To, Stop);
      T.Stops.push_back(Stop);
    }
    Targets.push_back(std::move(T));
  }
  return Targets;
}

llvm::GlobalVariable *ptxforge::codegen::detail::emitCutTable(llvm::Module &M, llvm::Function &F,
                                                              llvm::ArrayRef<RegionCut> Cuts) {
  std::vector<uint32_t> Table;
  for (const RegionCut &Cut : Cuts) {
    Table.push_back(Cut.Kind);
    Table.push_back(Cut.Arg);
  }
  llvm::Constant *Init = llvm::ConstantDataArray::get(M.getContext(), Table);
  return new llvm::GlobalVariable(M, Init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, Init,
                                  F.getName() + ".cuts");
}
