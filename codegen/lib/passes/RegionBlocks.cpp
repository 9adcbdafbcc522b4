// See Passes.h: the block functions of region kernels made as a pass over lowered thread functions: a copy of
// the thread function put through the warp rendezvous (ptxforge-warp-rendezvous), the loop cuts
// (ptxforge-loop-cuts) and the region builder, each reading the marks the one before left (Markers.h).
//
// Before (a thread function, its barrier a call the lowering marked as a cut, Markers.h):
//   define void @__ptx_kernel_k(ptr %ctx, ptr %params) {
//     store ... ; region 0
//     call void @ptxrt_barrier(ptr %ctx, i32 0), !ptxforge.cut !{...}
//     load ...  ; region 1
//   }
// After: the thread function unchanged, and beside it the block function that runs every thread of a block,
// region by region, each region a loop over the threads (BarrierRegions.cpp):
//   define void @__ptx_block_k(ptr %tmpl, ptr %params) {
//     ... region0 loop over threads ... dispatch ... region1 loop over threads ... done: ret void
//   }
#include "Passes.h"

#include "../BarrierRegions.h"
#include "../Markers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/InstIterator.h"

using namespace llvm;
using namespace ptxforge;
using namespace ptxforge::codegen;

namespace {
constexpr StringLiteral ThreadPrefix = "__ptx_kernel_", BlockPrefix = "__ptx_block_";
} // namespace

void passes::reportRegionSplitFailure(Function &Thread, Error E) {
  std::string Why = toString(std::move(E));
  OptimizationRemarkMissed R("ptxforge-regions", "RegionSplitFailed", &Thread);
  R << "kernel runs on fibers: " << Why;
  Thread.getContext().diagnose(R);
}

PreservedAnalyses passes::rewriteMarkedFunction(Function &F, function_ref<Expected<bool>()> Rewrite) {
  if (F.isDeclaration() || !codegen::detail::hasRegionMarks(F))
    return PreservedAnalyses::all();
  Expected<bool> Changed = Rewrite();
  if (!Changed) {
    reportRegionSplitFailure(F, Changed.takeError());
    return PreservedAnalyses::all();
  }
  return *Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

Error passes::overRegionBudget(unsigned Cuts, unsigned Budget) {
  return createStringError(std::errc::result_out_of_range,
                           "%u barriers and collectives, more than the region budget of %u", Cuts, Budget);
}

PreservedAnalyses passes::RegionBlocksPass::run(Module &M, ModuleAnalysisManager &) {
  StructType *ThreadCtxTy = StructType::getTypeByName(M.getContext(), "ThreadContext");
  if (!ThreadCtxTy)
    return PreservedAnalyses::all();
  std::vector<std::pair<Function *, unsigned>> Threads;
  for (Function &F : M)
    if (!F.isDeclaration() && F.getName().starts_with(ThreadPrefix) &&
        !M.getFunction((BlockPrefix + F.getName().drop_front(ThreadPrefix.size())).str()))
      if (unsigned Cuts = codegen::detail::markedCuts(F))
        Threads.push_back({&F, Cuts});
  if (Threads.empty())
    return PreservedAnalyses::all();
  // The builder reads no PTX: what it needs of the kernel, the lowering left in the IR (Markers.h).
  ptx::Module NoPtx;
  codegen::detail::ModuleLowering ML(NoPtx, nullptr, M.getContext(), M);
  ML.ThreadCtxTy = ThreadCtxTy;
  ML.LoopCuts = Options.LoopCuts;
  ML.RegionCutBudget = Options.CutBudget;
  for (auto [Thread, Cuts] : Threads) {
    if (Cuts > Options.CutBudget) {
      reportRegionSplitFailure(*Thread, overRegionBudget(Cuts, Options.CutBudget));
      continue;
    }
    if (auto Block = codegen::detail::emitRegionBlockFunction(ML, Thread, Options.Resume); !Block)
      reportRegionSplitFailure(*Thread, Block.takeError());
  }
  return PreservedAnalyses::none();
}
