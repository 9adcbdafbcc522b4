// The dispatcher of region-split block functions whose cuts include warp collectives (codegen/lib/
// WarpRendezvous.cpp). After each loop over the block's threads every live thread waits at a cut: a barrier
// or a collective. This is the same moment the fiber scheduler reaches once no fiber can run, so releasing
// here what the fiber rendezvous would release gives the same results:
//   - the lanes of a warp waiting at collectives of one kind with one member mask (redux: one operation too),
//     as WarpCollectives.cpp keys its slots, are released together once every non-exited lane of that mask
//     waits among them; their outputs come from WarpCompute.h, the fiber mode's own code (matrix collectives:
//     the whole warp's, reading and writing each lane's fragment registers where its deposited address says);
//   - when no collective can complete and every live thread waits at a barrier, the barrier releases them all;
//   - anything else is a deadlock, reported as the fiber scheduler reports it.
// Loop cuts (codegen/lib/LoopCuts.h) come before all of that: while some live thread waits at one, only those
// threads run (in the generic loop, which finishes their loops), since a barrier or a collective is complete
// only once every thread that will reach it stopped there, and a thread in a loop may be on its way.
#include "Runtime.h"
#include "WarpCompute.h"

#include "ptxforge/codegen/RegionCuts.h"

#include <algorithm>
#include <string>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

/// The per-thread arrays the block function's collective cuts deposit inputs into and take outputs from
/// (absent ones are null: no cut of the kernel uses them, or no thread reads that result).
struct WarpIO {
  const uint64_t *Value;
  const uint32_t *B, *C, *Mask;
  uint32_t *Out, *Pred;
  const uint64_t *Buffer; ///< matrix collectives: the address of each thread's fragment registers
};

bool isMatrixCut(uint32_t Kind) { return Kind >= RCMma && Kind <= RCMmaBatch; }

/// Lanes meet in one rendezvous only at collectives of the same kind and member mask (ptxrt_redux's slots
/// also key on the operation, the matrix collectives' on their shape and types or matrix count): the key of a
/// waiting lane, 0 for a barrier. The member mask is its low 32 bits.
uint64_t meetingKey(const RegionCut &Cut, uint32_t Mask) {
  if (Cut.Kind == RCBarrier)
    return 0;
  uint32_t Site = Cut.Kind == RCRedux || isMatrixCut(Cut.Kind) ? Cut.Arg & 0xffffff : 0;
  return uint64_t(Cut.Kind) << 56 | uint64_t(Site) << 32 | Mask;
}

/// A completed matrix collective of warp W's lanes Group: the lanes' deposits gathered for the fiber mode's code.
void releaseMatrix(const RegionCut &Cut, const WarpIO &IO, uint32_t W, uint32_t Group) {
  const uint32_t Base = W * 32;
  MatrixLane Lanes[32];
  forLanes(Group, [&](uint32_t L) {
    Lanes[L] = {IO.Value ? IO.Value[Base + L] : 0, IO.Buffer ? IO.Buffer[Base + L] : 0, IO.B ? IO.B[Base + L] : 0};
  });
  uint32_t Results[32];
  computeMatrixCut(Cut.Kind, Cut.Arg, Group, Lanes, Results);
  if (Cut.Kind == RCMovmatrix && IO.Out)
    forLanes(Group, [&](uint32_t L) { IO.Out[Base + L] = Results[L]; });
}

/// Computes the outputs of one completed rendezvous of warp W's lanes Group (State points at its lane 0's state)
/// in place: one call for the warp, reading its lanes' inputs from the per-thread arrays and writing their
/// results there, each lane with its own cut's mode.
void release(const RegionCut *Cuts, const uint32_t *State, const WarpIO &IO, uint32_t W, uint32_t Group,
             uint32_t Lanes) {
  const RegionCut &Cut = Cuts[State[__builtin_ctz(Group)] & ~RegionBlocked];
  const uint32_t Base = W * 32;
  auto mode = [&](uint32_t L) { return Cuts[State[L] & ~RegionBlocked].Arg; };
  auto out = [&](uint32_t L, uint32_t R) {
    if (IO.Out)
      IO.Out[Base + L] = R;
  };
  auto outPred = [&](uint32_t L, uint32_t R, bool P) {
    out(L, R);
    if (IO.Pred)
      IO.Pred[Base + L] = P;
  };
  if (isMatrixCut(Cut.Kind)) // one mode for the group: the meeting key holds it
    return releaseMatrix(Cut, IO, W, Group);
  switch (Cut.Kind) {
  case RCWarpSync:
    return;
  case RCShfl:
    shflLanes(
        Group,
        [&](uint32_t L) {
          return ShflIn{IO.Value[Base + L], IO.B[Base + L], IO.C[Base + L], mode(L)};
        },
        outPred);
    return;
  case RCVote:
    voteLanes(
        Group, [&](uint32_t L) { return std::pair<bool, uint32_t>(IO.Value[Base + L] != 0, mode(L)); }, out);
    return;
  case RCMatchAny:
  case RCMatchAll: {
    uint64_t Copy[32] = {}; // a warp cut short by the block's end has no values past its last lane
    const uint64_t *Values = IO.Value + Base;
    if (Lanes < 32)
      Values = static_cast<const uint64_t *>(std::memcpy(Copy, Values, Lanes * sizeof(uint64_t)));
    matchLanes(Group, Cut.Kind == RCMatchAll, Values, outPred);
    return;
  }
  default: // redux
    reduxLanes(
        Group,
        [&](uint32_t L) { return std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(IO.Value[Base + L]), mode(L)); },
        out);
    return;
  }
}

