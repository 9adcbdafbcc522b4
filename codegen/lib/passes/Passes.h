// Private to codegen/lib: ptxforge's own LLVM passes, each in its own file, run by optimizeModule.
#pragma once

#include "llvm/IR/PassManager.h"

namespace ptxforge::codegen::passes {

/// PTX computes addresses as 64-bit integers, so lowered code reaches memory through `inttoptr`, which hides
/// from SCEV and alias analysis where an access points: loops over threads do not vectorize and loads are
/// not hoisted. This pass loads 64-bit kernel parameters as pointers (a pointer stays an integer for every
/// integer use through ptrtoint) and rewrites `inttoptr(V)`, where V is a pointer's integer plus an offset
/// (through add/sub/or-disjoint/phi/select), as `getelementptr i8, P, V - ptrtoint(P)`: the same address,
/// now based on P.
struct PointerProvenancePass : llvm::PassInfoMixin<PointerProvenancePass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &AM);
};

/// Thread loops vectorize with the thread's guard (`if (i < n)`) as a mask, so every vector load and store is
/// masked, and masked stores cost several times a plain one (Zen 4: vecadd ran at a third of the memory
/// bandwidth). Almost every vector iteration has all lanes on, or (the other side of a divergent branch) none:
/// this pass gives each masked load/store a branch to the plain instruction when its mask is all true and past
/// it when all false, keeping the masked one for the partial vectors. Runs last, after the vectorizers.
struct UnmaskFullVectorsPass : llvm::PassInfoMixin<UnmaskFullVectorsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &AM);
};

} // namespace ptxforge::codegen::passes
