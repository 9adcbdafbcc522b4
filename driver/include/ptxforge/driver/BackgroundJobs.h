// Work the driver runs beside the application (the tiered JIT's optimized compiles), and the guarantee that
// none is still running when the process exits, without making exit wait for work nobody needs any more.
#pragma once

#include "ptxforge/codegen/Lowering.h"

#include <functional>
#include <memory>

namespace ptxforge::driver {

class BackgroundJobs {
public:
  struct Job;
  using Handle = std::shared_ptr<Job>;
  /// What a job's work is told: once requested, nobody wants the result; the work should stop at its next
  /// opportunity (a compile hands it to codegen as CompileOptions::Cancel) and must not publish anything. At
  /// exit it is also told to abandon (not free) what it built.
  using CancelFlag = codegen::CancelToken;

  /// The process's jobs. Exit cancels every job and waits for the running ones to stop before the first static
  /// is destroyed (from a thread_local object of the initial thread, made at its first use here; from an exit
  /// handler registered at the first use when another thread exits): a job uses LLVM, whose statics exit()
  /// would otherwise destroy under it. A cancelled
  /// compile stops at its next function or optimization pass (or after the code generation of the part it is
  /// compiling), so exit does not wait for compiles to finish.
  static BackgroundJobs &get();

  /// Runs Work on a thread of its own.
  Handle start(std::function<void(const CancelFlag &)> Work);
  /// Asks the job (if any) to stop; its work sees its flag set. Does not wait.
  void cancel(const Handle &H);
  /// Blocks until the job (if any) has finished, stopped or been skipped.
  void wait(const Handle &H);
  /// True from the exit handler on: what is still to be freed then (a cancelled compile's IR, an unloaded
  /// module's) may be left to the end of the process instead.
  bool exiting() const;

  struct State;

private:
  BackgroundJobs() = default;
  void cancelAndWaitAll();
  /// Makes the calling thread, if it is the process's initial thread, wait for the jobs when it exits.
  void armExitWait();
  State &state() const;
};

} // namespace ptxforge::driver
