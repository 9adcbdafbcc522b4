// See BackgroundJobs.h.
#include "ptxforge/driver/BackgroundJobs.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <thread>

using namespace ptxforge::driver;

struct BackgroundJobs::Job {
  bool Done = false;
  BackgroundJobs::State *Owner = nullptr; ///< the process's job state when the job started (see fork below)
};

struct BackgroundJobs::State {
  std::mutex Lock;
  std::condition_variable Finished;
  unsigned Running = 0;
  std::atomic<bool> Exiting{false};
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
    std::atexit([] { get().waitAll(); });
    // A child of fork() has none of the parent's job threads: its exit must not wait for them, and a lock one
    // of them held stays held in the child. It starts from a fresh state (the old one is left as it was).
    pthread_atfork(nullptr, nullptr, [] { Current = new State; });
    return Jobs;
  }();
  return *J;
}

bool BackgroundJobs::exiting() const { return state().Exiting.load(std::memory_order_acquire); }

BackgroundJobs::Handle BackgroundJobs::start(std::function<void()> Work) {
  State &S = state();
  auto H = std::make_shared<Job>();
  H->Owner = &S;
  {
    std::scoped_lock L(S.Lock);
    ++S.Running;
  }
  std::thread([&S, H, Work = std::move(Work)] {
    Work();
    std::scoped_lock L(S.Lock);
    H->Done = true;
    --S.Running;
    S.Finished.notify_all();
  }).detach();
  return H;
}

void BackgroundJobs::wait(const Handle &H) {
  State &S = state();
  if (!H || H->Owner != &S) // none, or a job of the parent process of a fork: it does not run here
    return;
  std::unique_lock L(S.Lock);
  S.Finished.wait(L, [&] { return H->Done; });
}

void BackgroundJobs::waitAll() {
  State &S = state();
  S.Exiting.store(true, std::memory_order_release);
  std::unique_lock L(S.Lock);
  S.Finished.wait(L, [&] { return S.Running == 0; });
}
