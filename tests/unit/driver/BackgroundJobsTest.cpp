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

namespace {
/// A job that works for Millis in small steps, stopping early when cancelled; Finished says whether it got to
/// the end.
BackgroundJobs::Handle steppedJob(int Millis, std::atomic<int> &Finished) {
  return BackgroundJobs::get().start([Millis, &Finished](const BackgroundJobs::CancelFlag &Cancel) {
    for (int T = 0; T < Millis; T += 5) {
      if (Cancel.Requested.load())
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Finished = 1;
  });
}
} // namespace

TEST_CASE("finishOrCancel lets a job run on for its credit and cancels one without") {
  std::atomic<int> CreditedDone{0}, UncreditedDone{0};
  BackgroundJobs::Handle Credited = steppedJob(200, CreditedDone), Uncredited = steppedJob(2000, UncreditedDone);
  BackgroundJobs::get().credit(Credited, 5.0); // its kernel ran 5 s on the code it replaces
  auto Start = std::chrono::steady_clock::now();
  BackgroundJobs::get().finishOrCancel({Credited, Uncredited});
  double Waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  CHECK(CreditedDone == 1);
  CHECK(UncreditedDone == 0); // cancelled at once: not worth waiting for
  CHECK(Waited < 1.5);        // for the credited job's 200 ms, not for its 5 s of credit
}

TEST_CASE("finishOrCancel cancels a job once its credit is spent") {
  std::atomic<int> Done{0};
  BackgroundJobs::Handle Long = steppedJob(3000, Done);
  BackgroundJobs::get().credit(Long, 0.2);
  auto Start = std::chrono::steady_clock::now();
  BackgroundJobs::get().finishOrCancel({Long});
  double Waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  CHECK(Done == 0);
  CHECK(Waited >= 0.19);
  CHECK(Waited < 2.0);
}

TEST_CASE("exit lets a credited job finish") {
  int Pipe[2];
  REQUIRE(::pipe(Pipe) == 0);
  pid_t Pid = ::fork();
  REQUIRE(Pid >= 0);
  if (Pid == 0) {
    ::close(Pipe[0]);
    int Out = Pipe[1];
    BackgroundJobs::Handle H = BackgroundJobs::get().start([Out](const BackgroundJobs::CancelFlag &Cancel) {
      for (int T = 0; T < 300; T += 5) {
        if (Cancel.Requested.load())
          return;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      char Byte = 'y';
      (void)!::write(Out, &Byte, 1);
    });
    BackgroundJobs::get().credit(H, 3.0);
    std::exit(0);
  }
  ::close(Pipe[1]);
  char Byte = 0;
  ssize_t Got = ::read(Pipe[0], &Byte, 1);
  ::close(Pipe[0]);
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  CHECK(WIFEXITED(Status));
  CHECK(Got == 1);
  CHECK(Byte == 'y');
}
