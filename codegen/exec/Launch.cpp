// Grid execution: one worker per core (WorkerPool.h) pulls blocks from an atomic counter; a block runs its
// threads in a plain loop, or as fibers (one per thread, switched at barriers and collectives) when the kernel
// synchronises.
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/codegen/FaultGuard.h"

#include "Cluster.h"
#include "LaunchStop.h"
#include "Memcheck.h"
#include "Profile.h"
#include "Runtime.h"
#include "WorkerPool.h"

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <thread>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;
namespace bctx = boost::context::detail;

char LaunchError::ID = 0;

namespace {
/// The failure flag of the launch the calling worker thread runs (LaunchStop.h); null outside a launch.
thread_local const std::atomic<bool> *WorkerLaunchFailed = nullptr;
/// What a block that ends because its launch failed says (never reported: the launch has its first failure).
constexpr const char *AbandonedBlock = "ended: another block of the launch failed";
} // namespace

bool ptxforge::codegen::exec::launchFailed() {
  const std::atomic<bool> *F = WorkerLaunchFailed;
  return F && F->load(std::memory_order_relaxed);
}

void ptxforge::codegen::exec::abandonBlock(ThreadContext *C) {
  raiseFault(C, LaunchFault::Trap, AbandonedBlock, true);
}

LaunchFailureScope::LaunchFailureScope(const std::atomic<bool> *Failed) : Outer(WorkerLaunchFailed) {
  WorkerLaunchFailed = Failed;
}

LaunchFailureScope::~LaunchFailureScope() { WorkerLaunchFailed = Outer; }

namespace {

constexpr size_t FiberStackBytes = 256 * 1024;

struct BlockResult {
  std::string Error;
  LaunchFault Fault = LaunchFault::Trap;
  FaultSite Site;
};

std::string dimText(const uint32_t *V) {
  return "(" + std::to_string(V[0]) + "," + std::to_string(V[1]) + "," + std::to_string(V[2]) + ")";
}

/// " in block (x,y,z), thread (x,y,z) at FILE:LINE:COL", as far as S knows.
std::string siteText(const FaultSite &S) {
  std::string T;
  if (S.HasBlock)
    T += " in block " + dimText(S.Block);
  if (S.HasThread)
    T += ", thread " + dimText(S.Thread);
  if (!S.Location.empty())
    T += " at " + S.Location;
  return T;
}

/// What a signal in kernel code means for the launch (SIGFPE and SIGILL are the lowering's mistakes: PTX
/// arithmetic never faults, but they must not take the process down either).
LaunchFault faultKind(const Fault &F) {
  switch (F.Signal) {
  case InterruptSignal:
    return LaunchFault::Timeout;
  case SIGBUS:
    return LaunchFault::MisalignedAddress;
  case SIGFPE:
  case SIGILL:
    return LaunchFault::IllegalInstruction;
  default:
    return LaunchFault::IllegalAddress;
  }
}

/// A signal in kernel code: what it means and where (the thread only where threads ran one by one, Thread
/// being the linear index of the one running).
BlockResult signalResult(const Fault &F, uint64_t BlockId, std::optional<uint32_t> Thread, const LaunchConfig &C) {
  BlockResult R;
  R.Fault = faultKind(F);
  FaultSite &S = R.Site;
  S.HasAddress = true;
  S.Address = F.Address;
  S.HasBlock = true;
  S.Block[0] = static_cast<uint32_t>(BlockId % C.Grid.X);
  S.Block[1] = static_cast<uint32_t>((BlockId / C.Grid.X) % C.Grid.Y);
  S.Block[2] = static_cast<uint32_t>(BlockId / (uint64_t(C.Grid.X) * C.Grid.Y));
  if (Thread) {
    S.HasThread = true;
    S.Thread[0] = *Thread % C.Block.X;
    S.Thread[1] = (*Thread / C.Block.X) % C.Block.Y;
    S.Thread[2] = *Thread / (C.Block.X * C.Block.Y);
  }
  if (F.Signal == InterruptSignal) {
    S.HasAddress = false;
    R.Error = "the launch timed out and was terminated (ran longer than " + std::to_string(C.TimeoutSeconds) +
              " s, PTXFORGE_LAUNCH_TIMEOUT)";
    return R;
  }
  const char *What = F.Signal == SIGBUS   ? "misaligned address"
                     : F.Signal == SIGFPE ? "arithmetic exception"
                     : F.Signal == SIGILL ? "illegal instruction"
                                          : "illegal address";
  char Buf[96];
  snprintf(Buf, sizeof Buf, "%s at address 0x%llx", What, static_cast<unsigned long long>(F.Address));
  R.Error = Buf;
  return R;
}

/// The launch watchdog. Kernel code is not instrumented: past the deadline a thread of the watchdog's own sends
/// each worker still running the launch InterruptSignal (FaultGuard.h), which abandons the worker's guarded call
/// when it lands in JIT-compiled code, and sends it again every millisecond while it lands elsewhere (a runtime
/// helper, which may hold a lock). A launch without a timeout starts no thread.
class LaunchWatchdog {
public:
  explicit LaunchWatchdog(double Seconds) {
    if (Seconds <= 0)
      return;
    installInterruptHandler();
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(Seconds));
    Timer = std::thread([this, Deadline] { watch(Deadline); });
  }
  ~LaunchWatchdog() {
    if (!Timer.joinable())
      return;
    {
      std::scoped_lock L(Lock);
      Ended = true;
    }
    Wake.notify_all();
    Timer.join();
  }
  /// The calling worker runs the launch until leave().
  void enter() {
    std::scoped_lock L(Lock);
    Running.push_back(pthread_self());
  }
  void leave() {
    std::scoped_lock L(Lock);
    Running.erase(std::find(Running.begin(), Running.end(), pthread_self()));
  }

private:
  void watch(std::chrono::steady_clock::time_point Deadline) {
    std::unique_lock L(Lock);
    if (Wake.wait_until(L, Deadline, [&] { return Ended; }))
      return;
    refreshCodeRanges();
    while (!Ended && !Running.empty()) {
      for (pthread_t T : Running)
        interruptGuardedCall(T);
      Wake.wait_for(L, std::chrono::milliseconds(1), [&] { return Ended; });
    }
  }

