// Whether the launch the calling worker runs has failed (Launch.cpp). Blocks of one launch may wait for each
// other (an mbarrier phase another block completes, barrier.cluster, a tcgen05 .cta_group::2 pair's peer,
// distributed shared memory, a cooperative grid's grid.sync); the block waited for may be the one that faulted,
// and then nothing ends the wait. Every such wait asks launchFailed() and ends its block when it says so: the
// launch has its error already (the first failure's), so it returns that promptly instead of hanging.
#pragma once

#include <atomic>

namespace ptxforge::codegen {
struct ThreadContext;
}

namespace ptxforge::codegen::exec {

/// Whether the launch the calling worker thread runs blocks of has failed (false outside a launch).
bool launchFailed();

/// Ends the calling thread's block because its launch failed (launchFailed()): a wait that can no longer end.
/// The launch keeps its first failure; what this block says is not reported.
[[noreturn]] void abandonBlock(ThreadContext *C);

/// Makes Failed the flag launchFailed() reads on the calling thread while the scope lives (a worker of a launch;
/// scopes nest, as a grid a device-side launch starts may run on a worker of its parent's).
class LaunchFailureScope {
public:
  explicit LaunchFailureScope(const std::atomic<bool> *Failed);
  ~LaunchFailureScope();
  LaunchFailureScope(const LaunchFailureScope &) = delete;
  LaunchFailureScope &operator=(const LaunchFailureScope &) = delete;

private:
  const std::atomic<bool> *Outer;
};

} // namespace ptxforge::codegen::exec