/// Where warp W's lanes stand after a loop, and which of them a completed rendezvous released; Same: the state
/// of every live lane, ~0 when they differ.
struct WarpStops {
  uint32_t Live = 0, AtBarrier = 0, Released = 0, Same = ~0u;
};

/// Releases every complete rendezvous of warp W (Lanes lanes; State points at its lane 0's state).
WarpStops releaseWarp(const uint32_t *State, uint32_t W, uint32_t Lanes, const RegionCut *Cuts, const WarpIO &IO) {
  WarpStops R;
  // The common case first: every live lane waits at one collective whose member mask holds them all (a
  // converged warp, or the lanes of a partial mask with the others exited), released in one call.
  // Branch-free scans: a partial mask's lanes alternate between waiting and exited.
  // Kernels whose only warp-level cuts are lockstep points pass no mask array: their lanes meet as a whole warp.
  auto maskOf = [&](uint32_t L) { return IO.Mask ? IO.Mask[W * 32 + L] : ~0u; };
  // The live lanes' states and masks are all alike when their ANDs equal their ORs.
  uint32_t AndS = ~0u, OrS = 0, AndM = ~0u, OrM = 0;
  for (uint32_t L = 0; L < Lanes; ++L) {
    uint32_t S = State[L] & ~RegionBlocked;
    bool Live = S != 0;
    R.Live |= static_cast<uint32_t>(Live) << L;
    AndS &= Live ? S : ~0u, OrS |= Live ? S : 0;
    uint32_t M = maskOf(L);
    AndM &= Live ? M : ~0u, OrM |= Live ? M : 0;
  }
  if (!R.Live)
    return R;
  if (AndS == OrS && AndM == OrM) {
    R.Same = OrS;
    if (Cuts[OrS].Kind != RCBarrier && !(R.Live & ~OrM)) {
      release(Cuts, State, IO, W, R.Live, Lanes);
      R.Released = R.Live;
      return R;
    }
  }
  uint32_t Waiting = 0;
  uint64_t Key[32];
  for (uint32_t G = R.Live; G; G &= G - 1) {
    uint32_t L = static_cast<uint32_t>(__builtin_ctz(G)), S = State[L] & ~RegionBlocked;
    if (Cuts[S].Kind == RCBarrier) {
      R.AtBarrier |= 1u << L;
      continue;
    }
    // A lane outside its own member mask is undefined behaviour: it takes part, as in the fiber mode.
    Key[L] = meetingKey(Cuts[S], maskOf(L) | 1u << L);
    Waiting |= 1u << L;
  }
  while (Waiting) {
    uint32_t Lead = static_cast<uint32_t>(__builtin_ctz(Waiting)), Group = 0;
    for (uint32_t G = Waiting; G; G &= G - 1)
      if (Key[__builtin_ctz(G)] == Key[Lead])
        Group |= 1u << __builtin_ctz(G);
    Waiting &= ~Group;
    uint32_t Need = static_cast<uint32_t>(Key[Lead]) & R.Live;
    if ((Group & Need) != Need)
      continue;
    release(Cuts, State, IO, W, Group, Lanes);
    R.Released |= Group;
  }
  return R;
}

