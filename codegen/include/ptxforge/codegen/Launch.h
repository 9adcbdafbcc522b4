// Running a kernel of a CompiledModule over a grid: blocks in parallel on one worker per core, threads of a
// block in a loop (or as fibers when the kernel synchronises).
#pragma once

#include "ptxforge/codegen/CompiledModule.h"

#include "llvm/Support/Error.h"

namespace ptxforge::codegen {

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return uint64_t(X) * Y * Z; }
};

struct LaunchConfig {
  Dim3 Grid, Block;
  uint32_t DynamicSharedBytes = 0;
  unsigned Workers = 0; ///< 0: PTXFORGE_WORKERS or one per core
};

/// Runs K to completion. Params is the kernel's parameter buffer laid out as KernelInfo::Params says.
/// A trap, a barrier deadlock or a bad configuration is an error.
llvm::Error launchKernel(const CompiledModule &M, const KernelInfo &K, const LaunchConfig &Config, const void *Params);

} // namespace ptxforge::codegen
