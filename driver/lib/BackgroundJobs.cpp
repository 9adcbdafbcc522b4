// See BackgroundJobs.h.
#include "ptxforge/driver/BackgroundJobs.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ptxforge::driver;

struct BackgroundJobs::Job {
  CancelFlag Cancelled;
  std::atomic<uint64_t> CreditMicros{0}; ///< see credit()
  bool Done = false;
  BackgroundJobs::State *Owner = nullptr; ///< the process's job state when the job started (see fork below)
};

struct BackgroundJobs::State {
  std::mutex Lock;
  std::condition_variable Finished;
  std::vector<Job *> Running;       ///< started, not yet done (each kept alive by its thread's Handle)
  std::atomic<bool> Exiting{false}; ///< the exit handler has run: a job started later starts cancelled
};

namespace {
// Never destroyed: a job finishing during exit still signals through it.
BackgroundJobs::State *Current = nullptr;
} // namespace

BackgroundJobs::State &BackgroundJobs::state() const { return *Current; }

BackgroundJobs &BackgroundJobs::get() {
  static BackgroundJobs *J = [] {
    Current = new State;
    auto *Jobs = new BackgroundJobs;
    // For an exit from another thread than the initial one (see armExitWait): it runs before the destructors of
    // the statics made before it.
    std::atexit([] { get().cancelAndWaitAll(); });
    // A child of fork() has none of the parent's job threads: its exit must not wait for them, and a lock one
    // of them held stays held in the child. It starts from a fresh state (the old one is left as it was).
    pthread_atfork(nullptr, nullptr, [] { Current = new State; });
    return Jobs;
  }();
  J->armExitWait();
  return *J;
}

void BackgroundJobs::armExitWait() {
  // A job's compile may use statics made lazily at any time before or during it (LLVM's; made by a later quick
  // compile or by the job itself), and exit destroys every static made after an exit handler before running
  // that handler: a compile still running at exit crashed in SelectionDAG's extended value types (client
  // drv_errors under load). Registering the handler again at each job's start covered the statics made before
  // the start, at one registration per compile. The C++ runtime destroys the exiting thread's thread_local
  // objects before it runs any exit handler or static destructor: one in the initial thread, which returns from
  // main or calls exit in nearly every program, waits for the jobs before anything is destroyed, once.
  struct ExitWait {
    ~ExitWait() {
      // Also run when the initial thread ends by pthread_exit while the process goes on: later compiles then
      // start cancelled (their kernels keep their quick code), as after exit.
      get().cancelAndWaitAll();
    }
  };
  thread_local bool Checked = false; // one system call per thread
  if (Checked)
    return;
  Checked = true;
  if (static_cast<pid_t>(::syscall(SYS_gettid)) != ::getpid())
    return;
  thread_local ExitWait Wait;
  (void)Wait;
}

bool BackgroundJobs::exiting() const { return state().Exiting.load(std::memory_order_acquire); }

BackgroundJobs::Handle BackgroundJobs::start(std::function<void(const CancelFlag &)> Work) {
  State &S = state();
  auto H = std::make_shared<Job>();
  H->Owner = &S;
  {
    std::scoped_lock L(S.Lock);
    S.Running.push_back(H.get());
    if (S.Exiting.load(std::memory_order_relaxed)) { // started by a later exit handler of the application
      H->Cancelled.Abandon.store(true, std::memory_order_relaxed);
      H->Cancelled.Requested.store(true, std::memory_order_release);
    }
  }
  std::thread([&S, H, Work = std::move(Work)] {
    Work(H->Cancelled);
    std::scoped_lock L(S.Lock);
    H->Done = true;
    S.Running.erase(std::find(S.Running.begin(), S.Running.end(), H.get()));
    S.Finished.notify_all();
  }).detach();
  return H;
}

void BackgroundJobs::cancel(const Handle &H) {
  if (H)
    H->Cancelled.Requested.store(true, std::memory_order_release);
}

void BackgroundJobs::wait(const Handle &H) {
  State &S = state();
  if (!H || H->Owner != &S) // none, or a job of the parent process of a fork: it does not run here
    return;
  std::unique_lock L(S.Lock);
  S.Finished.wait(L, [&] { return H->Done; });
}

void BackgroundJobs::credit(const Handle &H, double Seconds) {
  if (H && Seconds > 0)
    H->CreditMicros.fetch_add(static_cast<uint64_t>(Seconds * 1e6), std::memory_order_relaxed);
}

void BackgroundJobs::finishOrCancel(llvm::ArrayRef<Handle> Jobs) {
  State &S = state();
  std::unique_lock L(S.Lock);
  graceThenCancel(
      S, L,
      [&](const Job *J) { return llvm::any_of(Jobs, [J](const Handle &H) { return H.get() == J; }); },
      /*Exit=*/false);
}

void BackgroundJobs::cancelAndWaitAll() {
  State &S = state();
  std::unique_lock L(S.Lock);
  S.Exiting.store(true, std::memory_order_release); // a job started from now on starts cancelled
  graceThenCancel(S, L, [](const Job *) { return true; }, /*Exit=*/true);
}

void BackgroundJobs::graceThenCancel(State &S, std::unique_lock<std::mutex> &L,
                                     const std::function<bool(const Job *)> &Mine, bool Exit) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point Start = Clock::now();
  const auto Cap = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(MaxGraceSeconds));
  auto cancelJob = [Exit](Job *J) {
    if (Exit)
      J->Cancelled.Abandon.store(true, std::memory_order_relaxed); // the process ends: leave the IR unfreed
    J->Cancelled.Requested.store(true, std::memory_order_release);
  };
  for (;;) {
    // Each job still worth waiting for runs on until its credit, counted from Start, is spent; a job that
    // finishes wakes the wait (Finished) and leaves Running.
    const Clock::time_point Now = Clock::now();
    std::optional<Clock::time_point> Next;
    for (Job *J : S.Running) {
      if (!Mine(J) || J->Cancelled.Requested.load(std::memory_order_acquire))
        continue;
      auto Credit = std::chrono::microseconds(J->CreditMicros.load(std::memory_order_relaxed));
      Clock::time_point Until = Start + std::min<Clock::duration>(Credit, Cap);
      if (Until <= Now)
        cancelJob(J);
      else if (!Next || Until < *Next)
        Next = Until;
    }
    if (!Next)
      break;
    S.Finished.wait_until(L, *Next);
  }
  S.Finished.wait(L, [&] { return llvm::none_of(S.Running, Mine); });
}
