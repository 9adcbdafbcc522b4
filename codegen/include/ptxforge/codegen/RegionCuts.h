// What a region-split block function (codegen/lib/BarrierRegions.cpp, WarpRendezvous.cpp) and the runtime's
// dispatcher (codegen/exec/RegionRendezvous.cpp) agree on: the table saying which rendezvous precedes each
// region, and the encoding of the threads' stop states. Shared by C++ and the IR the region builder emits.
#pragma once

#include <cstdint>

namespace ptxforge::codegen {

/// Who made an RCLoop cut (its Arg).
enum LoopCutMode : uint32_t {
  LCBuilder = 0,  ///< the region builder, at a loop's edges (LoopCuts.h)
  LCLockstep = 1, ///< a lockstep point (codegen/lib/ProgressPoints.h), at which the generic loop stops as well
  LCSpin = 2,     ///< a spin point: as a lockstep point, and a block function's dispatcher asks the runtime there
                  ///< whether the launch failed (the loop may wait for a block that did)
};

/// The rendezvous a thread waits at before entering a region.
enum RegionCutKind : uint32_t {
  RCStart = 0, ///< region 0: nothing
  RCBarrier,   ///< bar.sync / barrier.sync on the kernel's one barrier
  RCShfl,      ///< shfl.sync; Arg: 0 up, 1 down, 2 bfly, 3 idx
  RCVote,      ///< vote.sync; Arg: 0 all, 1 any, 2 uni, 3 ballot
  RCRedux,     ///< redux.sync; Arg: the operation, as ptxrt_redux numbers it
  RCMatchAny,  ///< match.any.sync
  RCMatchAll,  ///< match.all.sync
  RCWarpSync,  ///< bar.warp.sync
  RCLoop,      ///< an edge into or out of a barrier-free innermost loop (LoopCuts.h), or a progress point: always
               ///< releasable; Arg: LoopCutMode
  // Matrix collectives: every lane deposits the address of its fragment registers (the warp slot WSBuffer of
  // codegen/lib/Markers.h), which the dispatcher reads and writes in place for the whole warp at once.
  RCMma,       ///< mma.sync / wmma.mma.sync; Arg: ptxrt_mma's code; the lane's register counts in the B slot
  RCLdmatrix,  ///< ldmatrix; Arg: matrices * 2 + trans; the row address in the value slot
  RCStmatrix,  ///< stmatrix; Arg: as ldmatrix
  RCMovmatrix, ///< movmatrix.trans; the register in the value slot, the result in the out slot
  RCMmaBatch,  ///< a run of products (ptxrt_mma_batch); Arg: its key; the descriptor's address in the value slot
  NumRegionCutKinds
};

/// One entry per region, in an IR constant `{i32, i32}` array.
struct RegionCut {
  uint32_t Kind;
  uint32_t Arg;
};

/// Stop states (one per thread): 0 exited; K waiting to enter region K. The dispatcher ORs this bit into the
/// state of a thread whose rendezvous did not complete yet, so the generic loop passes it by.
constexpr uint32_t RegionBlocked = 0x80000000u;

} // namespace ptxforge::codegen
