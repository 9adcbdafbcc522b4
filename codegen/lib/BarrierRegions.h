// Private to codegen/lib: block functions for kernels synchronised only by whole-block barriers and warp
// collectives (see BarrierRegions.cpp for the scheme).
#pragma once

#include "FunctionLowering.h"

namespace ptxforge::codegen::detail {

/// Whether Kernel's only synchronisation is `bar.sync`/`barrier.sync` on one immediate barrier id without a
/// thread count and the warp collectives WarpRendezvous.h can cut at, in the kernel body itself (callees
/// neither synchronise nor `exit`).
bool regionSplittable(const ptx::Module &M, const ptx::Function &Kernel);

/// `__ptx_block_K(ThreadContext *Template, const char *Params)` for a region-splittable kernel's thread
/// function: every thread of the block, region by region. An error when the thread function breaks the
/// region builder's contract (Markers.h): the lowering and the builder disagree, a bug the caller reports.
/// The barriers and collectives of a region-splittable kernel: each makes a region.
unsigned regionCuts(const ptx::Function &Kernel);

llvm::Expected<llvm::Function *> emitRegionBlockFunction(ModuleLowering &ML, llvm::Function *Thread);

} // namespace ptxforge::codegen::detail