  std::mutex Lock;
  std::condition_variable Wake;
  std::vector<pthread_t> Running; ///< workers inside the launch's guarded calls
  bool Ended = false;
  std::thread Timer;
};

/// Fiber stacks with a guard page, reused across the blocks and launches a worker thread runs.
class StackPool {
public:
  ~StackPool() {
    for (void *S : Free)
      munmap(S, FiberStackBytes);
  }
  void *get() {
    if (!Free.empty()) {
      void *S = Free.back();
      Free.pop_back();
      return S;
    }
    void *S =
        mmap(nullptr, FiberStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (S == MAP_FAILED)
      return nullptr;
    mprotect(S, 4096, PROT_NONE);
    return S;
  }
  void put(void *S) {
    if (S)
      Free.push_back(S);
  }

private:
  std::vector<void *> Free;
};

/// A worker's shared memory. The block's window ends where an inaccessible reservation of 4 GiB begins, so an
/// access past the block's shared memory (any 32-bit offset past it) faults, CUDA_ERROR_ILLEGAL_ADDRESS as on
/// the GPU, instead of reading or writing whatever the worker's heap holds there. The reservation is address
/// space only (PROT_NONE, MAP_NORESERVE).
class SharedWindow {
public:
  SharedWindow() = default;
  SharedWindow(const SharedWindow &) = delete;
  SharedWindow &operator=(const SharedWindow &) = delete;
  ~SharedWindow() { release(); }

  /// The start of a window of Bytes (16-byte aligned) whose end is the guard; null when no memory is left.
  char *window(uint64_t Bytes) {
    uint64_t Rounded = (Bytes + 15) / 16 * 16;
    if (Rounded > Accessible && !map(Rounded))
      return nullptr;
    return Base + Accessible - Rounded;
  }

private:
  static constexpr uint64_t GuardBytes = uint64_t(1) << 32;

  bool map(uint64_t Bytes) {
    release();
    const uint64_t Page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    uint64_t Want = (Bytes + Page - 1) / Page * Page;
    void *P = mmap(nullptr, Want + GuardBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P == MAP_FAILED)
      return false;
    if (mprotect(P, Want, PROT_READ | PROT_WRITE) != 0) {
      munmap(P, Want + GuardBytes);
      return false;
    }
    Base = static_cast<char *>(P);
    Accessible = Want;
    return true;
  }
  void release() {
    if (Base)
      munmap(Base, Accessible + GuardBytes);
    Base = nullptr;
    Accessible = 0;
  }

