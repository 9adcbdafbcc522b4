// Persistent launch workers (see WorkerPool.h). A job is published by bumping a sequence number; workers spin
// briefly on it before parking on a condition variable, so back-to-back launches (a benchmark's repetitions, a
// multi-kernel pipeline) skip the sleep/wake round trip, while an idle process holds no CPU.
#include "WorkerPool.h"

#include "ptxforge/codegen/Launch.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// About 20-30 µs of pause instructions: longer than the gap between two launches of a busy host loop, short
/// enough that an idle worker gives its CPU back almost at once.
constexpr unsigned SpinRounds = 1024;

class Pool {
public:
  Pool() : Cpus(affinityCpus()) {}

  /// False when another launch holds the pool.
  bool tryRun(unsigned Workers, llvm::function_ref<void(unsigned)> Job, bool Pin) {
    std::unique_lock<std::mutex> Hold(Busy, std::try_to_lock);
    if (!Hold.owns_lock())
      return false;
    // The pool outlives main(): its workers are detached and park until the process ends.
    for (; Started + 1 < Workers; ++Started)
      std::thread([this, Index = Started + 1, Pin] { serve(Index, Pin); }).detach();
    CurrentJob = Job;
    Remaining.store(Workers - 1, std::memory_order_relaxed);
    {
      std::scoped_lock L(Lock);
      uint64_t Next = (Published.load(std::memory_order_relaxed) >> 32) + 1;
      Published.store(Next << 32 | (Workers - 1), std::memory_order_release);
    }
    Wake.notify_all();
    Job(0);
    for (unsigned I = 0; I < SpinRounds && Remaining.load(std::memory_order_acquire); ++I)
      cpuRelax();
    if (Remaining.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> L(Lock);
      Done.wait(L, [&] { return Remaining.load(std::memory_order_acquire) == 0; });
    }
    return true;
  }

private:
  void serve(unsigned Index, bool Pin) {
    if (Pin && Index < Cpus.size()) {
      cpu_set_t Set;
      CPU_ZERO(&Set);
      CPU_SET(Cpus[Index], &Set);
      pthread_setaffinity_np(pthread_self(), sizeof Set, &Set);
    }
    uint64_t Seen = 0;
    for (;;) {
      uint64_t G = Published.load(std::memory_order_acquire);
      for (unsigned I = 0; I < SpinRounds && G == Seen; ++I) {
        cpuRelax();
        G = Published.load(std::memory_order_acquire);
      }
      if (G == Seen) {
        std::unique_lock<std::mutex> L(Lock);
        Wake.wait(L, [&] { return Published.load(std::memory_order_acquire) != Seen; });
        G = Published.load(std::memory_order_acquire);
      }
      Seen = G;
      if (Index > static_cast<uint32_t>(G)) // a smaller launch than the pool: this worker sits it out
        continue;
      CurrentJob(Index);
      if (Remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::scoped_lock L(Lock); // the launcher checks Remaining under Lock: no lost wake-up
        Done.notify_one();
      }
    }
  }

  const std::vector<int> Cpus; ///< a pinned worker I runs on Cpus[I] (I < Cpus.size())
  std::mutex Busy;             ///< held by the launch that uses the pool
  std::mutex Lock;
  std::condition_variable Wake, Done;
  unsigned Started = 0; ///< workers 1 .. Started exist
  /// The job now published: its sequence number (high 32 bits) and how many pool workers it takes (low 32 bits,
  /// workers 1..N), in one word so that a worker never pairs one job's number with another's worker count.
  std::atomic<uint64_t> Published{0};
  /// Written by the launcher before it publishes a job, read by that job's workers (the next job is published
  /// only after all of them are done).
  llvm::function_ref<void(unsigned)> CurrentJob;
  std::atomic<unsigned> Remaining{0};
};

std::atomic<Pool *> Instance{nullptr};

Pool &pool() {
  static std::once_flag Once;
  // A forked child has none of the parent's threads (and may have copied a held lock): it starts a pool of its
  // own at its first launch. The parent's pool object is left behind, not destroyed.
  std::call_once(Once, [] { pthread_atfork(nullptr, nullptr, [] { Instance.store(nullptr); }); });
  Pool *P = Instance.load(std::memory_order_acquire);
  if (P)
    return *P;
  Pool *Fresh = new Pool();
  if (Instance.compare_exchange_strong(P, Fresh, std::memory_order_acq_rel))
    return *Fresh;
  delete Fresh;
  return *P;
}

} // namespace

void ptxforge::codegen::exec::runOnWorkers(unsigned Workers, llvm::function_ref<void(unsigned)> Job, bool Pin) {
  if (Workers <= 1) {
    Job(0);
    return;
  }
  if (pool().tryRun(Workers, Job, Pin))
    return;
  std::vector<std::thread> Own;
  for (unsigned I = 1; I < Workers; ++I)
    Own.emplace_back([&Job, I] { Job(I); });
  Job(0);
  for (std::thread &T : Own)
    T.join();
}
