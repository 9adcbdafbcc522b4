// Runtime helpers of thread-block clusters (Cluster.h): barrier.cluster across the blocks of a cluster, and the
// conversions of generic addresses that must find the shared window an address falls in (mapa, getctarank, cvta
// and isspacep on generic addresses). shared::cluster addresses themselves are decoded by the generated code.
// clusterlaunchcontrol.try_cancel takes a block no worker has started from the launch's counter (BlockState).
#include "Cluster.h"
#include "LaunchStop.h"
#include "Runtime.h"

#include <atomic>
#include <cstring>

#include <sched.h>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

uint32_t clusterSize(const ThreadContext *C) { return C->ClusterDim[0] * C->ClusterDim[1] * C->ClusterDim[2]; }

uint32_t ownRank(const ThreadContext *C) {
  const uint32_t *D = C->ClusterDim;
  return C->Ctaid[0] % D[0] + D[0] * (C->Ctaid[1] % D[1] + D[1] * (C->Ctaid[2] % D[2]));
}

/// The rank whose shared window holds generic address P, or -1.
int windowOf(const ThreadContext *C, uint64_t P) {
  for (uint32_t R = 0, N = clusterSize(C); R < N && R + 1 < ClusterWindows; ++R)
    if (const char *Base = C->ClusterShared[1 + R]; Base && P - reinterpret_cast<uint64_t>(Base) < C->TotalSmemSize)
      return static_cast<int>(R);
  return -1;
}

/// Whether the cluster's barrier phase that the caller waits for can no longer complete: every thread of the
/// cluster waits in it (so it arrived) or is in a block that has ended, and the phase did not complete.
bool phaseStuck(const ClusterState &S, uint32_t Phase) {
  const ClusterGroup &G = *S.Group;
  uint32_t Ended = 0;
  for (uint32_t R = 0; R < G.Size; ++R)
    Ended += G.Finished[R].load(std::memory_order_acquire) > S.Sequence;
  return G.Waiting[Phase & 1].load(std::memory_order_acquire) + Ended * (G.Threads / G.Size) >= G.Threads &&
         G.Generation.load(std::memory_order_acquire) == Phase;
}

} // namespace

