// Private runtime of the CPU execution model: block state (threads, fibers, barriers, warp rendezvous) and the
// table of helpers generated code calls (`ptxrt_*`, linked into JIT'd code by name).
#pragma once

#include "ptxforge/codegen/Launch.h"
#include "ptxforge/codegen/ThreadContext.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ptxforge::codegen::exec {

/// An f16 value, exactly (the compiler's _Float16 conversion is a libgcc call without F16C: most of a wmma's
/// time went there).
[[gnu::always_inline]] inline float halfToFloat(uint16_t H) {
  uint32_t Sign = static_cast<uint32_t>(H & 0x8000) << 16, Exp = (H >> 10) & 0x1f, Man = H & 0x3ff;
  if (Exp == 0) {
    float F = static_cast<float>(Man) * 0x1p-24f; // zero or subnormal
    return Sign ? -F : F;
  }
  uint32_t U = Exp == 0x1f ? Sign | 0x7f800000u | Man << 13 : Sign | (Exp + 112) << 23 | Man << 13;
  float F;
  memcpy(&F, &U, 4);
  return F;
}

/// A bf16 value, exactly.
[[gnu::always_inline]] inline float bf16ToFloat(uint16_t H) {
  uint32_t U = static_cast<uint32_t>(H) << 16;
  float F;
  memcpy(&F, &U, 4);
  return F;
}

/// An fp8 value: E4M3 (bias 7, no infinities, S.1111.111 the NaN) or E5M2 (bias 15, IEEE-like). mma operands are
/// finite by the ISA's rules, so the NaN encodings only need to decode to something.
[[gnu::always_inline]] inline double fp8ToDouble(uint32_t Bits, bool E5M2) {
  unsigned Man = E5M2 ? 2 : 3, Bias = E5M2 ? 15 : 7;
  unsigned E = (Bits & 0x7f) >> Man, M = Bits & ((1u << Man) - 1);
  double V = E ? std::ldexp(1.0 + std::ldexp(double(M), -int(Man)), int(E) - int(Bias))
               : std::ldexp(double(M), 1 - int(Bias) - int(Man));
  return (Bits & 0x80) ? -V : V;
}

/// Name -> address of every runtime helper.
const std::vector<std::pair<std::string, void *>> &runtimeHelpers();

/// Adds helpers to the table (each helper family registers itself from one function listed in Runtime.cpp).
using HelperTable = std::vector<std::pair<std::string, void *>>;
/// The table entry of helper NAME: the name the lowering calls it by (its C name) and its address.
#define PTXRT_HELPER(NAME) ::ptxforge::codegen::exec::HelperTable::value_type(#NAME, reinterpret_cast<void *>(&NAME))
void registerSyncHelpers(HelperTable &T);
void registerMathHelpers(HelperTable &T);
void registerHalfMathHelpers(HelperTable &T); ///< HalfMath.cpp, called from registerMathHelpers
void registerMiscHelpers(HelperTable &T);
void registerDeviceLibrary(HelperTable &T);
void registerDeviceRuntime(HelperTable &T); ///< DeviceRuntime.cpp (dynamic parallelism)
/// Makes R the device runtime of the grid the calling worker runs (null: none), until the scope ends.
class DeviceRuntimeScope {
public:
  explicit DeviceRuntimeScope(DeviceRuntime *R);
  ~DeviceRuntimeScope();
  DeviceRuntimeScope(const DeviceRuntimeScope &) = delete;
  DeviceRuntimeScope &operator=(const DeviceRuntimeScope &) = delete;

private:
  DeviceRuntime *Saved;
};
/// Writes the device printf output of the launch that just ended to stdout (DeviceLibrary.cpp).
void flushDevicePrintf();
void registerIntegerHelpers(HelperTable &T);
void registerWarpHelpers(HelperTable &T);      ///< WarpCollectives.cpp
void registerAsyncHelpers(HelperTable &T);     ///< AsyncHelpers.cpp (mbarrier, cp.async, atomics on f16/bf16)
void registerTextureHelpers(HelperTable &T);   ///< TextureHelpers.cpp (tex, tld4, txq, suld, sust, sured, suq)
void registerTensorMapHelpers(HelperTable &T); ///< TensorMapHelpers.cpp (cp.async.bulk.tensor, bulk reductions)
void registerWarpgroupHelpers(HelperTable &T); ///< WarpgroupHelpers.cpp (wgmma)
void registerClusterHelpers(HelperTable &T);   ///< ClusterHelpers.cpp (barrier.cluster, generic-address mapa)
/// SparseMatrixHelpers.cpp (mma.sp)
void registerSparseMatrixHelpers(HelperTable &T);
/// Rank Rank's shared window in the caller's cluster (outside a cluster launch, rank 0 is the caller's own);
/// null for a rank outside the cluster (ClusterHelpers.cpp).
char *clusterWindow(const ThreadContext *C, uint32_t Rank);
/// The shared window holding host address P: the caller's own or one of its cluster's; null for none.
char *sharedWindowOf(const ThreadContext *C, const char *P);
/// mbarrier.complete_tx of Tx bytes on the mbarrier at P, which may be another block's (AsyncHelpers.cpp).
void mbarCompleteTx(ThreadContext *C, uint64_t *P, uint32_t Tx);
/// One arrival on the mbarrier at P, which may be another block's (AsyncHelpers.cpp).
void mbarArrive(ThreadContext *C, uint64_t *P);

