// The persistent launch workers (codegen/exec/WorkerPool.h): every share of a job runs exactly once and the
// launcher returns only after all have; launches of different sizes reuse the pool; a launch from a second host
// thread while the pool is busy still runs; pool workers are pinned to their CPUs.
#include "WorkerPool.h"
#include "ptxforge/codegen/Launch.h"

#include <doctest/doctest.h>

#include <atomic>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

using namespace ptxforge::codegen::exec;

TEST_CASE("every share runs once per launch, and the launch waits for all") {
  for (unsigned Workers : {1u, 2u, 5u, 3u, 8u, 2u}) {
    for (int Round = 0; Round < 200; ++Round) {
      std::vector<std::atomic<int>> Ran(Workers);
      std::atomic<int> Finished{0};
      runOnWorkers(Workers, [&](unsigned I) {
        REQUIRE(I < Workers);
        Ran[I].fetch_add(1);
        Finished.fetch_add(1);
      });
      CHECK(Finished.load() == static_cast<int>(Workers));
      for (unsigned I = 0; I < Workers; ++I)
        CHECK(Ran[I].load() == 1);
    }
  }
}

TEST_CASE("launches from two host threads at once both complete") {
  std::atomic<int> Total{0};
  auto Launcher = [&] {
    for (int Round = 0; Round < 300; ++Round)
      runOnWorkers(3, [&](unsigned) { Total.fetch_add(1); });
  };
  std::thread A(Launcher), B(Launcher);
  A.join();
  B.join();
  CHECK(Total.load() == 2 * 300 * 3);
}

TEST_CASE("a launch may wait inside one share for another share (all shares run at once)") {
  // Cooperative grids rely on it: every block has its own worker, and grid.sync waits for all of them.
  std::atomic<unsigned> Arrived{0};
  const unsigned Workers = 6;
  runOnWorkers(Workers, [&](unsigned) {
    Arrived.fetch_add(1);
    while (Arrived.load() < Workers)
      std::this_thread::yield();
  });
  CHECK(Arrived.load() == Workers);
}

TEST_CASE("pool worker I runs pinned to the I-th CPU of the process") {
  std::vector<int> Cpus = ptxforge::codegen::affinityCpus();
  if (Cpus.size() < 2)
    return; // one CPU: nothing to pin beside the launcher
  unsigned Workers = static_cast<unsigned>(Cpus.size());
  std::vector<std::vector<int>> Masks(Workers);
  runOnWorkers(Workers, [&](unsigned I) {
    cpu_set_t Set;
    CPU_ZERO(&Set);
    pthread_getaffinity_np(pthread_self(), sizeof Set, &Set);
    for (int C = 0; C < CPU_SETSIZE; ++C)
      if (CPU_ISSET(C, &Set))
        Masks[I].push_back(C);
  });
  CHECK(Masks[0] == Cpus); // the launcher's own thread is left as it was
  for (unsigned I = 1; I < Workers; ++I)
    CHECK(Masks[I] == std::vector<int>{Cpus[I]});
}
