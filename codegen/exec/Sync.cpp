// Block barriers in the thread-fiber mode: a thread arriving at `bar.sync` records its arrival and yields to
// the block scheduler (Launch.cpp) until the barrier's generation moves on. Exited threads no longer count, so
// `exit` can release a barrier, as on the GPU.
#include "Runtime.h"

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

void BlockState::releaseSatisfiedBarriers() {
  for (Barrier &B : Barriers) {
    if (!B.Arrived)
      continue;
    uint32_t Need = B.Expected ? B.Expected : Live;
    if (B.Arrived >= Need) {
      B.Arrived = 0;
      B.Expected = 0;
      ++B.Generation;
      ++Progress;
    }
  }
}

void BlockState::markExited(uint32_t T) {
  if (Exited[T])
    return;
  Exited[T] = 1;
  --Live;
  ++Progress;
  releaseSatisfiedBarriers();
}

namespace {

void arrive(BlockState &B, uint32_t Id, uint32_t Count) {
  Barrier &Bar = B.Barriers[Id & 15];
  if (!Bar.Arrived)
    Bar.Expected = Count;
  ++Bar.Arrived;
  B.releaseSatisfiedBarriers();
}

} // namespace

extern "C" {

static void ptxrt_bar_sync(ThreadContext *C, uint32_t Id, uint32_t Count) {
  BlockState &B = blockOf(C);
  Barrier &Bar = B.Barriers[Id & 15];
  uint64_t Gen = Bar.Generation;
  arrive(B, Id, Count);
  while (Bar.Generation == Gen)
    B.yield();
}

static void ptxrt_bar_arrive(ThreadContext *C, uint32_t Id, uint32_t Count) { arrive(blockOf(C), Id, Count); }

/// bar.warp.sync: waits until every non-exited lane of the mask has reached a warp sync.
static void ptxrt_warp_sync(ThreadContext *C, uint32_t Mask) {
  BlockState &B = blockOf(C);
  WarpSlot &W = B.Warps[C->WarpId];
  uint64_t Gen = W.Generation;
  W.Arrived |= 1u << C->LaneId;
  for (;;) {
    uint32_t Need = Mask;
    for (uint32_t L = 0; L < 32; ++L) {
      uint32_t T = C->WarpId * 32 + L;
      if (T >= B.Threads.size() || B.Exited[T])
        Need &= ~(1u << L);
    }
    if (W.Generation != Gen || (W.Arrived & Need) == Need)
      break;
    B.yield();
  }
  if (W.Generation == Gen) {
    W.Arrived = 0;
    ++W.Generation;
    ++B.Progress;
  }
}
}

void ptxforge::codegen::exec::registerSyncHelpers(HelperTable &T) {
  T.push_back({"ptxrt_bar_sync", reinterpret_cast<void *>(&ptxrt_bar_sync)});
  T.push_back({"ptxrt_bar_arrive", reinterpret_cast<void *>(&ptxrt_bar_arrive)});
  T.push_back({"ptxrt_warp_sync", reinterpret_cast<void *>(&ptxrt_warp_sync)});
}