[[noreturn]] void deadlock(ThreadContext *C, uint32_t Waiting) {
  BlockState &B = blockOf(C);
  uint64_t Block = C->Ctaid[0] + uint64_t(C->Nctaid[0]) * (C->Ctaid[1] + uint64_t(C->Nctaid[1]) * C->Ctaid[2]);
  B.Trapped = true;
  if (B.Error.empty()) {
    B.Error = "barrier deadlock in block " + std::to_string(Block) + ": " + std::to_string(Waiting) +
              " thread(s) wait at a barrier or warp collective that the others never reach";
    B.Fault = LaunchFault::Deadlock;
  }
  std::longjmp(B.ExitPoints[0].Buf, 1);
}

/// What the dispatchers of kernels with loop cuts decide before looking at barriers and collectives.
enum : uint32_t { NotLoops = ~1u };

/// Clears the threads' RegionBlocked marks (the caller sets its own). Returns the common state when every
/// thread stopped at the same loop cut (its region's loop runs next, vectorized); ~0 when some live thread
/// waits at a loop cut, after marking the others RegionBlocked so that the generic loop runs only those;
/// NotLoops when no thread waits at a loop cut. It runs after passes of cut loops whose threads part ways, and
/// at every release of a collective kernel: warps that have exited are skipped after one pass over their states,
/// and LiveWarps (bit W: warp W has a live thread) tells the caller which they are.
/// Threads below Begin (a multiple of 32) have exited.
uint32_t releaseLoops(uint32_t *State, uint32_t Begin, uint32_t N, const RegionCut *Cuts, uint32_t &LiveWarps) {
  uint32_t First = State[Begin] & ~RegionBlocked, Diff = 0, AtLoop = 0;
  LiveWarps = 0;
  for (uint32_t W0 = Begin; W0 < N; W0 += 32) {
    uint32_t *S = State + W0, Lanes = std::min<uint32_t>(32, N - W0), Any = 0;
    for (uint32_t L = 0; L < Lanes; ++L) {
      S[L] &= ~RegionBlocked;
      Any |= S[L];
    }
    // A warp that has exited (a reduction's tail, where only warp 0 goes on) costs no look at the cut table.
    if (!Any) {
      Diff |= First;
      AtLoop |= Cuts[0].Kind == RCLoop;
      continue;
    }
    LiveWarps |= 1u << (W0 / 32);
    // One look at the cut table for a warp whose live lanes wait at one cut (X; exited lanes at 0).
    uint32_t X = 0, Others = 0, Exited = 0;
    for (uint32_t L = 0; L < Lanes; ++L)
      X = S[L] ? S[L] : X;
    for (uint32_t L = 0; L < Lanes; ++L) {
      Diff |= S[L] ^ First;
      Others |= static_cast<uint32_t>(S[L] != 0 && S[L] != X);
      Exited |= static_cast<uint32_t>(S[L] == 0);
    }
    if (!Others)
      AtLoop |= Cuts[X].Kind == RCLoop || (Exited && Cuts[0].Kind == RCLoop);
    else
      for (uint32_t L = 0; L < Lanes; ++L)
        AtLoop |= Cuts[S[L]].Kind == RCLoop;
  }
  if (!AtLoop)
    return NotLoops;
  if (!Diff)
    return First;
  for (uint32_t T = Begin; T < N; ++T)
    if (State[T] && Cuts[State[T]].Kind != RCLoop)
      State[T] |= RegionBlocked;
  return ~0u;
}

bool oneDimensional(const ThreadContext *C) { return C->Ntid[1] == 1 && C->Ntid[2] == 1; }

/// When the live threads in [Begin, End) that wait at a loop cut all wait at one and are one run, every other
/// live thread waiting at the barrier (Parked), narrows the covered span (Span words 0-1) to that run and
/// returns the cut's region; 0 otherwise. A reduction's warp-synchronous tail (warp 0 stepping through lockstep
/// points after the other warps exited) then runs in region loops, not in the generic loop, and so do the
/// threads of a tree step (`if (tid < d)` with lockstep points inside) while the others wait at the barrier.
uint32_t sameLoopCutRun(uint32_t *State, uint32_t Begin, uint32_t End, const RegionCut *Cuts, uint32_t *Span,
                        bool &Parked) {
  uint32_t Same = 0, First = End, Last = 0;
  Parked = false;
  for (uint32_t T = Begin; T < End; ++T) {
    uint32_t S = State[T] & ~RegionBlocked;
    if (!S)
      continue;
    if (Cuts[S].Kind == RCBarrier) {
      Parked = true;
      continue;
    }
    if ((Same && S != Same) || (First != End && T != Last + 1))
      return 0;
    Same = S;
    First = std::min(First, T);
    Last = T;
  }
  if (!Same || Cuts[Same].Kind != RCLoop)
    return 0;
  for (uint32_t T = First; T <= Last; ++T)
    State[T] = Same;
  Span[0] = First;
  Span[1] = Last + 1;
  return Same;
}