  char *Base = nullptr;
  uint64_t Accessible = 0;
};

/// The calling worker thread's shared window: kept for the thread's life, so a launch pays no mapping calls (an
/// unmapping also interrupts every other thread of the process to flush its TLB).
SharedWindow &threadSharedWindow() {
  thread_local SharedWindow Window;
  return Window;
}

/// The calling worker thread's fiber stacks, kept for the thread's life like its shared window: a launch of
/// fiber blocks mapped and unmapped one stack per thread, which cost dynamic parallelism's many small grids
/// most of their time (cdpAdvancedQuicksort: 2/3 of it in mmap, munmap and their page faults).
StackPool &threadStackPool() {
  thread_local StackPool Pool;
  return Pool;
}

struct WorkerState {
  StackPool &Stacks = threadStackPool();
  /// The context a block range starts from; its %ctaid names the block being run.
  ThreadContext Template{};
  /// What the block ranges of this worker share (runBlockRange).
  BlockState Range;
  /// The linear index of the thread runBlock runs (volatile: read after a fault abandoned it).
  volatile uint32_t RunningThread = 0;
  /// The state of the blocks this worker runs thread by thread without fibers (runBlock), reused: a fresh one
  /// per block cost its vectors' allocations, most of a tiny block's time.
  BlockState Plain;
  /// The cluster of the block being run (Cluster.h); its Shared table is what ThreadContext::ClusterShared names.
  ClusterState Cluster;
  /// The launch's blocks not yet handed out, which clusterlaunchcontrol.try_cancel may take (BlockState).
  std::atomic<uint64_t> *Unstarted = nullptr;
  uint64_t GridBlocks = 0;
};

struct BlockRun {
  BlockState *Block;
  ThreadFunction Fn;
  const char *Params;
};

thread_local BlockRun *CurrentRun = nullptr;

void runThread(BlockState &B, ThreadFunction Fn, const char *Params, uint32_t T) {
  if (setjmp(B.ExitPoints[T].Buf) == 0)
    Fn(&B.Threads[T], Params);
  B.markExited(T);
}

void fiberEntry(bctx::transfer_t T) {
  BlockRun *Run = CurrentRun;
  BlockState &B = *Run->Block;
  B.SchedulerContext = T.fctx;
  uint32_t Me = B.Current;
  runThread(B, Run->Fn, Run->Params, Me);
  B.Fibers[Me].Done = true;
  bctx::jump_fcontext(B.SchedulerContext, nullptr);
}

/// What every thread of a launch shares in its context (launch shape, the worker's shared window, the block
/// state); the ids are the caller's. Grows the worker's shared window to the launch's size.
ThreadContext launchContext(const KernelInfo &K, const LaunchConfig &C, WorkerState &W, BlockState &B,
                            unsigned WorkerIndex, unsigned Workers) {
  uint64_t SharedBytes = K.StaticSharedBytes + C.DynamicSharedBytes;
  ThreadContext TC{};
  TC.Ntid[0] = C.Block.X, TC.Ntid[1] = C.Block.Y, TC.Ntid[2] = C.Block.Z;
  TC.Nctaid[0] = C.Grid.X, TC.Nctaid[1] = C.Grid.Y, TC.Nctaid[2] = C.Grid.Z;
  TC.NWarpId = static_cast<uint32_t>((C.Block.count() + 31) / 32);
  TC.DynamicSmemSize = C.DynamicSharedBytes;
  TC.Shared = threadSharedWindow().window(SharedBytes);
  TC.Block = &B;
  B.Unstarted = W.Unstarted;
  B.GridBlocks = W.GridBlocks;
  TC.SmId = WorkerIndex;
  TC.NSmId = Workers;
  TC.TotalSmemSize = static_cast<uint32_t>(SharedBytes);
  TC.GridWorkspace = reinterpret_cast<uint64_t>(C.GridWorkspace);
  TC.ClusterDim[0] = C.Cluster.X, TC.ClusterDim[1] = C.Cluster.Y, TC.ClusterDim[2] = C.Cluster.Z;
  TC.ClusterFlags = C.ExplicitCluster ? 1 : 0;
  W.Cluster.Shared[0] = TC.Shared;
  if (!W.Cluster.Group) // a cluster of its own: rank 0 is the block itself
    W.Cluster.Shared[1] = TC.Shared;
  TC.ClusterShared = W.Cluster.Shared;
  TC.Cluster = W.Cluster.Group ? &W.Cluster : nullptr;
  return TC;
}

/// The fast path for kernels without fibers (barrier-free block loops and region-split barrier kernels): one
/// call of the JIT'd block function runs a chunk of blocks; the block state holds only what trap needs, and a
/// trap abandons the rest of the chunk (the launch fails anyway, so a worker's state is reused only while no
/// block failed: set up once per worker and launch, not per chunk).
BlockResult runBlockRange(BlockRangeFunction BlockFn, const char *Params, uint64_t First, uint64_t Count,
                          WorkerState &W) {
  BlockState &B = W.Range;
  if (setjmp(B.ExitPoints[0].Buf) == 0)
    BlockFn(&W.Template, Params, First, Count);
  return {B.Error, B.Fault, B.Site};
}

/// Sets B up for block BlockId: one thread context per thread, each with its ids.
void beginBlock(const KernelInfo &K, const LaunchConfig &C, BlockState &B, uint64_t BlockId, WorkerState &W,
                unsigned WorkerIndex, unsigned Workers) {
  uint32_t N = static_cast<uint32_t>(C.Block.count());
  ThreadContext Common = launchContext(K, C, W, B, WorkerIndex, Workers);
  B.Threads.resize(N);
  B.ExitPoints.resize(N);
  B.Exited.assign(N, 0);
  B.Live = N;
  B.initWarps(N);
  if (C.MemcheckFindings)
    beginMemcheckBlock(C, B, N);
  uint32_t Cx = static_cast<uint32_t>(BlockId % C.Grid.X);
  uint32_t Cy = static_cast<uint32_t>((BlockId / C.Grid.X) % C.Grid.Y);
  uint32_t Cz = static_cast<uint32_t>(BlockId / (uint64_t(C.Grid.X) * C.Grid.Y));
  for (uint32_t T = 0; T < N; ++T) {
    ThreadContext &TC = B.Threads[T];
    TC = Common;
    TC.Tid[0] = T % C.Block.X;
    TC.Tid[1] = (T / C.Block.X) % C.Block.Y;
    TC.Tid[2] = T / (C.Block.X * C.Block.Y);
    TC.Ctaid[0] = Cx, TC.Ctaid[1] = Cy, TC.Ctaid[2] = Cz;
    TC.LaneId = T % 32;
    TC.WarpId = T / 32;
    TC.LinearTid = T;
  }
}

/// One round of the fiber scheduler: each live thread of B runs until it waits or ends, in thread order (a
/// completed barrier or collective restarts the round at the first thread it released). Says whether a thread
/// ended; Remaining counts the live ones.
bool runFiberRound(BlockState &B, BlockRun &Run, WorkerState &W, uint32_t &Remaining) {
  bool Finished = false;
  uint32_t N = static_cast<uint32_t>(B.Fibers.size());
  for (uint32_t T = 0; T < N; ++T) {
    if (B.Fibers[T].Done)
      continue;
    B.Current = T;
    W.RunningThread = T;
    CurrentRun = &Run;
    bctx::transfer_t R = bctx::jump_fcontext(B.Fibers[T].Context, nullptr);
    B.Fibers[T].Context = R.fctx;
    if (B.Fibers[T].Done) {
      --Remaining;
      Finished = true;
    }
    if (B.Trapped) // a fault ends the block: the other threads must not run on (they may wait for the dead one)
      return Finished;
    if (B.RestartFrom != UINT32_MAX) {
      uint32_t From = B.RestartFrom;
      B.RestartFrom = UINT32_MAX;
      if (From <= T)
        T = From - 1; // wraps for From == 0; the loop's ++T brings it back
    }
  }
  return Finished;
}

/// Gives B's fiber stacks back to W (the fibers of threads that did not end are dropped: their block ended), R.
BlockResult endFibers(BlockState &B, WorkerState &W, BlockResult R) {
  for (Fiber &F : B.Fibers)
    W.Stacks.put(F.Stack);
  CurrentRun = nullptr;
  return R;
}

/// Runs the threads of B (set up by beginBlock) as fibers, switched at barriers and collectives, until all have
/// ended or none can move on (a deadlock).
BlockResult runFibers(BlockState &B, ThreadFunction Fn, const char *Params, uint64_t BlockId, WorkerState &W) {
  uint32_t N = static_cast<uint32_t>(B.Threads.size());
  B.UseFibers = true;
  B.Fibers.resize(N);
  BlockRun Run{&B, Fn, Params};
  CurrentRun = &Run;
  for (uint32_t T = 0; T < N; ++T) {
    void *S = W.Stacks.get();
    if (!S)
      return endFibers(B, W, {"out of memory for thread stacks", LaunchFault::IllegalAddress, {}});
    B.Fibers[T].Stack = S;
    B.Fibers[T].Context =
        bctx::make_fcontext(static_cast<char *>(S) + FiberStackBytes, FiberStackBytes - 4096, fiberEntry);
  }
  uint32_t Remaining = N;
  std::string Error;
  // Rounds in a row in which the only thing that happened was mbarrier polls answering false: each such thread
  // moves on, so a few are progress, but threads that retry forever are deadlocked.
  constexpr unsigned MaxTimeoutRounds = 1024;
  unsigned TimeoutRounds = 0;
  while (Remaining && !B.Trapped) {
    uint64_t Before = B.Progress, SpinsBefore = B.SpinYields, TimeoutsBefore = B.WaitTimeouts;
    bool Finished = runFiberRound(B, Run, W, Remaining);
    bool Stalled = Remaining && !Finished && B.Progress == Before;
    if (Stalled && B.SpinYields != SpinsBefore) {
      // Every live thread spins or waits: what they wait for may come from another block, on another worker. That
      // block may have failed (LaunchStop.h): the launch has its error, and this block ends rather than wait for
      // ever.
      if (launchFailed())
        return endFibers(B, W, {AbandonedBlock, LaunchFault::Trap, {}});
      sched_yield();
      continue;
    }
    if (Stalled && B.WaitTimeouts != TimeoutsBefore && ++TimeoutRounds < MaxTimeoutRounds)
      continue;
    if (!Stalled)
      TimeoutRounds = 0;
    if (Stalled) {
      // A whole round in which nobody moved: every live thread waits for something that cannot happen.
      Error = "barrier deadlock in block " + std::to_string(BlockId) + ": " + std::to_string(Remaining) +
              " thread(s) wait at a barrier or warp collective that the others never reach";
      break;
    }
  }
  if (!Error.empty())
    return endFibers(B, W, {Error, LaunchFault::Deadlock, {}});
  return endFibers(B, W, {B.Error, B.Fault, B.Site});
}

/// Makes B (null: none) the running block of W's rank in its cluster group, where the peer of a tcgen05
/// .cta_group::2 pair finds its Tensor Memory (ClusterGroup::Running).
void publishBlock(WorkerState &W, BlockState *B) {
  ClusterGroup *G = W.Cluster.Group;
  if (!G)
    return;
  std::scoped_lock L(G->TmemLock);
  if (B) // what a peer allocated for the rank's previous block is not this block's
    G->PairAllocs[W.Cluster.Rank].clear();
  G->Running[W.Cluster.Rank].Block.store(B, std::memory_order_relaxed);
  G->Running[W.Cluster.Rank].Sequence.store(B ? W.Cluster.Sequence : ~0ull, std::memory_order_release);
}

/// Runs block BlockId thread by thread through the kernel's thread function: in a plain loop, or as fibers where
/// the kernel synchronises.
BlockResult runBlock(const KernelInfo &K, ThreadFunction Fn, const LaunchConfig &C, const char *Params,
                     uint64_t BlockId, WorkerState &W, unsigned WorkerIndex, unsigned Workers) {
  std::optional<BlockState> Fresh;
  BlockState &B = K.Synchronizes ? Fresh.emplace() : W.Plain;
  if (!K.Synchronizes) { // what a block without barriers or collectives changes in it
    B.Error.clear();
    B.Fault = LaunchFault::Trap;
    B.Trapped = false;
    B.Progress = 0;
  }
  beginBlock(K, C, B, BlockId, W, WorkerIndex, Workers);
  if (K.Synchronizes) {
    publishBlock(W, &B);
    BlockResult R = runFibers(B, Fn, Params, BlockId, W);
    publishBlock(W, nullptr);
    return R;
  }
  for (uint32_t T = 0; T < B.Threads.size(); ++T) {
    W.RunningThread = T;
    runThread(B, Fn, Params, T);
  }
  return {B.Error, B.Fault, B.Site};
}

/// How long a fault's replay (locateByReplay) may run: a block that ran into a fault once ends quickly in the
/// normal case; one whose replay takes other paths (its memory changed meanwhile) must not hang the report.
constexpr double ReplaySeconds = 10;

/// Names the thread of a memory fault F in optimized code, where one instruction stands for a warp or a whole
/// block of threads: runs block BlockId again thread by thread through the kernel's thread function (on fibers
/// where it synchronises), as quick code runs it. The thread named is the one whose access faults at the same
/// address, with the same signal and at the same PTX instruction as F (where F's line is known); anything else
/// (no fault, another address, a timeout) names no thread. The launch fails anyway and its error is sticky, so
/// what the replay writes to device memory is seen by nobody.
void locateByReplay(const CompiledModule &M, const KernelInfo &K, const LaunchConfig &C, const char *Params,
                    uint64_t BlockId, WorkerState &W, unsigned WorkerIndex, unsigned Workers, const Fault &F,
                    FaultSite &Site) {
  Site.Replay = FaultSite::ReplayResult::NotReproduced;
  LaunchWatchdog Watchdog(ReplaySeconds);
  Watchdog.enter();
  std::optional<Fault> Again = runWithFaultGuard(
      [&] { runBlock(K, M.entry(K), C, Params, BlockId, W, WorkerIndex, Workers); }, /*Install=*/false,
      /*Interruptible=*/true);
  Watchdog.leave();
  CurrentRun = nullptr;
  if (!Again || Again->Signal != F.Signal || Again->Address != F.Address)
    return;
  std::string Where = M.sourceLocation(Again->Pc);
  if (!Site.Location.empty() && Where != Site.Location)
    return;
  uint32_t T = W.RunningThread;
  Site.HasThread = true;
  Site.Thread[0] = T % C.Block.X;
  Site.Thread[1] = (T / C.Block.X) % C.Block.Y;
  Site.Thread[2] = T / (C.Block.X * C.Block.Y);
  Site.Location = Where;
  Site.Replay = FaultSite::ReplayResult::Found;
}

unsigned workerCount(const LaunchConfig &C, uint64_t Blocks) {
  unsigned N = C.Workers;
  if (!N) {
    // one worker per CPU the process may run on, as OpenMP counts them
    N = static_cast<unsigned>(affinityCpus().size());
    if (!N)
      N = std::max(1u, std::thread::hardware_concurrency());
  }
  return static_cast<unsigned>(std::min<uint64_t>(N, Blocks));
}

} // namespace

