// Work the driver runs beside the application (the tiered JIT's optimized compiles), and the guarantee that
// none is still running when the process exits, without making exit wait for work nobody needs any more.
#pragma once

#include "ptxforge/codegen/Lowering.h"

#include "llvm/ADT/ArrayRef.h"

#include <functional>
#include <memory>
#include <mutex>

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
  /// Credits the job (if any) with Seconds its result would have saved: the time its kernel ran on the code the
  /// job replaces. Exit and finishOrCancel let a job run on for as long as it has been credited (at most
  /// MaxGraceSeconds) before they cancel it: by the rent-or-buy rule such a wait at most doubles what the code
  /// it replaces already cost, and the compute cache then holds the result for the program's next run. A program
  /// shorter than its kernels' optimized compiles otherwise ran their quick code on every run, never caching
  /// the optimized code (cuda-samples' alignedTypes: its last kernel at 1 GB/s instead of 11).
  void credit(const Handle &H, double Seconds);
  /// For each of Jobs: waits until it finishes or has been waited for as long as it was credited, cancels it
  /// then, and returns once every one has finished or stopped.
  void finishOrCancel(llvm::ArrayRef<Handle> Jobs);
  static constexpr double MaxGraceSeconds = 10;
  /// Blocks until the job (if any) has finished, stopped or been skipped.
  void wait(const Handle &H);
  /// True from the exit handler on: what is still to be freed then (a cancelled compile's IR, an unloaded
  /// module's) may be left to the end of the process instead.
  bool exiting() const;

  struct State;

private:
  BackgroundJobs() = default;
  void cancelAndWaitAll();
  /// finishOrCancel of the running jobs Mine selects, with S's lock held by L. Exit: a job cancelled also
  /// abandons what it built.
  void graceThenCancel(State &S, std::unique_lock<std::mutex> &L, const std::function<bool(const Job *)> &Mine,
                       bool Exit);
  /// Makes the calling thread, if it is the process's initial thread, wait for the jobs when it exits.
  void armExitWait();
  State &state() const;
};

} // namespace ptxforge::driver
