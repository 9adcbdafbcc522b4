// See Passes.h: functions over the instruction budget are compiled without optimization.
//
// Before (budget=2):
//   define void @big() alwaysinline { ...3 instructions... }
// After:
//   define void @big() noinline optnone { ... }     ; and a missed-optimization remark "ptxforge-budget"
//
// One called only through always-inline would be inlined into its caller, which the budget would then not cover:
// it is kept out of line instead.
#include "Passes.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Module.h"

#include <string>

using namespace llvm;

namespace {
void leaveUnoptimized(Function &F) {
  F.removeFnAttr(Attribute::AlwaysInline);
  F.addFnAttr(Attribute::NoInline);
  F.addFnAttr(Attribute::OptimizeNone);
}
} // namespace

PreservedAnalyses ptxforge::codegen::passes::LimitOptimizationPass::run(Module &M, ModuleAnalysisManager &) {
  bool Changed = false;
  for (Function &F : M) {
    if (F.isDeclaration() || F.hasOptNone())
      continue;
    if (isReplayOnly(F)) {
      leaveUnoptimized(F);
      Changed = true;
      continue;
    }
    if (!Budget || F.getInstructionCount() <= Budget)
      continue;
    leaveUnoptimized(F);
    OptimizationRemarkMissed R("ptxforge-budget", "FunctionTooLarge", &F);
    R << F.getName() << " is compiled without optimization: " << std::to_string(F.getInstructionCount())
      << " instructions, more than the budget of " << std::to_string(Budget);
    M.getContext().diagnose(R);
    Changed = true;
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