std::vector<int> ptxforge::codegen::affinityCpus() {
  std::vector<int> Cpus;
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof Set, &Set) == 0)
    for (int C = 0; C < CPU_SETSIZE; ++C)
      if (CPU_ISSET(C, &Set))
        Cpus.push_back(C);
  return Cpus;
}

namespace {

/// The launch's cluster shape: the one it names, else the kernel's .reqnctapercluster, else 1x1x1.
LaunchConfig withClusterShape(const KernelInfo &K, const LaunchConfig &Config) {
  LaunchConfig C = Config;
  if (!C.Cluster.X && K.ReqClusterDim[0]) {
    C.Cluster = {K.ReqClusterDim[0], std::max(1u, K.ReqClusterDim[1]), std::max(1u, K.ReqClusterDim[2])};
    C.ExplicitCluster = true;
  } else if (!C.Cluster.X) {
    C.Cluster = {1, 1, 1};
  }
  return C;
}

bool validClusterShape(const LaunchConfig &C) {
  const Dim3 &D = C.Cluster, &G = C.Grid;
  return D.X && D.Y && D.Z && D.count() < ClusterWindows && G.X % D.X == 0 && G.Y % D.Y == 0 && G.Z % D.Z == 0;
}

/// The linear block id of rank Rank of cluster Cl (both counted x first, as %cluster_ctarank and the clusters of
/// the grid are).
uint64_t clusterBlock(const LaunchConfig &C, uint64_t Cl, uint32_t Rank) {
  const Dim3 &D = C.Cluster, &G = C.Grid;
  uint64_t NX = G.X / D.X, NY = G.Y / D.Y;
  uint64_t X = Cl % NX * D.X + Rank % D.X, Y = Cl / NX % NY * D.Y + Rank / D.X % D.Y,
           Z = Cl / (NX * NY) * D.Z + Rank / (D.X * D.Y);
  return X + G.X * (Y + G.Y * Z);
}

/// Makes W rank Rank of group G: publishes the worker's shared window and waits until every worker of the group
/// has, so that each finds the others' windows (ThreadContext::ClusterShared) from its first block on.
void joinCluster(WorkerState &W, ClusterGroup &G, uint32_t Rank, uint64_t First, uint64_t Stride, const LaunchConfig &C,
                 uint64_t SharedBytes) {
  ClusterState &S = W.Cluster;
  S.Group = &G;
  S.Rank = Rank;
  S.First = First;
  S.Stride = Stride;
  S.WindowBytes = SharedBytes;
  S.ArrivePhase.assign(C.Block.count(), 0);
  G.Bases[Rank] = threadSharedWindow().window(SharedBytes);
  G.Published.fetch_add(1, std::memory_order_acq_rel);
  while (G.Published.load(std::memory_order_acquire) < G.Size)
    sched_yield();
  for (uint32_t R = 0; R < G.Size; ++R)
    S.Shared[1 + R] = G.Bases[R];
}

/// One launch of a grid: hands its blocks to the workers and keeps the first failure.
class GridRun {
public:
  GridRun(const CompiledModule &M, const KernelInfo &K, const LaunchConfig &C, const void *Params)
      : M(M), K(K), C(C), Params(static_cast<const char *>(Params)), Fn(M.entry(K)), BlockFn(M.blockEntry(K)),
        Blocks(C.Grid.count()), Workers(workerCount(C, Blocks)),
        // Blocks that may wait for each other run all at once, each on a worker of its own, as on a GPU that holds
        // them all: a cooperative grid, and a grid of a kernel that may spin (KernelInfo::MaySpin) that fits the
        // device's occupancy.
        AllResident(C.GridWorkspace || (K.MaySpin && C.CoResidentBlocks && Blocks <= C.CoResidentBlocks)),
        Watchdog(C.TimeoutSeconds), Watched(C.TimeoutSeconds > 0) {
    // The upgrade, where there is one, is the newer code: the optimized block function of quick code, or the hot
    // tier's of optimized code.
    if (BlockRangeFunction Late = lateBlockFunction())
      BlockFn = Late;
    if (AllResident)
      Workers = static_cast<unsigned>(Blocks);
    if (Clustered)
      makeClusterGroups();
  }

