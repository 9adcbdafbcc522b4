// See FaultGuard.h. Every guarded call checks (or its launch checked) that the handler is still ours: programs
// and frameworks install their own after cuInit, and the kernels that fault are the ones that must not take
// the process down.
#include "ptxforge/codegen/FaultGuard.h"

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <link.h>
#include <mutex>
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

using namespace ptxforge::codegen;

namespace {

struct Guard {
  sigjmp_buf Jump;
  Fault Info;
  bool Interruptible = false;
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

std::optional<Fault> ptxforge::codegen::runWithFaultGuard(llvm::function_ref<void()> Fn, bool Install,
                                                          bool Interruptible) {
  if (Install)
    installFaultHandlers();
  AltStack::ensure();
  Guard G;
  G.Interruptible = Interruptible;
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

namespace {
/// The executable segments of the loaded objects, in two buffers: refreshCodeRanges fills the one the handler
/// does not read, then publishes it.
struct CodeRanges {
  static constexpr size_t Max = 1024;
  uintptr_t Begin[Max], End[Max];
  size_t Count = 0;
};
CodeRanges Ranges[2];
std::atomic<int> PublishedRanges{-1};
std::mutex RangesLock;
constexpr int InterruptValue = 0x70786667; // "pxfg": the watchdog's, not a foreign InterruptSignal
struct sigaction PreviousInterrupt;

bool inLoadedObject(uintptr_t Pc) {
  int K = PublishedRanges.load(std::memory_order_acquire);
  if (K < 0)
    return true; // unknown: never jump
  const CodeRanges &R = Ranges[K];
  for (size_t I = 0; I < R.Count; ++I)
    if (Pc >= R.Begin[I] && Pc < R.End[I])
      return true;
  return false;
}

void onInterrupt(int Signal, siginfo_t *Info, void *UContext) {
  if (!Info || Info->si_code != SI_QUEUE || Info->si_value.sival_int != InterruptValue) {
    const struct sigaction &P = PreviousInterrupt;
    if ((P.sa_flags & SA_SIGINFO) && P.sa_sigaction)
      P.sa_sigaction(Signal, Info, UContext);
    else if (P.sa_handler != SIG_DFL && P.sa_handler != SIG_IGN)
      P.sa_handler(Signal);
    else if (P.sa_handler == SIG_DFL) { // a CPU time limit: the process ends as it would have without ptxforge
      signal(Signal, SIG_DFL);
      raise(Signal);
    }
    return;
  }
  Guard *G = ActiveGuard;
  uintptr_t Pc = static_cast<uintptr_t>(faultingPc(UContext));
  if (!G || !G->Interruptible || !Pc || inLoadedObject(Pc))
    return;
  ActiveGuard = nullptr;
  G->Info = Fault{Signal, 0, 0, Pc};
  siglongjmp(G->Jump, 1);
}

int addRanges(dl_phdr_info *Info, size_t, void *Data) {
  auto &R = *static_cast<CodeRanges *>(Data);
  for (unsigned I = 0; I < Info->dlpi_phnum && R.Count < CodeRanges::Max; ++I) {
    const auto &P = Info->dlpi_phdr[I];
    if (P.p_type != PT_LOAD || !(P.p_flags & PF_X))
      continue;
    R.Begin[R.Count] = Info->dlpi_addr + P.p_vaddr;
    R.End[R.Count] = Info->dlpi_addr + P.p_vaddr + P.p_memsz;
    ++R.Count;
  }
  return 0;
}
} // namespace

void ptxforge::codegen::installInterruptHandler() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    struct sigaction A {};
    A.sa_sigaction = onInterrupt;
    A.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&A.sa_mask);
    sigaction(InterruptSignal, &A, &PreviousInterrupt);
  });
}

void ptxforge::codegen::refreshCodeRanges() {
  std::scoped_lock L(RangesLock);
  int Next = PublishedRanges.load(std::memory_order_relaxed) == 0 ? 1 : 0;
  // The buffer the handler may still read is the published one; the other is free once a refresh published.
  Ranges[Next].Count = 0;
  dl_iterate_phdr(addRanges, &Ranges[Next]);
  PublishedRanges.store(Next, std::memory_order_release);
}

bool ptxforge::codegen::interruptGuardedCall(unsigned long Thread) {
  sigval V{};
  V.sival_int = InterruptValue;
  return pthread_sigqueue(static_cast<pthread_t>(Thread), InterruptSignal, V) == 0;
}

void ptxforge::codegen::failGuardedCall(int Reason) {
  Guard *G = ActiveGuard;
  if (!G)
    std::abort();
  ActiveGuard = nullptr;
  G->Info = Fault{0, 0, Reason, 0};
  siglongjmp(G->Jump, 1);
}
