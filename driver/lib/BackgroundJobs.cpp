// See BackgroundJobs.h.
#include "ptxforge/driver/BackgroundJobs.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ptxforge::driver;

struct BackgroundJobs::Job {
  CancelFlag Cancelled;
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

void BackgroundJobs::cancelAndWaitAll() {
  State &S = state();
  std::unique_lock L(S.Lock);
  S.Exiting.store(true, std::memory_order_release);
  for (Job *J : S.Running) {
    J->Cancelled.Abandon.store(true, std::memory_order_relaxed); // the process ends: leave the IR unfreed
    J->Cancelled.Requested.store(true, std::memory_order_release);
  }
  S.Finished.wait(L, [&] { return S.Running.empty(); });
}
