// The per-thread state generated code reads (special registers, the block's shared memory) and hands to the
// runtime for barriers and warp collectives. Shared by the C++ runtime and the LLVM IR the lowering emits:
// field order here IS the IR struct layout (see ThreadContextField).
#pragma once

#include <cstdint>

namespace ptxforge::codegen {

namespace exec {
struct BlockState;
}

struct ThreadContext {
  uint32_t Tid[3];
  uint32_t Ntid[3];
  uint32_t Ctaid[3];
  uint32_t Nctaid[3];
  uint32_t LaneId;
  uint32_t WarpId;
  uint32_t NWarpId;
  uint32_t DynamicSmemSize;
  char *Shared;        ///< base of the block's shared memory window
  exec::BlockState *Block; ///< runtime state for barriers and collectives
  uint32_t LinearTid;
  uint32_t SmId;
  uint32_t NSmId;
  uint32_t TotalSmemSize;
  /// Set by the JIT'd block loop: checks at a thread's end are deferred to the loop's end (so the loop stays
  /// vectorizable), which tests MisalignedBits, the OR of the threads' misaligned address bits.
  uint32_t DeferChecks;
  uint32_t MisalignedBits; ///< below 16: no access is wider
  /// Cooperative launches: the zeroed grid-sync workspace CUDA's grid.sync() finds in %envreg1:%envreg2
  /// (null otherwise, where grid.sync() traps as on the GPU).
  uint64_t GridWorkspace;
};

/// Field indices of ThreadContext in the IR struct type.
enum ThreadContextField : unsigned {
  TCTid, TCNtid, TCCtaid, TCNctaid, TCLaneId, TCWarpId, TCNWarpId, TCDynamicSmemSize, TCShared, TCBlock,
  TCLinearTid, TCSmId, TCNSmId, TCTotalSmemSize, TCDeferChecks, TCMisalignedBits, TCGridWorkspace
};

} // namespace ptxforge::codegen
