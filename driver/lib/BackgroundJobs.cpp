// See BackgroundJobs.h.
#include "ptxforge/driver/BackgroundJobs.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <thread>
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
    std::atexit([] { get().cancelAndWaitAll(); });
    // A child of fork() has none of the parent's job threads: its exit must not wait for them, and a lock one
    // of them held stays held in the child. It starts from a fresh state (the old one is left as it was).
    pthread_atfork(nullptr, nullptr, [] { Current = new State; });
    return Jobs;
  }();
  return *J;
}

bool BackgroundJobs::exiting() const { return state().Exiting.load(std::memory_order_acquire); }

BackgroundJobs::Handle BackgroundJobs::start(std::function<void(const CancelFlag &)> Work) {
  State &S = state();
  // Exit runs handlers and static destructors last registered, first run. A job's compile may use statics made
  // lazily after the first job started (LLVM's, made by a later quick compile); with the wait registered at the
  // first job only, they were destroyed before it, under a compile still running. Seen as a rare crash at exit in
  // SelectionDAG's extended value types (client drv_errors under load: 4 exits in about 200, after a trap
  // kernel's optimized compile began last). Registered again at each start, the latest handler waits first.
  std::atexit([] { get().cancelAndWaitAll(); });
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
