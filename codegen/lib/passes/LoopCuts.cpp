// See Passes.h: the loop cuts (LoopCuts.h) run as a pass over a thread function.
//
// Before (a barrier-free innermost loop after a marked barrier):
//   call void @ptxrt_bar_sync(...), !ptxforge.cut !{...}
//   br label %loop
// loop:
//   ... br i1 %more, label %loop, label %done
// After (each edge into the loop's header and out of it stops in a block whose branch is a marked cut edge, all
// stops of one target sharing its number; the region builder makes each target a region of its own):
//   br label %loop.stop
// loop.stop:  br label %loop.cut, !ptxforge.cut_edge !{i32 8, i32 0, i32 0}
// loop.cut:   br label %loop
// loop:       ... br i1 %more, label %loop.stop2, label %loop.stop3
// loop.stop2: br label %loop.cut, !ptxforge.cut_edge !{i32 8, i32 0, i32 0}
// loop.stop3: br label %loop.cut1, !ptxforge.cut_edge !{i32 8, i32 0, i32 1}
// (short bodies are unrolled first, so that a pass of the cut loop runs several iterations).
#include "Passes.h"

#include "../LoopCuts.h"
#include "../Markers.h"

using namespace llvm;
using namespace ptxforge::codegen;

PreservedAnalyses passes::LoopCutsPass::run(Function &F, FunctionAnalysisManager &) {
  return rewriteMarkedFunction(F, [&] { return detail::cutLoops(F, CutBudget); });
}