/// Ends the calling thread's block with Kind as the launch's fault (MiscHelpers.cpp). ThreadKnown: C's %tid
/// names the thread (a call from the thread's code); Location: the PTX instruction's file:line:col, if known.
[[noreturn]] void raiseFault(ThreadContext *C, LaunchFault Kind, std::string What, bool ThreadKnown,
                             const char *Location = nullptr);

struct Fiber {
  void *Context = nullptr; ///< boost fcontext of the suspended fiber
  void *Stack = nullptr;
  bool Done = false;
};

/// A named CTA barrier (`bar.sync`/`bar.arrive`/`bar.red`, ids 0..15). Arrivals are recorded per warp: a warp
/// whose non-exited lanes have all arrived counts with all of its lanes (exited lanes included), as on the GPU.
struct Barrier {
  uint32_t WarpArrived[32] = {};
  uint32_t Arrivals = 0; ///< threads arrived in the current phase
  uint32_t Expected = 0; ///< thread count of the current phase (0: all threads of the CTA)
  uint64_t Generation = 0;
  uint32_t Popc = 0; ///< bar.red: threads that arrived with a true predicate
  /// bar.red results of the last phases (index: generation & 3): {true predicates, arrivals}.
  uint32_t ResultPopc[4] = {}, ResultArrivals[4] = {};
};

/// Kinds of warp collectives (matching lanes meet only in a slot of the same kind and member mask).
enum CollectiveKind : uint32_t {
  CKShfl = 1,
  CKVote,
  CKMatchAny,
  CKMatchAll,
  CKRedux,
  CKActivemask,
  CKElect,
  CKWarpSync,
  CKLdmatrix,
  CKStmatrix,
  CKMma,
  CKWmma,
  CKMmaSp,   ///< mma.sp (SparseMatrixHelpers.cpp)
  CKMmaBatch ///< a run of mma/wmma products (ptxrt_mma_batch)
};

/// One warp collective in flight: lanes deposit their inputs, the first lane to see every required lane
/// (member mask minus exited lanes) arrived computes all lanes' outputs, and the slot is recycled once every
/// participant has taken its result. A lane racing ahead into the next collective gets a fresh slot.
struct CollectiveSlot {
  static constexpr unsigned MaxIn = 12, MaxOut = 4;
  bool InUse = false;
  bool Computed = false;
  uint32_t Kind = 0;
  uint32_t Mask = 0; ///< member mask (activemask: 0)
  uint32_t Site = 0; ///< activemask: the instruction's site id
  uint32_t Arrived = 0, Departed = 0, Participants = 0;
  uint64_t In[32][MaxIn];
  uint64_t Out[32][MaxOut];
};

/// A full-warp collective for helpers outside WarpCollectives.cpp: deposits this lane's In words, waits for the
/// warp's other live lanes at the same (Kind, Site), and has the first lane to see them all call
/// Compute(slot, Arg) once for every participant (results go wherever Compute writes them).
void warpCollective(ThreadContext *C, uint32_t Kind, uint32_t Site, const uint64_t *In, unsigned NIn,
                    void (*Compute)(CollectiveSlot &, void *), void *Arg);

struct WarpState {
  std::vector<std::unique_ptr<CollectiveSlot>> Slots;
};

/// What a parked thread waits for: Check(Arg) says whether it could continue now.
struct WaitState {
  bool Parked = false;
  uint32_t Kind = 0; ///< CollectiveKind of a warp collective, 0 otherwise
  bool (*Check)(void *) = nullptr;
  void *Arg = nullptr;
  const void *Slot = nullptr; ///< the CollectiveSlot a collective waits in
};

