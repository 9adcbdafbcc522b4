// See BackgroundJobs.h.
#include "ptxforge/driver/BackgroundJobs.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace ptxforge::driver;

struct BackgroundJobs::Job {
  bool Done = false;
};

struct BackgroundJobs::State {
  std::mutex Lock;
  std::condition_variable Finished;
  unsigned Running = 0;
  std::atomic<bool> Exiting{false};
};

BackgroundJobs::State &BackgroundJobs::state() const {
  // Never destroyed: a job finishing during exit still signals through it.
  static State *S = new State;
  return *S;
}

BackgroundJobs &BackgroundJobs::get() {
  static BackgroundJobs *J = [] {
    auto *Jobs = new BackgroundJobs;
    std::atexit([] { get().waitAll(); });
    return Jobs;
  }();
  return *J;
}

bool BackgroundJobs::exiting() const { return state().Exiting.load(std::memory_order_acquire); }

BackgroundJobs::Handle BackgroundJobs::start(std::function<void()> Work) {
  State &S = state();
  auto H = std::make_shared<Job>();
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
  if (!H)
    return;
  State &S = state();
  std::unique_lock L(S.Lock);
  S.Finished.wait(L, [&] { return H->Done; });
}

void BackgroundJobs::waitAll() {
  State &S = state();
  S.Exiting.store(true, std::memory_order_release);
  std::unique_lock L(S.Lock);
  S.Finished.wait(L, [&] { return S.Running == 0; });
}
