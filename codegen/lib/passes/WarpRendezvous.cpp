// See Passes.h: the warp rendezvous (WarpRendezvous.h) run as a pass over a thread function.
//
// Before (rendezvous calls the lowering marked with the operands the rendezvous reads, Markers.h):
//   call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut !{...}
//   %r = call i32 @ptxrt_shfl(ptr %0, i32 1, i32 %v, i32 16, i32 31, i32 -1, ptr %p), !ptxforge.cut !{...}
//   use %r
// After (each call a cut edge with its {kind, arg}; a collective's inputs deposited in marked slots before its
// edge, its results read after it):
//   br label %after.barrier, !ptxforge.cut_edge !{i32 1, i32 0, i32 0}
// after.barrier:
//   store i64 %v.wide, ptr %warp.value ... store i32 -1, ptr %warp.mask
//   br label %after.collective, !ptxforge.cut_edge !{i32 2, i32 1, i32 0}
// after.collective:
//   %r = load i32, ptr %warp.out ; store (load ptr %warp.pred), ptr %p
#include "Passes.h"

#include "../WarpRendezvous.h"

#include "llvm/IR/DerivedTypes.h"

using namespace llvm;
using namespace ptxforge::codegen;

PreservedAnalyses passes::WarpRendezvousPass::run(Function &F, FunctionAnalysisManager &) {
  StructType *ThreadCtxTy = StructType::getTypeByName(F.getContext(), "ThreadContext");
  if (!ThreadCtxTy)
    return PreservedAnalyses::all();
  return rewriteMarkedFunction(F, [&] { return detail::cutAtRendezvous(F, ThreadCtxTy); });
}