/// The rounds of a one-dimensional block's tree steps (`if (tid < d) { ... }` between barriers, with loop cuts
/// or lockstep points inside) in one pass over the live span [Span[2], Span[3]), for kernels whose threads wait
/// only at barriers and loop cuts there: the threads at one loop cut, one run of them, go on while the others
/// wait at the barrier (the covered span becomes the run), or, with no thread at a loop cut, every live thread
/// waits at one barrier instruction and the barrier releases them all. The general path (releaseLoops, then
/// the warps one by one) takes eight passes over the states with a look at the cut table for each lane, for
/// the same answer. Returns the region the covered threads enter, 0 when every thread exited, or ~0 when the
/// threads stand otherwise (a collective, threads at several loop cuts or barrier instructions, a broken run),
/// for the general path to decide (it clears the RegionBlocked marks this pass may have left).
uint32_t releaseTreeStep(uint32_t *State, uint32_t *Span, const RegionCut *Cuts) {
  const uint32_t Begin = Span[2], End = Span[3];
  uint32_t Loop = 0, LoopFirst = End, LoopLast = 0, LoopCount = 0;
  uint32_t Barrier = 0, LiveFirst = End, LiveLast = 0, LiveCount = 0;
  bool Mixed = false; // threads at two loop cuts or two barrier instructions
  for (uint32_t T = Begin; T < End; ++T) {
    uint32_t S = State[T] & ~RegionBlocked;
    State[T] = S;
    if (!S)
      continue;
    LiveFirst = std::min(LiveFirst, T), LiveLast = T, ++LiveCount;
    uint32_t K = Cuts[S].Kind;
    if (K == RCLoop) {
      Mixed |= Loop && Loop != S;
      Loop = S, LoopFirst = std::min(LoopFirst, T), LoopLast = T, ++LoopCount;
    } else if (K == RCBarrier) {
      Mixed |= Barrier && Barrier != S;
      Barrier = S;
    } else {
      return ~0u; // a collective: the warps decide
    }
  }
  if (!LiveCount) {
    Span[0] = Span[1] = Span[2] = Span[3] = Begin;
    return 0;
  }
  if (Mixed)
    return ~0u;
  if (Loop) {
    if (LoopLast - LoopFirst + 1 != LoopCount)
      return ~0u;
    Span[0] = LoopFirst, Span[1] = LoopLast + 1;
    if (LoopCount == LiveCount) // nobody parked: the run is every live thread
      Span[2] = Span[0], Span[3] = Span[1];
    return Loop;
  }
  // Every live thread waits at one barrier instruction: all of them enter the region after it, as one run.
  if (LiveLast - LiveFirst + 1 != LiveCount)
    return ~0u;
  Span[0] = Span[2] = LiveFirst, Span[1] = Span[3] = LiveLast + 1;
  return Barrier;
}

} // namespace

