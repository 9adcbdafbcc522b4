// Private to codegen/lib: where a thread function must give other threads a turn, so that a block of threads
// run one after another (thread loops, region loops, fibers) keeps two guarantees programs take from the GPU.
// - Forward progress (independent thread scheduling, sm_70+): a thread spinning until another thread or block
//   writes memory must let that thread run. A loop that may spin is one whose body reads memory others may
//   write with an ordering the compiler must keep: volatile, relaxed or acquire loads, atomics whose result
//   the loop reads (polling, CAS locks), fences or nanosleep. Its back edge gets a spin point (the thread
//   yields now and then). In a kernel body a spin point is also a region cut, always releasable like a lockstep
//   point: region loops stop a spinning thread there each trip and run the block's other threads before it goes
//   round again. A spin loop in a callee (the region builder cuts kernel bodies only) makes the kernel run on
//   fibers. Blocks of a kernel that may spin run all at once where the grid fits the device (Launch.cpp's
//   AllResident), so a block waiting for another is not waiting for one that never starts. A loop of plain
//   loads may be hoisted by any compiler,
//   so it is not one: the GPU gives no progress to it either. Nor is a compare-and-swap retry loop (atomicAdd on
//   doubles, atomicMax on floats written with atomicCAS): it goes round again only when another thread, one
//   that is running, changed the word since the loop observed it, so it keeps the fast path.
// - Warp lockstep in straight-line code: the lanes of a converged warp execute each instruction together, so a
//   shared-memory store of some lanes is seen by the next load of the others (legacy warp-synchronous code:
//   the volatile reduction and scan without __syncwarp). Where a kernel loads shared memory that a store may
//   precede on some path with no barrier or warp collective between, a lockstep point before that load makes
//   every thread of the block finish the store first; from that point to the next barrier a load->store
//   boundary gets one too, so that a step's loads all happen before its stores (a scan reads its neighbour's
//   old value). The region builder cuts there as at a loop cut (always releasable); fibers yield there. A loop
//   with lockstep points needs no spin point.
#pragma once

#include "ptxforge/ptx/Function.h"

#include <vector>

namespace ptxforge::codegen::detail {

struct ProgressPoints {
  std::vector<bool> SpinBackEdge;   ///< per instruction: a backward branch closing a loop that may spin
  std::vector<bool> LockstepBefore; ///< per instruction: a lockstep point goes before it
  bool MaySpin = false;
  unsigned LockstepPoints = 0;
  unsigned SpinPoints = 0; ///< SpinBackEdge's count: in a kernel body each is a region cut too
};

/// F's progress points. Lockstep points only for kernels (the region builder cuts kernel bodies only).
ProgressPoints findProgressPoints(const ptx::Function &F);

} // namespace ptxforge::codegen::detail
