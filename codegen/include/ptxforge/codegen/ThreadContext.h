// The per-thread state generated code reads (special registers, the block's shared memory) and hands to the
// runtime for barriers and warp collectives. Shared by the C++ runtime and the LLVM IR the lowering emits:
// the IR struct type is built from PTXFORGE_THREAD_CONTEXT_FIELDS and these declarations.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptxforge::codegen {

namespace exec {
struct BlockState;
struct ClusterState;
} // namespace exec

struct ThreadContext {
  uint32_t Tid[3];
  uint32_t Ntid[3];
  uint32_t Ctaid[3];
  uint32_t Nctaid[3];
  uint32_t LaneId;
  uint32_t WarpId;
  uint32_t NWarpId;
  uint32_t DynamicSmemSize;
  char *Shared;            ///< base of the block's shared memory window
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
  /// Thread-block clusters (codegen/README.md, "Clusters"): the cluster's shape, (1,1,1) outside a cluster
  /// launch (every block a cluster of its own, as on the GPU), and bit 0 of ClusterFlags: %is_explicit_cluster.
  uint32_t ClusterDim[3];
  uint32_t ClusterFlags;
  /// The shared windows a shared::cluster address names by its bits 24-31: entry 0 this block's, entry 1 + r the
  /// window of the cluster's rank r; 256 entries, null past the cluster's size.
  char *const *ClusterShared;
  exec::ClusterState *Cluster; ///< barrier.cluster's state; null where the block is a cluster of its own
};

/// The block shapes launchKernel accepts (it refuses a launch outside them, as the GPU does): generated code
/// takes %tid and %ntid to lie within them, which bounds every loop over a block's threads.
constexpr uint32_t MaxBlockThreads = 1024;
constexpr uint32_t MaxBlockDim[3] = {1024, 1024, 64};

/// ThreadContext's fields in declaration order. The IR struct type is made from this list and the fields' C++
/// types (codegen/lib/Lowering.cpp, threadContextType), and the assertions below prove the list is every field
/// in order, so the two layouts agree by construction.
#define PTXFORGE_THREAD_CONTEXT_FIELDS(X)                                                                              \
  X(Tid)                                                                                                               \
  X(Ntid)                                                                                                              \
  X(Ctaid) X(Nctaid) X(LaneId) X(WarpId) X(NWarpId) X(DynamicSmemSize) X(Shared) X(Block) X(LinearTid) X(SmId)         \
      X(NSmId) X(TotalSmemSize) X(DeferChecks) X(MisalignedBits) X(GridWorkspace) X(ClusterDim) X(ClusterFlags)        \
          X(ClusterShared) X(Cluster)

/// Field indices of ThreadContext in the IR struct type.
enum ThreadContextField : unsigned {
#define PTXFORGE_TC_INDEX(Name) TC##Name,
  PTXFORGE_THREAD_CONTEXT_FIELDS(PTXFORGE_TC_INDEX)
#undef PTXFORGE_TC_INDEX
      TCNumFields
};

namespace layout {
struct Field {
  size_t Offset, Size, Align;
};
constexpr Field ThreadContextFields[] = {
#define PTXFORGE_TC_FIELD(Name)                                                                                        \
  {offsetof(ThreadContext, Name), sizeof(ThreadContext::Name), alignof(decltype(ThreadContext::Name))},
    PTXFORGE_THREAD_CONTEXT_FIELDS(PTXFORGE_TC_FIELD)
#undef PTXFORGE_TC_FIELD
};
constexpr size_t alignUp(size_t V, size_t A) { return (V + A - 1) / A * A; }
/// Each listed field starts where the one before it ends (after padding), and the last ends the struct.
constexpr bool listedInOrderWithoutGaps() {
  size_t End = 0;
  for (const Field &F : ThreadContextFields) {
    if (F.Offset != alignUp(End, F.Align))
      return false;
    End = F.Offset + F.Size;
  }
  return alignUp(End, alignof(ThreadContext)) == sizeof(ThreadContext);
}
} // namespace layout
static_assert(layout::listedInOrderWithoutGaps(),
              "PTXFORGE_THREAD_CONTEXT_FIELDS must list every ThreadContext field in declaration order");

} // namespace ptxforge::codegen