struct BlockState {
  std::vector<ThreadContext> Threads;
  struct ExitPoint {
    std::jmp_buf Buf;
  };
  std::vector<ExitPoint> ExitPoints; ///< where `exit` inside a callee unwinds to
  std::vector<uint8_t> Exited;
  uint32_t Live = 0; ///< threads not exited
  bool UseFibers = false;
  bool BlockLoop = false; ///< threads run inside one JIT'd loop: a trap unwinds the whole block
  std::vector<Fiber> Fibers;
  void *SchedulerContext = nullptr;
  uint32_t Current = 0;
  Barrier Barriers[16];
  std::vector<WarpState> Warps;
  std::vector<WaitState> Waits;    ///< per thread
  std::vector<uint32_t> LaneMasks; ///< per warp: lanes that exist
  std::vector<uint32_t> LiveMasks; ///< per warp: lanes that exist and have not exited
  uint64_t Progress = 0;           ///< bumped by every barrier release, exit and collective
  /// The launch's counter of blocks not yet handed to a worker, and the grid's block count: what
  /// clusterlaunchcontrol.try_cancel takes a block from (ClusterHelpers.cpp). Null where no block may be taken
  /// (cluster launches, and launches whose blocks all run at once).
  std::atomic<uint64_t> *Unstarted = nullptr;
  uint64_t GridBlocks = 0;
  /// The block's Tensor Memory (tcgen05, WarpgroupHelpers.cpp): 128 lanes of 512 32-bit columns, made at the
  /// first tcgen05.alloc; TmemUsed has a bit per allocated 32-column unit.
  std::unique_ptr<uint32_t[]> Tmem;
  uint32_t TmemUsed = 0;
  bool TmemRelinquished = false;
  /// Kernel-body bar.red with a constant barrier and no thread count (lower/WarpOps.cpp): each thread adds its
  /// predicate to a tally, passes an ordinary barrier and reads the tally, so that region-split kernels, which
  /// cut at barriers, take it too. A barrier's last two reductions are kept (the next but one starts only once
  /// every thread read the last), each tagged with its block and sequence number, since a block function's
  /// state serves a chunk of blocks.
  struct ReductionTally {
    uint64_t Block = ~uint64_t(0);
    uint32_t Seq = 0, Popc = 0, Arrivals = 0;
  };
  ReductionTally Tallies[16][2];
  /// Spin points passed (ptxrt_spin_point) and the yields they made: a round of the scheduler in which threads
  /// only spun is no deadlock, they may wait for another block.
  uint64_t SpinPoints = 0, SpinYields = 0;
  /// Rounds mbarrier test_wait/try_wait polls waited (each may answer false and move on): a round of only these
  /// is no deadlock yet, since the polling threads move on, but a long run of them is.
  uint64_t WaitTimeouts = 0;
  /// Set when a barrier or collective completes: the scheduler goes back to this thread so that the released
  /// threads run on in thread order (warp by warp, lanes in order), as close to the GPU's order as it gets.
  uint32_t RestartFrom = UINT32_MAX;
  bool Trapped = false;
  LaunchFault Fault = LaunchFault::Trap; ///< what Error means when set
  std::string Error;
  FaultSite Site; ///< where Error happened, as far as the helper that set it could tell

  /// Suspends the current thread's fiber (no-op without fibers: a lone thread cannot wait).
  void yield();
  /// Marks thread T exited and releases barriers that only waited for it.
  void markExited(uint32_t T);
  /// Releases barrier Only (all barriers when Only < 0) if its arrivals are complete.
  void releaseSatisfiedBarriers(int Only = -1);
  /// Sets up the per-warp lane masks for N threads.
  void initWarps(uint32_t N);
  /// Lanes of warp W that exist and have not exited.
  uint32_t liveLanes(uint32_t W) const { return W < LiveMasks.size() ? LiveMasks[W] : 0; }
  /// Lanes of warp W that exist.
  uint32_t warpLanes(uint32_t W) const { return W < LaneMasks.size() ? LaneMasks[W] : 0; }

  /// Parks thread T (yielding to the scheduler) until Cond() holds. Returns false when the block cannot wait
  /// (no fibers), with Error set.
  template <class F> bool waitUntil(uint32_t T, uint32_t Kind, F &&Cond, const void *Slot = nullptr) {
    if (Cond())
      return true;
    if (!UseFibers) {
      if (Error.empty())
        Error = "internal error: a thread waits outside the fiber execution mode";
      return false;
    }
    using FT = std::remove_reference_t<F>;
    Waits[T] = {true, Kind, [](void *P) -> bool { return (*static_cast<FT *>(P))(); }, &Cond, Slot};
    do
      yield();
    while (!Cond());
    Waits[T] = {};
    ++Progress;
    return true;
  }
  /// The thread that released a barrier or completed a collective lets the threads from First on (the
  /// released ones) run first: it yields once, marked runnable.
  void yieldToReleased(uint32_t T, uint32_t First) {
    if (!UseFibers)
      return;
    RestartFrom = std::min(RestartFrom, First);
    Waits[T] = {true, 0, [](void *) { return true; }, nullptr, nullptr};
    yield();
    Waits[T] = {};
  }
  /// Parks thread T for one scheduler round (polling waits: test_wait); Cond tells others whether it could
  /// continue.
  template <class F> void pollOnce(uint32_t T, F &&Cond) {
    if (!UseFibers)
      return;
    using FT = std::remove_reference_t<F>;
    Waits[T] = {true, 0, [](void *P) -> bool { return (*static_cast<FT *>(P))(); }, &Cond};
    yield();
    Waits[T] = {};
  }
};

/// The current thread's block (from its context).
inline BlockState &blockOf(ThreadContext *C) { return *C->Block; }

} // namespace ptxforge::codegen::exec
