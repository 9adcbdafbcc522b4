// Work the driver runs beside the application (the tiered JIT's optimized compiles), and the guarantee that
// none is still running when the process exits.
#pragma once

#include <functional>
#include <memory>

namespace ptxforge::driver {

class BackgroundJobs {
public:
  struct Job;
  using Handle = std::shared_ptr<Job>;

  /// The process's jobs. The first use registers an exit handler that waits for the running ones: a job uses
  /// LLVM, whose statics exit() would otherwise destroy under it. A job that has not begun its work by then
  /// skips it (exiting()).
  static BackgroundJobs &get();

  /// Runs Work on a thread of its own.
  Handle start(std::function<void()> Work);
  /// Blocks until the job (if any) has finished or been skipped.
  void wait(const Handle &H);
  /// True from the exit handler on: jobs check it before they begin their work.
  bool exiting() const;

  struct State;

private:
  BackgroundJobs() = default;
  void waitAll();
  State &state() const;
};

} // namespace ptxforge::driver