extern "C" {

/// ptxrt_region_next (Sync.cpp) for kernels with loop cuts, whose other cuts are barriers: Cuts says which.
static uint32_t ptxrt_region_next_loops(ThreadContext *, uint32_t *State, uint32_t N, const RegionCut *Cuts) {
  uint32_t LiveWarps;
  uint32_t R = releaseLoops(State, 0, N, Cuts, LiveWarps);
  if (R != NotLoops)
    return R;
  uint32_t First = State[0], Diff = 0;
  for (uint32_t T = 1; T < N; ++T)
    Diff |= State[T] ^ First;
  return Diff ? ~0u : First;
}

/// After a loop over the block's N threads (State[t]: 0 exited, K waiting to enter region K, Cuts[K] saying
/// at what): releases what can go on and marks the others RegionBlocked. Returns 0 when every thread exited,
/// K when every live thread was released into region K and the live threads are the whole block or, in a
/// one-dimensional block, a run of it, ~0 otherwise (the generic loop runs the released threads). Span:
/// {first, end} of the threads the next region loop covers, then {first, end} of the live threads (threads
/// outside it have exited), both of which it narrows. K also when, in a one-dimensional block, the threads
/// released are a run that all enter region K and every other live thread waits at the barrier: the covered
/// span is that run (a warp of warp sums goes through its shuffles alone, in region loops).
static uint32_t ptxrt_region_release(ThreadContext *C, uint32_t *State, uint32_t N, uint32_t *Span,
                                     const RegionCut *Cuts, const uint64_t *Value, const uint32_t *Bv,
                                     const uint32_t *Cv, const uint32_t *Mask, uint32_t *Out, uint32_t *Pred,
                                     const uint64_t *Buffer) {
  const bool OneD = oneDimensional(C);
  if (OneD)
    if (uint32_t R = releaseTreeStep(State, Span, Cuts); R != ~0u)
      return R;
  Span[0] = Span[2], Span[1] = Span[3]; // the covered threads were a part of the live ones at most
  uint32_t Begin = OneD ? Span[0] & ~31u : 0, End = OneD ? Span[1] : N;
  uint32_t LiveWarps;
  if (uint32_t R = releaseLoops(State, Begin, End, Cuts, LiveWarps); R != NotLoops) {
    bool Parked = false;
    if (uint32_t Run = R == ~0u && OneD ? sameLoopCutRun(State, Begin, End, Cuts, Span, Parked) : 0) {
      if (!Parked) // every live thread is in the run; with threads parked the live span stays
        Span[2] = Span[0], Span[3] = Span[1];
      return Run;
    }
    return R;
  }
  WarpIO IO{Value, Bv, Cv, Mask, Out, Pred, Buffer};
  uint32_t Live = 0, AtBarrier = 0, Released = 0, LiveFirst = End, LiveEnd = 0, Same = ~0u;
  bool Uniform = true;
  // The released threads alone: all entering one region (RunSame), as one run [RunFirst, RunEnd), while every
  // other live thread waits at the barrier (Parked).
  uint32_t RunFirst = End, RunEnd = 0, RunSame = ~0u;
  bool RunUniform = true, Parked = true;
  for (uint32_t W = Begin / 32; W * 32 < End; ++W) {
    if (!(LiveWarps >> W & 1)) // exited
      continue;
    uint32_t *WarpState = State + W * 32;
    uint32_t Lanes = std::min<uint32_t>(32, End - W * 32);
    WarpStops Stops = releaseWarp(WarpState, W, Lanes, Cuts, IO);
    Live += __builtin_popcount(Stops.Live);
    AtBarrier += __builtin_popcount(Stops.AtBarrier);
    Released += __builtin_popcount(Stops.Released);
    LiveFirst = std::min<uint32_t>(LiveFirst, W * 32 + __builtin_ctz(Stops.Live));
    LiveEnd = W * 32 + 32 - __builtin_clz(Stops.Live);
    Parked &= !(Stops.Live & ~Stops.Released & ~Stops.AtBarrier);
    if (Stops.Released) {
      RunFirst = std::min<uint32_t>(RunFirst, W * 32 + __builtin_ctz(Stops.Released));
      RunEnd = W * 32 + 32 - __builtin_clz(Stops.Released);
    }
    if (Stops.Same != ~0u && Stops.Released == Stops.Live) { // releaseLoops cleared the RegionBlocked marks
      Uniform &= Stops.Same == Same || Same == ~0u;
      Same = Stops.Same;
      RunUniform &= Stops.Same == RunSame || RunSame == ~0u;
      RunSame = Stops.Same;
      continue;
    }
    for (uint32_t G = Stops.Live; G; G &= G - 1) {
      uint32_t &S = WarpState[__builtin_ctz(G)];
      S &= ~RegionBlocked;
      Uniform &= S == Same || Same == ~0u;
      Same = S;
      if (!(Stops.Released >> __builtin_ctz(G) & 1)) {
        S |= RegionBlocked;
        continue;
      }
      RunUniform &= S == RunSame || RunSame == ~0u;
      RunSame = S;
    }
  }
  if (OneD && Live) // threads outside have exited
    Span[0] = Span[2] = LiveFirst, Span[1] = Span[3] = LiveEnd;
  if (OneD && Released && Released != Live && Parked && RunUniform && RunEnd - RunFirst == Released) {
    Span[0] = RunFirst, Span[1] = RunEnd;
    return RunSame;
  }
  if (!Live)
    return 0;
  if (!Released) {
    if (AtBarrier != Live)
      deadlock(C, Live);
    for (uint32_t T = Begin; T < End; ++T) // the barrier is complete: everybody goes on
      State[T] &= ~RegionBlocked;
    Released = Live;
  }
  if (!Uniform || Released != Live || LiveEnd - LiveFirst != Live)
    return ~0u;
  if (Live == N)
    return Same;
  return OneD ? Same : ~0u;
}
}

void ptxforge::codegen::exec::registerRegionHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_region_release), PTXRT_HELPER(ptxrt_region_next_loops)});
}