  /// Runs every block; the first failure.
  llvm::Error run() {
    runOnWorkers(
        Workers, [this](unsigned Index) { work(Index); }, C.PinWorkers);
    flushDevicePrintf();
    if (Failed) {
      std::string Text = "kernel '" + K.Name + "': " + First.Error + siteText(First.Site);
      return llvm::make_error<LaunchError>(First.Fault, Text, First.Site);
    }
    return llvm::Error::success();
  }

private:
  /// Clusters of several blocks run on groups of workers, one worker per rank (Cluster.h).
  void makeClusterGroups() {
    uint64_t N = AllResident ? Clusters : std::clamp<uint64_t>(Workers / ClusterSize, 1, Clusters);
    for (uint64_t G = 0; G < N; ++G) {
      Groups.push_back(std::make_unique<ClusterGroup>(ClusterSize));
      Groups.back()->Threads = static_cast<uint32_t>(ClusterSize * C.Block.count());
    }
    Workers = static_cast<unsigned>(N * ClusterSize);
  }

  /// The group's next cluster for W, W's rank of it.
  bool grabCluster(WorkerState &W, uint64_t &Id, uint64_t &Count) {
    ClusterState &S = W.Cluster;
    if (S.Running)
      S.Group->Finished[S.Rank].store(++S.Sequence, std::memory_order_release);
    uint64_t Cl = S.First + S.Sequence * S.Stride;
    S.Running = Cl < Clusters && Next.load(std::memory_order_relaxed) < Blocks;
    Id = S.Running ? clusterBlock(C, Cl, S.Rank) : 0, Count = 1;
    return S.Running;
  }

