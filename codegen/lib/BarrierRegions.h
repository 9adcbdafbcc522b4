// Private to codegen/lib: block functions for kernels synchronised only by whole-block barriers and warp
// collectives (see BarrierRegions.cpp for the scheme).
#pragma once

#include "FunctionLowering.h"

namespace ptxforge::codegen::detail {

/// Whether Kernel's only synchronisation is `bar.sync`/`barrier.sync` on one immediate barrier id without a
/// thread count and the warp collectives WarpRendezvous.h can cut at, in the kernel body itself (callees
/// neither synchronise, `exit` nor spin), and the kernel body's lockstep and spin points (ProgressPoints.h).
bool regionSplittable(const ptx::Module &M, const ptx::Function &Kernel);

/// The barriers and collectives of a region-splittable kernel: each makes a region.
unsigned regionCuts(const ptx::Function &Kernel);

/// The region builder as a pass of its own (ptxforge-region-blocks runs it on its copy of a thread function):
/// rewrites F, a thread function keeping the region contract (Markers.h: the warp rendezvous and the loop cuts
/// have run), into `__ptx_block_K(ThreadContext *Template, const char *Params)`, every thread of the block region
/// by region. Returns the resume loops it left out (ResumeLoops::Count); an error, with F no function to keep,
/// when F breaks the contract.
llvm::Expected<unsigned> buildRegions(ModuleLowering &ML, llvm::Function &F, ResumeLoops Resume);

/// A region split: the block function, and the resume loops whose rounds its generic loop counts.
struct RegionSplit {
  llvm::Function *Block = nullptr;
  unsigned CountedResumeLoops = 0;
};

/// `__ptx_block_K` for a region-splittable kernel's thread function: a copy with its deferred checks folded, put
/// through the warp rendezvous, the loop cuts (ML.LoopCuts, within ML.RegionCutBudget) and the region builder.
/// An error when the thread function breaks a pass's contract (Markers.h): the lowering and the passes disagree,
/// a bug the caller reports.
llvm::Expected<RegionSplit> emitRegionBlockFunction(ModuleLowering &ML, llvm::Function *Thread, ResumeLoops Resume);

} // namespace ptxforge::codegen::detail
