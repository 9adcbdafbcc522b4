// Private runtime of thread-block clusters (codegen/README.md, "Clusters"). A cluster launch runs its clusters on
// groups of workers, one worker per block of a cluster: the group's workers run the same sequence of clusters,
// each its own rank's block of each, so the blocks of a cluster run at once and a block's shared window (the
// worker's) stays where the others found it. barrier.cluster counts the cluster's threads in the group's state.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace ptxforge::codegen::exec {

struct BlockState;

/// A shared::cluster address names a window by its bits 24-31 (ThreadContext::ClusterShared: 0 this block's,
/// 1 + r rank r's) and a byte of it by bits 0-23, so a shared::cta offset is also the shared::cluster address of
/// the same byte of the executing block, as the PTX ISA requires.
constexpr unsigned ClusterRankShift = 24;
constexpr uint32_t ClusterOffsetMask = (1u << ClusterRankShift) - 1;
constexpr unsigned ClusterWindows = 256;

/// What the workers of one group share.
struct ClusterGroup {
  explicit ClusterGroup(uint32_t Size)
      : Size(Size), Bases(Size, nullptr), Finished(new std::atomic<uint64_t>[Size]), Running(new RunningBlock[Size]) {
    for (uint32_t R = 0; R < Size; ++R)
      Finished[R] = 0;
  }
  uint32_t Size;        ///< blocks per cluster
  uint32_t Threads = 0; ///< threads per cluster: the arrivals of a barrier.cluster phase
  std::atomic<uint32_t> Arrived{0};
  std::atomic<uint32_t> Generation{0}; ///< completed barrier.cluster phases
  /// Threads in barrier.cluster.wait, by the parity of the phase they wait for (a thread of a block run on
  /// fibers may not have seen its phase complete yet when others wait for the next one).
  std::atomic<uint32_t> Waiting[2] = {0, 0};
  std::atomic<uint32_t> Published{0}; ///< workers whose shared window is in Bases
  std::vector<char *> Bases;          ///< per rank: the shared window of its worker
  /// Per rank: how many of the group's clusters its block has finished.
  std::unique_ptr<std::atomic<uint64_t>[]> Finished;
  /// Per rank: its running block and that block's index in the group's sequence (~0 between blocks), for what one
  /// block does to its peer's Tensor Memory (tcgen05 .cta_group::2, WarpgroupHelpers.cpp).
  struct RunningBlock {
    std::atomic<BlockState *> Block{nullptr};
    std::atomic<uint64_t> Sequence{~0ull};
  };
  std::unique_ptr<RunningBlock[]> Running;
  std::mutex TmemLock; ///< Tensor Memory allocations of the group's blocks (cta_group::2 allocates in two)
  /// Per rank: cta_group::2 allocations its peer made for it that its own alloc has not taken yet, in order.
  std::vector<std::vector<uint32_t>> PairAllocs = std::vector<std::vector<uint32_t>>(Size);
};

/// One worker's view of its cluster (ThreadContext::Cluster, ClusterShared).
struct ClusterState {
  ClusterGroup *Group = nullptr; ///< null: every block is a cluster of its own
  uint32_t Rank = 0;
  uint64_t First = 0, Stride = 1;    ///< the group runs clusters First, First + Stride, ...
  uint64_t Sequence = 0;             ///< the index of the running cluster in the group's sequence
  bool Running = false;              ///< a block of cluster Sequence runs
  uint64_t WindowBytes = 0;          ///< each block's shared window
  std::vector<uint32_t> ArrivePhase; ///< per thread: Generation when it arrived at barrier.cluster
  char *Shared[ClusterWindows] = {};
};

} // namespace ptxforge::codegen::exec
