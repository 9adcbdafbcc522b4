// Memcheck mode's checks (see ptxforge/codegen/Memcheck.h). Memcheck code runs a block's threads one at a time
// (no block functions), so a check knows its thread from the context, and the threads of a block run between two
// barriers one after the other on one worker thread: the per-block state below is that worker's alone.
//   memcheck:  an access outside its allocation (inside the page too), into a freed one, or outside the block's
//              shared memory. The access goes to a scratch buffer instead and the launch fails at its end
//              (CUDA_ERROR_LAUNCH_FAILED, as under compute-sanitizer).
//   initcheck: a global load of bytes nothing wrote; the launch goes on.
//   racecheck: two threads' accesses to a shared byte between the same two barriers, one a write; the launch goes
//              on. .volatile/.relaxed/.acquire/.release accesses are synchronisation and left out.
//   synccheck: a barrier that part of a warp waits at while the rest of it goes on (to another barrier
//              instruction, or past the barrier's place to its end: divergedAt); the launch fails.
#include "Memcheck.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdio>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

void MemcheckLog::report(std::string Text) {
  std::scoped_lock L(Lock);
  if (++Reports > PrintLimit) {
    ++Unprinted;
    return;
  }
  Pending += Text;
}

void MemcheckLog::hazard(const char *First, const char *FirstKind, const char *Second, const char *SecondKind) {
  std::scoped_lock L(Lock);
  ++Hazards[{First, FirstKind, Second, SecondKind}];
}

std::string MemcheckLog::take() {
  std::scoped_lock L(Lock);
  std::string Out = std::move(Pending);
  Pending.clear();
  for (auto &[Pair, Count] : Hazards) {
    auto [First, FirstKind, Second, SecondKind] = Pair;
    Out += std::string("========= Error: Race reported between ") + FirstKind + " access at " + First + "\n" +
           "=========     and " + SecondKind + " access at " + Second + " [" + std::to_string(Count) + " hazard" +
           (Count == 1 ? "" : "s") + "]\n=========\n";
    ++Races;
  }
  Hazards.clear();
  return Out;
}

unsigned MemcheckLog::errors() const {
  std::scoped_lock L(Lock);
  return Reports + Races + static_cast<unsigned>(Hazards.size());
}

std::string MemcheckLog::summary() const {
  unsigned N = errors();
  std::string S = "========= ERROR SUMMARY: " + std::to_string(N) + " error" + (N == 1 ? "" : "s") + "\n";
  std::scoped_lock L(Lock);
  if (Unprinted)
    S += "========= ERROR SUMMARY: " + std::to_string(Unprinted) + " error" + (Unprinted == 1 ? " was" : "s were") +
         " not printed\n";
  return S;
}

