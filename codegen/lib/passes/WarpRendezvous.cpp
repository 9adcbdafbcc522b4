// See Passes.h: the warp rendezvous (WarpRendezvous.h) run as a pass over a thread function.
//
// Before (a collective the lowering marked with the operands the rendezvous reads, Markers.h):
//   %r = call i32 @ptxrt_shfl_sync(ptr %0, i32 1, i32 %v, i32 16, i32 31, i32 -1, ptr %p), !ptxforge.cut !{...}
//   use %r
// After (the inputs deposited in marked slots, a cut edge with the collective's {kind, arg}, the results read):
//   store i64 %v.wide, ptr %warp.value ... store i32 -1, ptr %warp.mask
//   br label %after.collective, !ptxforge.cut_edge !{i32 2, i32 1, i32 0}
// after.collective:
//   %r = load i32, ptr %warp.out ; store (load ptr %warp.pred), ptr %p
#include "Passes.h"

#include "../Markers.h"
#include "../WarpRendezvous.h"

#include "llvm/IR/DerivedTypes.h"

using namespace llvm;
using namespace ptxforge::codegen;

PreservedAnalyses passes::WarpRendezvousPass::run(Function &F, FunctionAnalysisManager &) {
  StructType *ThreadCtxTy = StructType::getTypeByName(F.getContext(), "ThreadContext");
  if (!ThreadCtxTy || F.isDeclaration() || !detail::hasRegionMarks(F))
    return PreservedAnalyses::all();
  Expected<bool> Changed = detail::cutAtRendezvous(F, ThreadCtxTy);
  if (!Changed) {
    reportRegionSplitFailure(F, Changed.takeError());
    return PreservedAnalyses::all();
  }
  return *Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
