// Block barriers in the thread-fiber mode: a thread arriving at `bar.sync` records its arrival and yields to
// the block scheduler (Launch.cpp) until the barrier's generation moves on. Arrivals are counted per warp: a
// warp whose non-exited lanes have all arrived counts with all its lanes, so `exit` can release a barrier, as
// on the GPU. `bar.red` reduces a predicate over the arriving threads.
#include "LaunchStop.h"
#include "Runtime.h"

#include <csetjmp>
#include <string>

#include <boost/context/detail/fcontext.hpp>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;
namespace bctx = boost::context::detail;

void BlockState::yield() {
  if (!UseFibers)
    return;
  bctx::transfer_t T = bctx::jump_fcontext(SchedulerContext, nullptr);
  SchedulerContext = T.fctx;
}

void BlockState::initWarps(uint32_t N) {
  uint32_t NW = (N + 31) / 32;
  Warps.resize(NW);
  Waits.assign(N, WaitState{});
  LaneMasks.assign(NW, 0xffffffffu);
  if (N % 32)
    LaneMasks[NW - 1] = (1u << (N % 32)) - 1;
  LiveMasks = LaneMasks;
}

void BlockState::releaseSatisfiedBarriers(int Only) {
  uint32_t NW = static_cast<uint32_t>(LaneMasks.size());
  for (int Id = Only < 0 ? 0 : Only; Id < (Only < 0 ? 16 : Only + 1); ++Id) {
    Barrier &B = Barriers[Id];
    if (!B.Arrivals)
      continue;
    bool Done;
    if (!B.Expected) {
      Done = true;
      for (uint32_t W = 0; W < NW && Done; ++W)
        Done = (B.WarpArrived[W] & LiveMasks[W]) == LiveMasks[W];
    } else {
      uint32_t Count = 0;
      for (uint32_t W = 0; W < NW; ++W) {
        uint32_t A = B.WarpArrived[W];
        if (!A)
          continue;
        Count += (A & LiveMasks[W]) == LiveMasks[W] ? 32 : __builtin_popcount(A); // a whole warp counts 32
      }
      Done = Count >= B.Expected;
    }
    if (!Done)
      continue;
    B.ResultPopc[B.Generation & 3] = B.Popc;
    B.ResultArrivals[B.Generation & 3] = B.Arrivals;
    for (uint32_t W = 0; W < NW; ++W)
      B.WarpArrived[W] = 0;
    B.Arrivals = 0;
    B.Popc = 0;
    B.Expected = 0;
    ++B.Generation;
    ++Progress;
  }
}

void BlockState::markExited(uint32_t T) {
  if (Exited[T])
    return;
  Exited[T] = 1;
  if (T / 32 < LiveMasks.size())
    LiveMasks[T / 32] &= ~(1u << (T % 32));
  --Live;
  ++Progress;
  releaseSatisfiedBarriers();
}

namespace {

/// Records thread C's arrival at barrier Id; returns the generation it arrived in.
/// The GPU faults on a barrier id past 15 or a thread count that is not a multiple of the warp size.
[[noreturn]] void illegalBarrier(BlockState &B, ThreadContext *C, uint32_t Id, uint32_t Count) {
  B.Trapped = true;
  if (B.Error.empty()) {
    B.Error = "illegal instruction: barrier " + std::to_string(Id) + " with thread count " + std::to_string(Count) +
              (Id > 15 ? " (ids are 0-15)" : " (not a multiple of 32)");
    B.Fault = LaunchFault::IllegalInstruction;
  }
  std::longjmp(B.ExitPoints[B.BlockLoop ? 0 : C->LinearTid].Buf, 1);
}

uint64_t arrive(BlockState &B, ThreadContext *C, uint32_t Id, uint32_t Count, bool Pred) {
  if (Id > 15 || Count % 32)
    illegalBarrier(B, C, Id, Count);
  Barrier &Bar = B.Barriers[Id & 15];
  uint64_t Gen = Bar.Generation;
  if (!Bar.Arrivals)
    Bar.Expected = Count;
  ++Bar.Arrivals;
  Bar.Popc += Pred;
  Bar.WarpArrived[C->WarpId & 31] |= 1u << C->LaneId;
  ++B.Progress;
  B.releaseSatisfiedBarriers(static_cast<int>(Id & 15));
  return Gen;
}

uint64_t arriveAndWait(ThreadContext *C, uint32_t Id, uint32_t Count, bool Pred) {
  BlockState &B = blockOf(C);
  Barrier &Bar = B.Barriers[Id & 15];
  uint64_t Gen = arrive(B, C, Id, Count, Pred);
  if (Bar.Generation != Gen)
    B.yieldToReleased(C->LinearTid, 0);
  else
    B.waitUntil(C->LinearTid, 0, [&] { return Bar.Generation != Gen; });
  return Gen;
}

} // namespace

