// The fault handler: a guarded call records the signal and address and siglongjmps back to its start; any
// other fault goes to the handler installed before ours (or the default action, which ends the process as it
// would have without ptxforge). Handlers run on a per-thread alternate stack so a kernel's stack overflow can
// still be reported. Every guarded call checks that the handler is still ours (programs and frameworks install
// their own after cuInit) and puts it back in front if not.
#include "ptxforge/driver/FaultGuard.h"

#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <sys/mman.h>

using namespace ptxforge::driver;

namespace {

struct Guard {
  sigjmp_buf Jump;
  Fault Info;
};

// initial-exec TLS: reading it in a signal handler must not allocate (libcuda may be dlopen()ed).
__thread Guard *ActiveGuard __attribute__((tls_model("initial-exec"))) = nullptr;
__thread bool HasAltStack __attribute__((tls_model("initial-exec"))) = false;

constexpr int GuardedSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction Previous[NSIG];

void onFault(int Signal, siginfo_t *Info, void *UContext) {
  if (Guard *G = ActiveGuard) {
    ActiveGuard = nullptr;
    G->Info = Fault{Signal, reinterpret_cast<uint64_t>(Info ? Info->si_addr : nullptr)};
    siglongjmp(G->Jump, 1);
  }
  const struct sigaction &P = Previous[Signal];
  if ((P.sa_flags & SA_SIGINFO) && P.sa_sigaction) {
    P.sa_sigaction(Signal, Info, UContext);
    return;
  }
  if (P.sa_handler != SIG_DFL && P.sa_handler != SIG_IGN) {
    P.sa_handler(Signal);
    return;
  }
  // Not ours and nobody else's: restore the default action; the faulting instruction runs again and the
  // process ends with the signal, as it would have without the driver.
  signal(Signal, SIG_DFL);
}

/// Each thread that runs guarded code needs its own alternate signal stack (a fault on a guard page of the
/// thread's stack cannot be handled on that stack).
void ensureAltStack() {
  if (HasAltStack)
    return;
  stack_t Current{};
  if (sigaltstack(nullptr, &Current) == 0 && !(Current.ss_flags & SS_DISABLE) && Current.ss_sp) {
    HasAltStack = true;
    return;
  }
  constexpr size_t Bytes = 256 * 1024;
  void *Mem = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Mem == MAP_FAILED)
    return;
  stack_t S{};
  S.ss_sp = Mem;
  S.ss_size = Bytes;
  if (sigaltstack(&S, nullptr) == 0)
    HasAltStack = true; // lives as long as the thread (the worker threads live as long as their streams)
}

} // namespace

void ptxforge::driver::installFaultHandlers() {
  // Someone may have replaced the handler since (a runtime, a test framework): put ours back in front, keeping
  // theirs as the one to hand foreign faults to. One query per guarded call; installs are rare.
  static std::mutex Lock;
  for (int Signal : GuardedSignals) {
    struct sigaction Current {};
    sigaction(Signal, nullptr, &Current);
    if ((Current.sa_flags & SA_SIGINFO) && Current.sa_sigaction == onFault)
      continue;
    std::scoped_lock L(Lock);
    struct sigaction A {};
    A.sa_sigaction = onFault;
    A.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&A.sa_mask);
    struct sigaction Old {};
    if (sigaction(Signal, &A, &Old) == 0 && !((Old.sa_flags & SA_SIGINFO) && Old.sa_sigaction == onFault))
      Previous[Signal] = Old;
  }
}

std::optional<Fault> ptxforge::driver::runWithFaultGuard(llvm::function_ref<void()> Fn) {
  installFaultHandlers();
  ensureAltStack();
  Guard G;
  Guard *volatile Outer = ActiveGuard;
  if (sigsetjmp(G.Jump, 1)) {
    ActiveGuard = Outer;
    return G.Info;
  }
  ActiveGuard = &G;
  Fn();
  ActiveGuard = Outer;
  return std::nullopt;
}

void ptxforge::driver::failGuardedCall(int Reason) {
  Guard *G = ActiveGuard;
  if (!G)
    std::abort();
  ActiveGuard = nullptr;
  G->Info = Fault{0, 0, Reason};
  siglongjmp(G->Jump, 1);
}
