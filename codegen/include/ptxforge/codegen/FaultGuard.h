// The process's one fault handler: SIGSEGV/SIGBUS/SIGFPE/SIGILL raised inside a guarded call (a kernel's
// blocks on a launch worker, the driver's copies and image reads) jump back to that call's start; any other
// fault goes to the handler installed before (or the default action, which ends the process as it would have
// without ptxforge). The handler runs on a per-thread alternate stack, so a stack overflow (a fiber's, a deep
// recursion's) is caught too.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"

#include <csignal>
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
std::optional<Fault> runWithFaultGuard(llvm::function_ref<void()> Fn, bool Install = true, bool Interruptible = false);

/// The launch watchdog's signal. interruptGuardedCall sends it to a thread; when that thread is in an
/// Interruptible guarded call and executing JIT-compiled code (not code of any object loaded when
/// refreshCodeRanges last ran: a runtime helper or libc may hold a lock), the call is abandoned as a Fault with
/// this Signal. Anywhere else the signal is ignored, and the watchdog sends it again. Kernel code pays nothing.
constexpr int InterruptSignal = SIGXCPU;
/// Installs the handler of InterruptSignal (once; signals that are not interruptGuardedCall's go to the handler
/// installed before).
void installInterruptHandler();
/// Records the executable ranges of the loaded objects (dl_iterate_phdr), which the handler tells apart from
/// JIT-compiled code. Not async-signal-safe: the watchdog calls it before it interrupts.
void refreshCodeRanges();
/// Sends InterruptSignal to Thread (a pthread_t).
bool interruptGuardedCall(unsigned long Thread);

/// Abandons the innermost guarded call on this thread as a fault with Signal 0 and this Reason. Aborts the
/// process when no guarded call is running.
[[noreturn]] void failGuardedCall(int Reason);

} // namespace ptxforge::codegen
