// See Passes.h: the marked loops over threads get their vector width.
//
// Before (lanes=16):
//   br i1 %last, label %exit, label %x, !llvm.loop !0
//   !0 = distinct !{!0, !1}
//   !1 = !{!"ptxforge.thread.loop"}
// After:
//   !0 = distinct !{!0, !1, !2, !3}
//   !2 = !{!"llvm.loop.vectorize.width", i32 16}
//   !3 = !{!"llvm.loop.interleave.count", i32 1}
//
// Loops over threads run 16 lanes of 32-bit values per AVX-512 vector. LLVM's cost model picks 8 lanes on some
// AVX-512 hosts (Sapphire Rapids) even with 512-bit vectors preferred: measured there, 16 lanes ran nbody 1.8x,
// black-scholes 1.5x and sgemm 1.2x faster. One vector per iteration (interleave count 1): a thread loop's trip
// count is a row of the block, known only at launch, and every row that is a multiple of the width then runs in
// vector code. With two vectors per iteration a row of 16 threads (sgemm) never entered the vector loop and ran
// in the scalar remainder, which LLVM's epilogue vectorization makes 16 lanes wide only under its process-global
// -epilogue-vectorization-force-VF (a library must not set it). The lowering marks the thread loops (ThreadLoop.h).
#include "Passes.h"

#include "../ThreadLoop.h"

using namespace llvm;

PreservedAnalyses ptxforge::codegen::passes::WidenThreadLoopsPass::run(Function &F, FunctionAnalysisManager &) {
  if (!Lanes)
    return PreservedAnalyses::all();
  LLVMContext &C = F.getContext();
  bool Changed = false;
  for (BasicBlock &BB : F) {
    Instruction *Term = BB.getTerminator();
    MDNode *Id = Term ? Term->getMetadata(LLVMContext::MD_loop) : nullptr;
    if (!Id)
      continue;
    bool Marked = false;
    SmallVector<Metadata *, 4> Props;
    for (unsigned K = 1; K < Id->getNumOperands(); ++K) {
      auto *P = dyn_cast<MDNode>(Id->getOperand(K));
      auto *Name = P && P->getNumOperands() ? dyn_cast<MDString>(P->getOperand(0)) : nullptr;
      Marked = Marked || (Name && Name->getString() == ptxforge::codegen::detail::ThreadLoopMarker);
      Props.push_back(Id->getOperand(K)); // the marker stays for WarpVectorizePass
    }
    if (!Marked)
      continue;
    Props.push_back(ptxforge::codegen::detail::loopProperty(C, "llvm.loop.vectorize.width", Lanes));
    Props.push_back(ptxforge::codegen::detail::loopProperty(C, "llvm.loop.interleave.count", 1));
    Term->setMetadata(LLVMContext::MD_loop, ptxforge::codegen::detail::loopId(C, Props));
    Changed = true;
  }
  // Only loop metadata changed: no analysis result depends on it.
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