extern "C" {

static void ptxrt_bar_sync(ThreadContext *C, uint32_t Id, uint32_t Count) { arriveAndWait(C, Id, Count, false); }

static void ptxrt_bar_arrive(ThreadContext *C, uint32_t Id, uint32_t Count) { arrive(blockOf(C), C, Id, Count, false); }

/// bar.red: Op 0 = popc (count of true predicates), 1 = and, 2 = or.
static uint32_t ptxrt_bar_red(ThreadContext *C, uint32_t Id, uint32_t Count, uint32_t Op, uint32_t Pred) {
  uint64_t Gen = arriveAndWait(C, Id, Count, Pred != 0);
  Barrier &Bar = blockOf(C).Barriers[Id & 15];
  uint32_t Popc = Bar.ResultPopc[Gen & 3], Arrivals = Bar.ResultArrivals[Gen & 3];
  switch (Op) {
  case 0:
    return Popc;
  case 1:
    return Popc == Arrivals;
  default:
    return Popc != 0;
  }
}

/// The tally of reduction Seq at barrier Id in C's block (BlockState::Tallies), fresh where it held another's.
static BlockState::ReductionTally &reductionTally(ThreadContext *C, uint32_t Id, uint32_t Seq) {
  uint64_t Block = C->Ctaid[0] + uint64_t(C->Nctaid[0]) * (C->Ctaid[1] + uint64_t(C->Nctaid[1]) * C->Ctaid[2]);
  BlockState::ReductionTally &T = blockOf(C).Tallies[Id & 15][Seq & 1];
  if (T.Block != Block || T.Seq != Seq)
    T = {Block, Seq, 0, 0};
  return T;
}

/// bar.red's arrival in kernel bodies: before the barrier (Op as ptxrt_bar_red's).
static void ptxrt_bar_red_arrive(ThreadContext *C, uint32_t Id, uint32_t Seq, uint32_t Pred) {
  BlockState::ReductionTally &T = reductionTally(C, Id, Seq);
  T.Popc += Pred != 0;
  ++T.Arrivals;
}

/// bar.red's result in kernel bodies: after the barrier, every arrival counted.
static uint32_t ptxrt_bar_red_result(ThreadContext *C, uint32_t Id, uint32_t Seq, uint32_t Op) {
  const BlockState::ReductionTally &T = reductionTally(C, Id, Seq);
  return Op == 0 ? T.Popc : Op == 1 ? T.Popc == T.Arrivals : T.Popc != 0;
}

/// A spin point (codegen/lib/ProgressPoints.h): the back edge of a loop that may wait for another thread or
/// block. Every SpinYieldInterval-th one yields, so that a spinning thread lets the others run (a yield per
/// iteration would cost a loop that polls and then does real work a switch per trip). The mode (LCSpin) is the
/// region cut's (FunctionLowering::emitProgressPoint; 0 from a block function's dispatcher, BarrierRegions.cpp);
/// host code of older builds passes none, and none is read.
static void ptxrt_spin_point(ThreadContext *C, uint32_t) {
  constexpr uint64_t SpinYieldInterval = 16;
  BlockState &B = blockOf(C);
  if (++B.SpinPoints % SpinYieldInterval)
    return;
  // The loop may wait for a block that failed (LaunchStop.h). Fiber blocks learn it in their scheduler, which
  // the yield returns to; a block function's loop over its threads has none.
  if (!B.UseFibers && launchFailed())
    abandonBlock(C);
  ++B.SpinYields;
  B.yield();
}

/// A lockstep point in the fiber mode: every thread of the block reaches it before any goes past (the block
/// scheduler runs them round-robin), so a warp's stores before it are seen by its loads after it.
static void ptxrt_lockstep(ThreadContext *C, uint32_t) {
  BlockState &B = blockOf(C);
  ++B.Progress;
  B.yield();
}

/// Where the threads of a region-split block function stopped after a loop over them (State[t]: 0 exited, K
/// waiting to enter region K): 0 when all exited, K when all wait for region K, ~0 otherwise. Block functions
/// compute this themselves now (min/max reductions in their loops); host code compiled ahead of time by
/// earlier ptxforge builds (fatbins' host-native entries) still calls it.
static uint32_t ptxrt_region_next(ThreadContext *, const uint32_t *State, uint32_t N) {
  uint32_t First = State[0];
  for (uint32_t T = 1; T < N; ++T)
    if (State[T] != First)
      return ~0u;
  return First;
}
}

void ptxforge::codegen::exec::registerSyncHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_region_next), PTXRT_HELPER(ptxrt_bar_sync), PTXRT_HELPER(ptxrt_bar_arrive),
                     PTXRT_HELPER(ptxrt_bar_red), PTXRT_HELPER(ptxrt_bar_red_arrive),
                     PTXRT_HELPER(ptxrt_bar_red_result), PTXRT_HELPER(ptxrt_spin_point), PTXRT_HELPER(ptxrt_lockstep)});
  registerWarpHelpers(T);
  registerAsyncHelpers(T);
}