  /// The optimized block function, once the tiered JIT has made it.
  BlockRangeFunction lateBlockFunction() const {
    return C.Upgrade ? C.Upgrade->Block.load(std::memory_order_acquire) : nullptr;
  }

  /// The next blocks for a worker: Count blocks from Id. Block functions take blocks in guided chunks: each grab a
  /// quarter of the left blocks' share per worker. The first ones are long runs of consecutive blocks (a worker
  /// streams through its part of a vecadd as one loop would; with fixed chunks of 64 blocks the two workers' runs
  /// interleaved every 64 KiB, and saxpy at 2 threads took ~10% longer), the last ones single blocks so that
  /// workers finish together on a shared machine; a grid of tiny blocks pays the grab's atomic and the call a few
  /// dozen times, not per block.
  bool grab(WorkerState &W, bool Guided, uint64_t &Id, uint64_t &Count) {
    if (Clustered)
      return grabCluster(W, Id, Count);
    if (AllResident) { // each worker its own block: one that took two would run the second only after the first
      uint64_t Cur = Next.fetch_add(1, std::memory_order_relaxed);
      Id = Cur, Count = 1;
      return Cur < Blocks;
    }
    uint64_t Cur = Next.load(std::memory_order_relaxed);
    while (Cur < Blocks) {
      uint64_t N = Guided ? std::max<uint64_t>(1, (Blocks - Cur) / (uint64_t(Workers) * 4)) : 1;
      if (Next.compare_exchange_weak(Cur, Cur + N, std::memory_order_relaxed)) {
        Id = Cur, Count = N;
        return true;
      }
    }
    return false;
  }