namespace {

enum AccessFlags : uint32_t { Store = 1, GlobalSpace = 2, SharedSpace = 4, Ordered = 8 };

/// Per shared byte: the last writer and reader of the current barrier interval.
struct ByteShadow {
  uint64_t WriteInterval = 0, ReadInterval = 0;
  uint32_t Writer = 0, Reader = 0;
  const char *WriteAt = nullptr, *ReadAt = nullptr;
};
constexpr uint32_t ManyReaders = UINT32_MAX;

struct BlockChecks {
  const MemcheckMemory *Memory = nullptr;
  MemcheckLog *Log = nullptr;
  BlockState *Block = nullptr;
  /// Barrier intervals, numbered on across the worker's blocks and launches so that the shadow never needs
  /// clearing: an entry of an older interval is stale.
  uint64_t Interval = 0;
  /// synccheck's count of bar.sync releases (numbered on likewise); racecheck's Interval also ends at the other
  /// synchronisations (ptxrt_mc_barrier's phase 2).
  uint64_t Epoch = 0;
  std::vector<ByteShadow> Shared;
  std::vector<uint64_t> ArrivedIn;     ///< per thread: the interval it last arrived at a barrier in
  std::vector<const char *> ArrivedAt; ///< per thread: that barrier instruction
  std::vector<uint64_t> WorkIn;        ///< per thread: the interval WorkDone counts accesses of
  std::vector<uint32_t> WorkDone;      ///< per thread: checked accesses in that interval
  std::vector<uint32_t> WorkArrived;   ///< per thread: its WorkDone when it arrived at its last barrier
  std::vector<uint64_t> WarpDiverged;  ///< per warp: an interval in which lanes reached different barriers
};

thread_local BlockChecks Checks;
alignas(64) thread_local char Scratch[64]; // the widest access: v4.b64, v8.b32

std::string hex(uint64_t V) { return "0x" + llvm::utohexstr(V, /*LowerCase=*/true); }

/// 1000 -> "1,000", as the sanitizer writes sizes.
std::string grouped(uint64_t V) {
  std::string D = std::to_string(V), Out;
  for (size_t I = 0; I < D.size(); ++I) {
    if (I && (D.size() - I) % 3 == 0)
      Out += ',';
    Out += D[I];
  }
  return Out;
}

std::string threadLine(const ThreadContext *C) {
  auto Dim = [](const uint32_t *V) {
    return "(" + std::to_string(V[0]) + "," + std::to_string(V[1]) + "," + std::to_string(V[2]) + ")";
  };
  return "=========     by thread " + Dim(C->Tid) + " in block " + Dim(C->Ctaid) + "\n";
}

/// Launch-failing findings end the launch with CUDA_ERROR_LAUNCH_FAILED once the block is done.
void failLaunch(const char *What) {
  BlockState *B = Checks.Block;
  if (B && B->Error.empty()) {
    B->Error = What;
    B->Fault = LaunchFault::Trap;
  }
}

/// The allocation nearest to Address (the one holding it, else the closer neighbour), if any.
const MemcheckAllocation *nearest(const MemcheckMemory &M, uint64_t Address) {
  auto It = std::upper_bound(M.Allocations.begin(), M.Allocations.end(), Address,
                             [](uint64_t A, const MemcheckAllocation &X) { return A < X.Base; });
  const MemcheckAllocation *After = It == M.Allocations.end() ? nullptr : &*It;
  const MemcheckAllocation *Before = It == M.Allocations.begin() ? nullptr : &*std::prev(It);
  if (!Before || (Before->Base + Before->Size <= Address && After &&
                  After->Base - Address < Address - (Before->Base + Before->Size) + 1))
    return After;
  return Before;
}

void invalidAccess(const ThreadContext *C, const char *Space, uint64_t Shown, uint32_t Bytes, uint32_t Flags,
                   const char *At, std::string Detail) {
  Checks.Log->report(std::string("========= Invalid ") + Space + " " + (Flags & Store ? "write" : "read") +
                     " of size " + std::to_string(Bytes) + " byte" + (Bytes == 1 ? "" : "s") + "\n=========     at " +
                     At + "\n" + threadLine(C) + "=========     Access to " + hex(Shown) + " is out of bounds\n" +
                     Detail + "=========\n");
  failLaunch("an invalid memory access (memcheck)");
}

/// A global access: false when it must not happen.
bool checkGlobal(const ThreadContext *C, uint64_t A, uint32_t Bytes, uint32_t Flags, const char *At) {
  const MemcheckMemory &M = *Checks.Memory;
  const MemcheckAllocation *N = nearest(M, A);
  if (N && N->contains(A, Bytes)) {
    if (!N->Initialized)
      return true;
    uint8_t *Init = N->Initialized + (A - N->Base);
    if (Flags & Store) {
      std::fill(Init, Init + Bytes, uint8_t(1));
    } else if (std::find(Init, Init + Bytes, uint8_t(0)) != Init + Bytes) {
      Checks.Log->report("========= Uninitialized __global__ memory read of size " + std::to_string(Bytes) + " byte" +
                         (Bytes == 1 ? "" : "s") + "\n=========     at " + At + "\n" + threadLine(C) +
                         "=========     Address " + hex(A) + "\n=========\n");
      std::fill(Init, Init + Bytes, uint8_t(1)); // one report per location, as the sanitizer gives
    }
    return true;
  }
  bool InArena = A >= M.ArenaBegin && A < M.ArenaEnd;
  bool InLastPage = N && A >= N->Base && A < ((N->Base + N->Size + 4095) & ~uint64_t(4095));
  if (!InArena && !InLastPage)
    return true; // not memory memcheck knows: the page guard has the last word
  std::string Detail;
  if (N) {
    uint64_t End = N->Base + N->Size;
    std::string Of = " the nearest allocation at " + hex(N->Base) + " of size " + grouped(N->Size) + " bytes\n";
    if (A >= End || A + Bytes > End)
      Detail = "=========     and is " + std::to_string(std::max(A, End) - End + 1) + " bytes after" + Of;
    else
      Detail = "=========     and is " + std::to_string(N->Base - A) + " bytes before" + Of;
  }
  invalidAccess(C, "__global__", A, Bytes, Flags, At, std::move(Detail));
  return false;
}

void checkRace(const ThreadContext *C, uint64_t Offset, uint32_t Bytes, uint32_t Flags, const char *At) {
  if (Checks.Shared.size() < C->TotalSmemSize)
    Checks.Shared.resize(C->TotalSmemSize);
  uint32_t T = C->LinearTid;
  uint64_t I = Checks.Interval;
  for (uint64_t K = Offset; K < Offset + Bytes; ++K) {
    ByteShadow &S = Checks.Shared[K];
    bool Written = S.WriteInterval == I && S.Writer != T;
    if (Flags & Store) {
      if (Written)
        Checks.Log->hazard(S.WriteAt, "Write", At, "Write");
      else if (S.ReadInterval == I && S.Reader != T)
        Checks.Log->hazard(At, "Write", S.ReadAt, "Read");
      S.WriteInterval = I, S.Writer = T, S.WriteAt = At;
    } else {
      if (Written)
        Checks.Log->hazard(S.WriteAt, "Write", At, "Read");
      S.Reader = S.ReadInterval == I && S.Reader != T ? ManyReaders : T;
      S.ReadInterval = I, S.ReadAt = At;
    }
  }
}

/// synccheck counts each thread's accesses per barrier interval (see divergedAt).
void noteWork(const ThreadContext *C) {
  uint32_t T = C->LinearTid;
  if (T >= Checks.WorkIn.size())
    return;
  if (Checks.WorkIn[T] != Checks.Epoch)
    Checks.WorkIn[T] = Checks.Epoch, Checks.WorkDone[T] = 0;
  ++Checks.WorkDone[T];
}

/// Whether thread T's warp split at the barrier T arrived at in interval I: its lanes reached different barrier
/// instructions, or a lane exited in I after doing more than T did before the barrier (it went on past where T
/// waits: threads run one at a time here, so a lane's doing work while another waits is no sign by itself, and
/// a lane that exits early, before the barrier, is no divergence on sm_70 and later).
bool divergedAt(uint32_t T, uint64_t I) {
  uint32_t W = T / 32;
  if (Checks.WarpDiverged[W] == I)
    return true;
  const std::vector<uint8_t> &Exited = Checks.Block->Exited;
  uint32_t Last = std::min<uint32_t>(W * 32 + 32, static_cast<uint32_t>(Checks.ArrivedIn.size()));
  for (uint32_t L = W * 32; L < Last; ++L)
    if (Checks.ArrivedIn[L] != I && L < Exited.size() && Exited[L] && Checks.WorkIn[L] == I &&
        Checks.WorkDone[L] > Checks.WorkArrived[T])
      return true;
  return false;
}

extern "C" {

/// Checks one access; returns the address to use (Address, or a scratch buffer for one that must not happen).
static uint64_t ptxrt_mc_access(ThreadContext *C, uint64_t Address, uint32_t Bytes, uint32_t Flags, const char *At) {
  if (!Checks.Log)
    return Address;
  noteWork(C);
  uint64_t Shared = reinterpret_cast<uint64_t>(C->Shared);
  bool InShared = Address >= Shared && Address < Shared + C->TotalSmemSize;
  if ((Flags & SharedSpace) || (!(Flags & GlobalSpace) && InShared)) {
    if (!InShared || Address + Bytes > Shared + C->TotalSmemSize) {
      invalidAccess(C, "__shared__", Address - Shared, Bytes, Flags, At, "");
      return reinterpret_cast<uint64_t>(Scratch);
    }
    if (!(Flags & Ordered))
      checkRace(C, Address - Shared, Bytes, Flags, At);
    return Address;
  }
  return checkGlobal(C, Address, Bytes, Flags, At) ? Address : reinterpret_cast<uint64_t>(Scratch);
}

/// Phase 0: thread C arrives at the barrier instruction At; 1: the barrier released it; 2: C passed another kind
/// of synchronisation, which ends the racecheck interval.
static void ptxrt_mc_barrier(ThreadContext *C, const char *At, uint32_t Phase) {
  if (!Checks.Log)
    return;
  uint32_t T = C->LinearTid, W = T / 32;
  if (Phase == 0) {
    uint32_t First = W * 32, Last = std::min<uint32_t>(First + 32, static_cast<uint32_t>(Checks.ArrivedIn.size()));
    for (uint32_t L = First; L < Last; ++L)
      if (L != T && Checks.ArrivedIn[L] == Checks.Epoch && Checks.ArrivedAt[L] != At)
        Checks.WarpDiverged[W] = Checks.Epoch;
    Checks.ArrivedIn[T] = Checks.Epoch;
    Checks.ArrivedAt[T] = At;
    Checks.WorkArrived[T] = Checks.WorkIn[T] == Checks.Epoch ? Checks.WorkDone[T] : 0;
    return;
  }
  if (Phase == 2) { // another kind of synchronisation (FunctionLowering.cpp, synchronizesOtherwise)
    ++Checks.Interval;
    return;
  }
  uint64_t Arrived = Checks.ArrivedIn[T];
  if (divergedAt(T, Arrived)) {
    Checks.Log->report("========= Barrier error detected. Divergent thread(s) in warp.\n=========     at " +
                       std::string(At) + "\n" + threadLine(C) + "=========\n");
    failLaunch("a barrier error (memcheck)");
  }
  if (Arrived == Checks.Epoch) {
    ++Checks.Epoch; // the first thread the barrier released opens the next interval
    ++Checks.Interval;
  }
}

} // extern "C"

} // namespace

void exec::beginMemcheckBlock(const LaunchConfig &C, BlockState &B, uint32_t Threads) {
  Checks.Memory = C.Memcheck;
  Checks.Log = C.Memcheck ? C.MemcheckFindings : nullptr;
  Checks.Block = &B;
  ++Checks.Interval;
  ++Checks.Epoch;
  uint32_t Warps = (Threads + 31) / 32;
  Checks.ArrivedIn.assign(Threads, 0);
  Checks.ArrivedAt.assign(Threads, nullptr);
  Checks.WorkIn.assign(Threads, 0);
  Checks.WorkDone.assign(Threads, 0);
  Checks.WorkArrived.assign(Threads, 0);
  Checks.WarpDiverged.assign(Warps, 0);
}

void exec::registerMemcheckHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_mc_access), PTXRT_HELPER(ptxrt_mc_barrier)});
}
