// Private runtime of the CPU execution model: block state (threads, fibers, barriers, warp rendezvous) and the
// table of helpers generated code calls (`ptxrt_*`, linked into JIT'd code by name).
#pragma once

#include "ptxforge/codegen/ThreadContext.h"

#include <csetjmp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ptxforge::codegen::exec {

/// Name -> address of every runtime helper.
const std::vector<std::pair<std::string, void *>> &runtimeHelpers();

/// Adds helpers to the table (each helper family registers itself from one function listed in Runtime.cpp).
using HelperTable = std::vector<std::pair<std::string, void *>>;
void registerSyncHelpers(HelperTable &T);
void registerMathHelpers(HelperTable &T);
void registerMiscHelpers(HelperTable &T);

struct Fiber {
  void *Context = nullptr; ///< boost fcontext of the suspended fiber
  void *Stack = nullptr;
  bool Done = false;
};

struct Barrier {
  uint32_t Arrived = 0;
  uint32_t Expected = 0; ///< thread count of the current phase (0: all live threads)
  uint64_t Generation = 0;
};

/// Per-warp rendezvous for collectives in thread-fiber mode (see Sync.cpp).
struct WarpSlot {
  uint64_t Values[32] = {};
  uint32_t Masks[32] = {};
  uint32_t Arrived = 0;
  uint32_t Departed = 0;
  uint64_t Generation = 0;
};

struct BlockState {
  std::vector<ThreadContext> Threads;
  struct ExitPoint {
    std::jmp_buf Buf;
  };
  std::vector<ExitPoint> ExitPoints;      ///< where `exit` inside a callee unwinds to
  std::vector<uint8_t> Exited;
  uint32_t Live = 0;                       ///< threads not exited
  bool UseFibers = false;
  std::vector<Fiber> Fibers;
  void *SchedulerContext = nullptr;
  uint32_t Current = 0;
  Barrier Barriers[16];
  std::vector<WarpSlot> Warps;
  uint64_t Progress = 0;                   ///< bumped by every barrier release, exit and collective
  bool Trapped = false;
  std::string Error;

  /// Suspends the current thread's fiber (no-op without fibers: a lone thread cannot wait).
  void yield();
  /// Marks thread T exited and releases barriers that only waited for it.
  void markExited(uint32_t T);
  void releaseSatisfiedBarriers();
};

/// The current thread's block (from its context).
inline BlockState &blockOf(ThreadContext *C) { return *C->Block; }

} // namespace ptxforge::codegen::exec
