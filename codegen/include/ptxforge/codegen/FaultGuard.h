// The process's one fault handler: SIGSEGV/SIGBUS/SIGFPE/SIGILL raised inside a guarded call (a kernel's
// blocks on a launch worker, the driver's copies and image reads) jump back to that call's start; any other
// fault goes to the handler installed before (or the default action, which ends the process as it would have
// without ptxforge). The handler runs on a per-thread alternate stack, so a stack overflow (a fiber's, a deep
// recursion's) is caught too.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>

namespace ptxforge::codegen {

struct Fault {
  int Signal = 0;       ///< SIGSEGV, SIGBUS, SIGFPE or SIGILL; 0 when the code called failGuardedCall
  uint64_t Address = 0; ///< the faulting address (si_addr)
  int Reason = 0;       ///< failGuardedCall's argument
  uint64_t Pc = 0;      ///< the faulting instruction's address (0 when unknown)
};

/// Puts the handler in front of the process's handlers: installs it, or installs it again where a program or
/// framework replaced it since (theirs becomes the one foreign faults go to). A few sigaction queries.
void installFaultHandlers();

/// Runs Fn on this thread; a fault inside it abandons Fn (its stack frames are not unwound: whatever they
/// own leaks, which is acceptable because a faulted kernel poisons the process) and is returned. Guards nest.
/// Checks that the handler is installed (installFaultHandlers) unless Install is false, for callers that
/// checked once for many guarded calls.
std::optional<Fault> runWithFaultGuard(llvm::function_ref<void()> Fn, bool Install = true);

/// Abandons the innermost guarded call on this thread as a fault with Signal 0 and this Reason. Aborts the
/// process when no guarded call is running.
[[noreturn]] void failGuardedCall(int Reason);

} // namespace ptxforge::codegen
