// Turning a kernel's hardware faults into launch errors: the driver's SIGSEGV/SIGBUS/SIGFPE/SIGILL handler
// (running on a per-thread alternate stack, so stack overflows are caught too) jumps back into the guarded
// call when the fault happened inside one, and otherwise hands the signal to whoever handled it before.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>

namespace ptxforge::driver {

struct Fault {
  int Signal = 0;       ///< SIGSEGV, SIGBUS, SIGFPE or SIGILL; 0 when the code called failGuardedCall
  uint64_t Address = 0; ///< the faulting address (si_addr)
  int Reason = 0;       ///< failGuardedCall's argument
};

/// Installs the signal handlers (once per process; later calls do nothing).
void installFaultHandlers();

/// Runs Fn on this thread; a fault inside it abandons Fn (its stack frames are not unwound: whatever they
/// own leaks, which is acceptable because a faulted kernel poisons the process) and is returned.
std::optional<Fault> runWithFaultGuard(llvm::function_ref<void()> Fn);

/// Abandons the innermost guarded call on this thread as a fault with Signal 0 and this Reason (device-side
/// assert). Aborts the process when no guarded call is running.
[[noreturn]] void failGuardedCall(int Reason);

} // namespace ptxforge::driver
