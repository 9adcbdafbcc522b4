// See FaultGuard.h. Every guarded call checks (or its launch checked) that the handler is still ours: programs
// and frameworks install their own after cuInit, and the kernels that fault are the ones that must not take
// the process down.
#include "ptxforge/codegen/FaultGuard.h"

#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <sys/mman.h>
#include <ucontext.h>

using namespace ptxforge::codegen;

namespace {

struct Guard {
  sigjmp_buf Jump;
  Fault Info;
};

// initial-exec TLS: reading it in a signal handler must not allocate (libcuda may be dlopen()ed).
__thread Guard *ActiveGuard __attribute__((tls_model("initial-exec"))) = nullptr;

constexpr int GuardedSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction Previous[NSIG];

uint64_t faultingPc(void *UContext) {
#if defined(__x86_64__)
  return UContext ? static_cast<uint64_t>(static_cast<ucontext_t *>(UContext)->uc_mcontext.gregs[REG_RIP]) : 0;
#elif defined(__aarch64__)
  return UContext ? static_cast<uint64_t>(static_cast<ucontext_t *>(UContext)->uc_mcontext.pc) : 0;
#else
  (void)UContext;
  return 0;
#endif
}

void onFault(int Signal, siginfo_t *Info, void *UContext) {
  if (Guard *G = ActiveGuard) {
    ActiveGuard = nullptr;
    G->Info = Fault{Signal, reinterpret_cast<uint64_t>(Info ? Info->si_addr : nullptr), 0, faultingPc(UContext)};
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
  // process ends with the signal, as it would have without ptxforge.
  signal(Signal, SIG_DFL);
}

/// Each thread that runs guarded code needs an alternate signal stack (a fault on a guard page of the thread's
/// stack cannot be handled on that stack). One that the thread already has is kept; ours lives as long as the
/// thread (launch workers and stream threads live long; any other thread gives it back when it ends).
class AltStack {
public:
  static void ensure() {
    thread_local AltStack Mine;
    (void)Mine;
  }

private:
  static constexpr size_t Bytes = 256 * 1024;
  void *Memory = nullptr;

  AltStack() {
    stack_t Current{};
    if (sigaltstack(nullptr, &Current) == 0 && !(Current.ss_flags & SS_DISABLE) && Current.ss_sp)
      return;
    void *M = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (M == MAP_FAILED)
      return;
    stack_t S{};
    S.ss_sp = M;
    S.ss_size = Bytes;
    if (sigaltstack(&S, nullptr) == 0)
      Memory = M;
    else
      munmap(M, Bytes);
  }
  ~AltStack() {
    if (!Memory)
      return;
    stack_t Off{};
    Off.ss_flags = SS_DISABLE;
    sigaltstack(&Off, nullptr);
    munmap(Memory, Bytes);
  }
};

} // namespace

void ptxforge::codegen::installFaultHandlers() {
  static std::mutex Lock;
  for (int Signal : GuardedSignals) {
    struct sigaction Current {};
    sigaction(Signal, nullptr, &Current);
    if ((Current.sa_flags & SA_SIGINFO) && Current.sa_sigaction == onFault)
      continue;
    std::scoped_lock L(Lock);
    struct sigaction A {};
    A.sa_sigaction = onFault;
    A.sa_flags = SA_SIGINFO | SA_ONSTACK; // the guard's sigsetjmp saved the mask the jump back restores
    sigemptyset(&A.sa_mask);
    struct sigaction Old {};
    if (sigaction(Signal, &A, &Old) == 0 && !((Old.sa_flags & SA_SIGINFO) && Old.sa_sigaction == onFault))
      Previous[Signal] = Old;
  }
}

std::optional<Fault> ptxforge::codegen::runWithFaultGuard(llvm::function_ref<void()> Fn, bool Install) {
  if (Install)
    installFaultHandlers();
  AltStack::ensure();
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

void ptxforge::codegen::failGuardedCall(int Reason) {
  Guard *G = ActiveGuard;
  if (!G)
    std::abort();
  ActiveGuard = nullptr;
  G->Info = Fault{0, 0, Reason, 0};
  siglongjmp(G->Jump, 1);
}
