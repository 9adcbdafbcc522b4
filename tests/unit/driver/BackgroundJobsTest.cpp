// The exit wait for background jobs (driver/lib/BackgroundJobs.cpp) runs before the destructors of statics made
// after the job started, even by the job itself: those are destroyed first at exit, and a compile still
// running crashed in one of LLVM's (SelectionDAG's extended value types).
#include "ptxforge/driver/BackgroundJobs.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ptxforge::driver;

namespace {
std::atomic<bool> StaticDestroyed{false};
} // namespace

TEST_CASE("exit waits for a running job before destroying statics made after it started") {
  pid_t Pid = ::fork();
  REQUIRE(Pid >= 0);
  if (Pid == 0) {
    // The child: its initial thread starts a job that keeps using a "static" for a while, then a static with a
    // destructor is made (an exit handler registered after the job's start stands for it), then it exits.
    BackgroundJobs::get().start([](const BackgroundJobs::CancelFlag &) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (StaticDestroyed.load())
        ::_exit(3); // the static was destroyed under the running job
    });
    std::atexit([] { StaticDestroyed.store(true); });
    std::exit(0);
  }
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  REQUIRE(WIFEXITED(Status));
  CHECK(WEXITSTATUS(Status) == 0);
}