extern "C" {

/// barrier.cluster.arrive: the thread's arrival in the cluster's current phase (release: the atomics order the
/// thread's earlier accesses before the phase completes).
static void ptxrt_cluster_arrive(ThreadContext *C) {
  ClusterState *S = C->Cluster;
  if (!S)
    return; // a cluster of one block: the block barrier of barrier.cluster.wait is all there is
  ClusterGroup &G = *S->Group;
  S->ArrivePhase[C->LinearTid] = G.Generation.load(std::memory_order_acquire);
  if (G.Arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == G.Threads) {
    G.Arrived.store(0, std::memory_order_relaxed);
    G.Generation.fetch_add(1, std::memory_order_acq_rel);
  }
}

/// barrier.cluster.wait, after the block barrier the lowering puts before it: waits until the phase of the
/// thread's arrival completes. The other blocks of the cluster run on workers of their own; the block's own
/// threads run on while this one waits (the barrier may release a warp's lanes before all have arrived here,
/// since a warp's arrivals count together), so the wait yields to them as a spin loop does.
static void ptxrt_cluster_wait(ThreadContext *C) {
  ClusterState *S = C->Cluster;
  if (!S)
    return;
  ClusterGroup &G = *S->Group;
  uint32_t Phase = S->ArrivePhase[C->LinearTid];
  if (G.Generation.load(std::memory_order_acquire) == Phase) {
    BlockState &B = blockOf(C);
    G.Waiting[Phase & 1].fetch_add(1, std::memory_order_acq_rel);
    while (G.Generation.load(std::memory_order_acquire) == Phase) {
      bool Failed = launchFailed(); // a block of the cluster may have faulted before it arrived (LaunchStop.h)
      if (Failed || phaseStuck(*S, Phase)) {
        G.Waiting[Phase & 1].fetch_sub(1, std::memory_order_acq_rel);
        if (Failed)
          abandonBlock(C);
        raiseFault(C, LaunchFault::Deadlock,
                   "barrier.cluster deadlock: a block of the cluster ended without arriving at the barrier", true);
      }
      ++B.SpinYields; // no deadlock of the block: what it waits for comes from other blocks
      if (B.UseFibers)
        B.yield();
      else
        sched_yield();
    }
    G.Waiting[Phase & 1].fetch_sub(1, std::memory_order_acq_rel);
  }
}

/// mapa on a generic address: the same byte of rank Rank's window (0 for an address in no window, or a rank
/// outside the cluster: an access there faults, where the GPU's result is undefined).
static uint64_t ptxrt_cluster_mapa(ThreadContext *C, uint64_t P, uint32_t Rank) {
  int W = windowOf(C, P);
  if (W < 0 || Rank >= clusterSize(C) || Rank + 1 >= ClusterWindows)
    return 0;
  return reinterpret_cast<uint64_t>(C->ClusterShared[1 + Rank]) +
         (P - reinterpret_cast<uint64_t>(C->ClusterShared[1 + W]));
}

/// getctarank on a generic address: the rank whose window holds it (the caller's own for any other address).
static uint32_t ptxrt_cluster_rank_of(ThreadContext *C, uint64_t P) {
  int W = windowOf(C, P);
  return W < 0 ? ownRank(C) : static_cast<uint32_t>(W);
}

/// cvta.to.shared::cluster: the shared::cluster address of a generic address in a window of the cluster (a
/// plain offset in the caller's own).
static uint32_t ptxrt_cluster_to_shared(ThreadContext *C, uint64_t P) {
  uint64_t Own = reinterpret_cast<uint64_t>(C->ClusterShared[0]);
  if (P - Own < C->TotalSmemSize)
    return static_cast<uint32_t>(P - Own);
  int W = windowOf(C, P);
  if (W < 0)
    return static_cast<uint32_t>(P);
  return static_cast<uint32_t>(W + 1) << ClusterRankShift |
         static_cast<uint32_t>(P - reinterpret_cast<uint64_t>(C->ClusterShared[1 + W]));
}

/// isspacep.shared::cluster: whether a generic address is in the shared memory of a block of the cluster.
static uint32_t ptxrt_cluster_is_shared(ThreadContext *C, uint64_t P) { return windowOf(C, P) >= 0; }

/// clusterlaunchcontrol.try_cancel: cancels the launch of a block no worker has started, if one is left, and
/// writes the 16-byte response to Resp (ptxforge's encoding, which query_cancel reads: word 0 bit 0 whether a
/// block was cancelled, words 1-3 its %ctaid), completing 16 bytes on the mbarrier at Mbar; with Multicast, at
/// the same offsets in every block of the cluster. The cancelled block never runs, and no other response names
/// it. Launches whose blocks cannot be taken (BlockState::Unstarted) always answer that nothing was cancelled, as
/// a GPU does once every cluster has started.
static void ptxrt_clc_try_cancel(ThreadContext *C, char *Resp, uint64_t *Mbar, uint32_t Multicast) {
  char *RespWindow = sharedWindowOf(C, Resp), *BarWindow = sharedWindowOf(C, reinterpret_cast<char *>(Mbar));
  if (!RespWindow || !BarWindow)
    raiseFault(C, LaunchFault::IllegalAddress, "clusterlaunchcontrol.try_cancel: not a shared-memory address", true);
  uint32_t Words[4] = {0, 0, 0, 0};
  if (std::atomic<uint64_t> *Next = C->Block->Unstarted) {
    uint64_t Cur = Next->load(std::memory_order_relaxed);
    while (Cur < C->Block->GridBlocks)
      if (Next->compare_exchange_weak(Cur, Cur + 1, std::memory_order_relaxed)) {
        Words[0] = 1;
        Words[1] = static_cast<uint32_t>(Cur % C->Nctaid[0]);
        Words[2] = static_cast<uint32_t>(Cur / C->Nctaid[0] % C->Nctaid[1]);
        Words[3] = static_cast<uint32_t>(Cur / (uint64_t(C->Nctaid[0]) * C->Nctaid[1]));
        break;
      }
  }
  auto respond = [&](char *Window) {
    memcpy(Window + (Resp - RespWindow), Words, sizeof Words);
    mbarCompleteTx(C, reinterpret_cast<uint64_t *>(Window + (reinterpret_cast<char *>(Mbar) - BarWindow)), 16);
  };
  if (!Multicast)
    return respond(RespWindow);
  for (uint32_t R = 0, N = clusterSize(C); R < N; ++R)
    if (char *Window = clusterWindow(C, R))
      respond(Window);
}

} // extern "C"

char *ptxforge::codegen::exec::clusterWindow(const ThreadContext *C, uint32_t Rank) {
  return Rank < clusterSize(C) && Rank + 1 < ClusterWindows ? C->ClusterShared[1 + Rank] : nullptr;
}

char *ptxforge::codegen::exec::sharedWindowOf(const ThreadContext *C, const char *P) {
  if (static_cast<uint64_t>(P - C->ClusterShared[0]) < C->TotalSmemSize)
    return C->ClusterShared[0];
  int W = windowOf(C, reinterpret_cast<uint64_t>(P));
  return W < 0 ? nullptr : C->ClusterShared[1 + W];
}

void ptxforge::codegen::exec::registerClusterHelpers(HelperTable &T) {
  T.push_back({"ptxrt_cluster_arrive", reinterpret_cast<void *>(&ptxrt_cluster_arrive)});
  T.push_back({"ptxrt_cluster_wait", reinterpret_cast<void *>(&ptxrt_cluster_wait)});
  T.push_back({"ptxrt_cluster_mapa", reinterpret_cast<void *>(&ptxrt_cluster_mapa)});
  T.push_back({"ptxrt_cluster_rank_of", reinterpret_cast<void *>(&ptxrt_cluster_rank_of)});
  T.push_back({"ptxrt_cluster_to_shared", reinterpret_cast<void *>(&ptxrt_cluster_to_shared)});
  T.push_back({"ptxrt_cluster_is_shared", reinterpret_cast<void *>(&ptxrt_cluster_is_shared)});
  T.push_back({"ptxrt_clc_try_cancel", reinterpret_cast<void *>(&ptxrt_clc_try_cancel)});
}
