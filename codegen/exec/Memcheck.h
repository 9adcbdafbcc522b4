// Memcheck mode's runtime (Memcheck.cpp): the helpers generated code calls and the launch's per-block hook.
#pragma once

#include "Runtime.h"

namespace ptxforge::codegen::exec {

void registerMemcheckHelpers(HelperTable &T);

/// Called before a block's threads run (launches of memcheck code): the checks of this worker thread follow
/// block B of the launch C from here on. A launch without MemcheckFindings turns them off.
void beginMemcheckBlock(const LaunchConfig &C, BlockState &B, uint32_t Threads);

} // namespace ptxforge::codegen::exec