  /// Records the launch's first failure and stops handing out blocks; says whether E is the first.
  bool fail(const BlockResult &E) {
    std::scoped_lock L(ErrorLock);
    bool IsFirst = !Failed.load(std::memory_order_relaxed);
    if (IsFirst)
      First = E;
    Next = Blocks;
    Failed = true; // after First: a block that sees it ends, and the launch reports First (LaunchStop.h)
    return IsFirst;
  }

  /// One worker: its blocks under one fault guard (its sigsetjmp saves the signal mask, a system call too costly
  /// per block), so that a fault abandons the block being run and ends the launch.
  void work(unsigned Index) {
    DeviceRuntimeScope Runtime(C.Runtime);
    ProfileScope Profile(C.Profile);
    LaunchFailureScope Failure(&Failed);
    WorkerState W;
    // try_cancel takes whole unstarted blocks from the counter grab hands out; not where a worker runs a cluster
    // group's fixed sequence, nor where every block must run at once (it may fail: the ISA allows either).
    if (!Clustered && !AllResident)
      W.Unstarted = &Next, W.GridBlocks = Blocks;
    if (Clustered)
      joinCluster(W, *Groups[Index / ClusterSize], Index % ClusterSize, Index / ClusterSize, Groups.size(), C,
                  K.StaticSharedBytes + C.DynamicSharedBytes);
    // This worker's code: quick code runs block by block until the optimized block function appears.
    BlockRangeFunction volatile MyBlockFn = nullptr; // volatile: read after a fault abandoned the loop
    volatile uint64_t Current = 0;
    if (Watched)
      Watchdog.enter();
    std::optional<Fault> F = runWithFaultGuard([&] { runBlocks(Index, W, MyBlockFn, Current); }, /*Install=*/false,
                                               /*Interruptible=*/Watched);
    if (Watched)
      Watchdog.leave();
    if (F) {
      // The abandoned block's state lived in the frames the fault unwound: a pair peer must not find it.
      publishBlock(W, nullptr);
      reportFault(*F, Index, W, MyBlockFn, Current);
    }
  }

  /// Prepares W to run blocks through the block function BF.
  void useBlockFunction(BlockRangeFunction BF, unsigned Index, WorkerState &W, BlockRangeFunction volatile &MyBlockFn) {
    MyBlockFn = BF;
    BlockState &B = W.Range;
    B.BlockLoop = true;
    B.ExitPoints.resize(1);
    B.Exited.assign(1, 0);
    B.Live = static_cast<uint32_t>(C.Block.count());
    std::fill(&B.Tallies[0][0], &B.Tallies[0][0] + std::size(B.Tallies) * std::size(B.Tallies[0]),
              BlockState::ReductionTally{}); // tagged by block, not by launch
    W.Template = launchContext(K, C, W, B, Index, Workers);
  }

