// The launch workers: threads that live as long as the process, each pinned to one CPU of the process's
// affinity mask, parked between launches. A launch hands them one job and runs its first share on the calling
// thread, so a grid costs a wake-up instead of thread creation, and a worker's caches and memory stay on its core.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"

namespace ptxforge::codegen::exec {

/// Runs Job(0) on the calling thread and Job(1) .. Job(Workers - 1) on pool threads, and returns when all have
/// returned. Only one launch holds the pool at a time: a launch that finds it busy (another host thread's launch
/// runs) gets threads of its own for this one job, so concurrent launches never wait for each other.
/// Pool threads this call starts are pinned when Pin says so (LaunchConfig::PinWorkers): worker I (I >= 1) to the
/// I-th CPU of the affinity mask the process had when the pool started; workers beyond the CPU count
/// (cooperative grids) are not pinned.
void runOnWorkers(unsigned Workers, llvm::function_ref<void(unsigned)> Job, bool Pin = true);

} // namespace ptxforge::codegen::exec
