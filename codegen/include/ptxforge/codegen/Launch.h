// Running a kernel of a CompiledModule over a grid: blocks in parallel on one worker per core, threads of a
// block in a loop (or as fibers when the kernel synchronises).
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Memcheck.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <vector>

namespace ptxforge::codegen {

class DeviceRuntime;

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return uint64_t(X) * Y * Z; }
};

/// Tiered JIT: a kernel's optimized block function, compiled in the background while launches run its quick
/// code (thread functions only). A launch of quick code moves to Block between blocks once it appears; while
/// Compiling, one of its workers (when it has several) leaves its core to the compiler, so that the optimized
/// code comes sooner.
/// The hot tier uses the same: a kernel already on its optimized block function moves to a hotter one (its
/// resume loops, KernelInfo::DeferredResumeLoops). Code: the module Block is in, for a fault's report; stored
/// before Block.
struct TierUp {
  std::atomic<BlockRangeFunction> Block{nullptr};
  std::atomic<const CompiledModule *> Code{nullptr};
  std::atomic<bool> Compiling{false};
};

/// What a kernel's JIT'd code counts for the driver's hot tier while it runs: the rounds of its generic loop in
/// which a resume loop the split left out would have run (KernelInfo::DeferredResumeLoops).
struct KernelProfile {
  std::atomic<uint64_t> ResumableRounds{0};
};

struct LaunchConfig {
  Dim3 Grid, Block;
  uint32_t DynamicSharedBytes = 0;
  unsigned Workers = 0; ///< 0: one per CPU of the affinity mask (affinityCpus)
  /// Whether the process's launch workers, when this launch starts them, are each pinned to one CPU of the
  /// affinity mask (WorkerPool.h). They live as long as the process, so the first launch that starts one decides.
  bool PinWorkers = true;
  /// Cooperative launches: a zeroed 8-byte grid-sync workspace (see ThreadContext::GridWorkspace).
  void *GridWorkspace = nullptr;
  /// How many blocks of this launch the device holds at once (occupancy x multiprocessors, as the occupancy API
  /// reports it; 0: unknown). A grid of a kernel that may spin (KernelInfo::MaySpin) no larger than this runs
  /// every block at once, so that blocks waiting for each other all make progress.
  uint64_t CoResidentBlocks = 0;
  /// Thread-block clusters: the launch's cluster shape; (0,0,0) takes the kernel's `.reqnctapercluster`, else
  /// every block is a cluster of its own. ExplicitCluster: a launch attribute gave the shape. The blocks of a
  /// cluster run at once, each on a worker of its own, with each other's shared memory in reach.
  Dim3 Cluster{0, 0, 0};
  bool ExplicitCluster = false;
  /// Tiered JIT: the kernel's optimized code on its way (see TierUp). Null: the code launched is all there is.
  const TierUp *Upgrade = nullptr;
  /// Where the launch's code counts what the hot tier reads (see KernelProfile); null: nowhere.
  KernelProfile *Profile = nullptr;
  /// The watchdog (PTXFORGE_LAUNCH_TIMEOUT at the edges): a launch still running after this many seconds is
  /// stopped and fails with LaunchFault::Timeout. 0: none. The kernel's code pays nothing (see LaunchWatchdog).
  double TimeoutSeconds = 0;
  /// Memcheck mode (code lowered with LoweringOptions::Memcheck): the memory the checks know of and the log they
  /// write to; both outlive the launch. Null: the checks pass everything and log nothing.
  const MemcheckMemory *Memcheck = nullptr;
  MemcheckLog *MemcheckFindings = nullptr;
  /// Dynamic parallelism: where the grid's threads' device-side launches, streams and errors go
  /// (DeviceRuntime.h); the launcher runs the launched grids after this one. Null: device-side launches fail
  /// with cudaErrorNotSupported.
  DeviceRuntime *Runtime = nullptr;
};

/// Why a launch failed; the driver maps each to the CUresult NVIDIA's driver gives.
enum class LaunchFault {
  InvalidConfiguration, ///< block/grid shape out of range
  IllegalAddress,       ///< a load or store outside mapped memory (SIGSEGV), incl. stack overflow
  MisalignedAddress,    ///< SIGBUS
  Trap,                 ///< `trap` / `brkpt`
  Deadlock,             ///< a barrier or collective that can never complete
  IllegalInstruction,   ///< e.g. `bar.sync` with a thread count that is not a multiple of 32
  Assert,               ///< a failed device `assert` (__assertfail)
  Timeout,              ///< ran longer than LaunchConfig::TimeoutSeconds
};

/// Where a kernel failed, as far as the launch can tell (the message says it in words).
struct FaultSite {
  bool HasAddress = false;
  uint64_t Address = 0; ///< the address a load or store faulted on
  bool HasBlock = false;
  uint32_t Block[3] = {};  ///< %ctaid of the failing block
  bool HasThread = false;  ///< false where the thread could not be told (see Replay)
  uint32_t Thread[3] = {}; ///< %tid of the failing thread
  /// The PTX file:line:col of the failing instruction, where known: a trap's own, a memory fault's from the line
  /// table of the code it faulted in (CompiledModule::sourceLocation).
  std::string Location;
  /// How a memory fault's thread was found in code that runs a block's threads as one (vectorized) loop, where
  /// one instruction stands for many threads: the block ran again thread by thread and faulted at the same
  /// address (and instruction) in the thread named (Found), or did not (NotReproduced: no thread is named).
  enum class ReplayResult { None, Found, NotReproduced } Replay = ReplayResult::None;
};

class LaunchError : public llvm::ErrorInfo<LaunchError> {
public:
  static char ID;
  LaunchError(LaunchFault Kind, std::string Message, FaultSite Site = {})
      : Kind(Kind), Message(std::move(Message)), Site(std::move(Site)) {}
  LaunchFault kind() const { return Kind; }
  const FaultSite &site() const { return Site; }
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override { return std::make_error_code(std::errc::interrupted); }

private:
  LaunchFault Kind;
  std::string Message;
  FaultSite Site;
};

/// The CPUs the calling thread may run on (its affinity mask: taskset, cgroup cpusets), in increasing order; empty
/// when the mask cannot be read. Launches take one worker per CPU of it by default.
std::vector<int> affinityCpus();

/// Runs K to completion. Params is the kernel's parameter buffer laid out as KernelInfo::Params says.
/// Failures are LaunchErrors; a faulting kernel never takes the process down (signal handlers on the workers
/// turn SIGSEGV/SIGBUS inside kernel code into IllegalAddress/MisalignedAddress).
llvm::Error launchKernel(const CompiledModule &M, const KernelInfo &K, const LaunchConfig &Config, const void *Params);

} // namespace ptxforge::codegen