  /// Runs the blocks worker Index grabs, noting in Current the one it runs.
  void runBlocks(unsigned Index, WorkerState &W, BlockRangeFunction volatile &MyBlockFn, volatile uint64_t &Current) {
    if (BlockFn)
      useBlockFunction(BlockFn, Index, W, MyBlockFn);
    // The last worker of a quick-code launch waits for the optimized code rather than compete with its compiler
    // for a core (a 2-core machine: sgemm's first launch 360 -> 300 ms, as without tiers). Not where every block
    // must run at once (AllResident): the others would wait for its block.
    if (!MyBlockFn && C.Upgrade && !AllResident && !Clustered && Workers > 1 && Index == Workers - 1) {
      while (!lateBlockFunction() && C.Upgrade->Compiling.load(std::memory_order_acquire) &&
             Next.load(std::memory_order_relaxed) < Blocks)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      if (BlockRangeFunction Late = lateBlockFunction())
        useBlockFunction(Late, Index, W, MyBlockFn);
    }
    for (uint64_t Id, Count; grab(W, MyBlockFn != nullptr, Id, Count);) {
      Current = Id;
      BlockResult E = MyBlockFn ? runBlockRange(MyBlockFn, Params, Id, Count, W)
                                : runBlock(K, Fn, C, Params, Id, W, Index, Workers);
      if (!MyBlockFn)
        if (BlockRangeFunction Late = lateBlockFunction())
          useBlockFunction(Late, Index, W, MyBlockFn);
      if (!E.Error.empty())
        fail(E);
    }
  }

  /// Fails the launch with the fault F that abandoned worker Index's block (Current, or the block function's
  /// %ctaid), naming the PTX instruction and, through a replay, the thread of a memory fault in optimized code.
  void reportFault(const Fault &F, unsigned Index, WorkerState &W, BlockRangeFunction MyBlockFn, uint64_t Current) {
    CurrentRun = nullptr;
    uint64_t Block = Current;
    std::optional<uint32_t> Thread;
    if (MyBlockFn) // the JIT'd block function keeps the template's %ctaid current
      Block = W.Template.Ctaid[0] + C.Grid.X * (W.Template.Ctaid[1] + uint64_t(C.Grid.Y) * W.Template.Ctaid[2]);
    else
      Thread = W.RunningThread;
    BlockResult R = signalResult(F, Block, Thread, C);
    if (F.Signal == SIGSEGV || F.Signal == SIGBUS) {
      R.Site.Location = M.sourceLocation(F.Pc);
      if (const CompiledModule *Late = C.Upgrade ? C.Upgrade->Code.load(std::memory_order_acquire) : nullptr;
          R.Site.Location.empty() && Late)
        R.Site.Location = Late->sourceLocation(F.Pc);
    }
    // The launch fails before the replay: the other workers stop, blocks waiting for this one (a cluster's, a
    // cooperative grid's) end instead of waiting for ever, and so does the replay at any wait for another block
    // (LaunchStop.h): it runs alone, and then names no thread.
    if (!fail(R) || !MyBlockFn || (F.Signal != SIGSEGV && F.Signal != SIGBUS))
      return;
    FaultSite Site = R.Site;
    locateByReplay(M, K, C, Params, Block, W, Index, Workers, F, Site);
    std::scoped_lock L(ErrorLock);
    First.Site = Site;
  }

  const CompiledModule &M;
  const KernelInfo &K;
  const LaunchConfig &C;
  const char *Params;
  ThreadFunction Fn;
  BlockRangeFunction BlockFn;
  uint64_t Blocks;
  unsigned Workers;
  const bool AllResident;
  const uint32_t ClusterSize = static_cast<uint32_t>(C.Cluster.count());
  const bool Clustered = ClusterSize > 1;
  const uint64_t Clusters = Blocks / ClusterSize;
  std::vector<std::unique_ptr<ClusterGroup>> Groups;
  std::atomic<bool> Failed{false};
  std::atomic<uint64_t> Next{0};
  std::mutex ErrorLock;
  BlockResult First; ///< the first failure, once Failed
  LaunchWatchdog Watchdog;
  const bool Watched;
};

} // namespace

llvm::Error ptxforge::codegen::launchKernel(const CompiledModule &M, const KernelInfo &K, const LaunchConfig &Config,
                                            const void *Params) {
  const LaunchConfig C = withClusterShape(K, Config);
  if (!C.Block.count() || C.Block.count() > MaxBlockThreads || C.Block.X > MaxBlockDim[0] ||
      C.Block.Y > MaxBlockDim[1] || C.Block.Z > MaxBlockDim[2] || !C.Grid.count() || !validClusterShape(C))
    return llvm::make_error<LaunchError>(LaunchFault::InvalidConfiguration, "invalid launch configuration");
  installFaultHandlers(); // once per launch: its workers' guarded calls skip the check
  return GridRun(M, K, C, Params).run();
}
