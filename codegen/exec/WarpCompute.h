// Private to codegen/exec: the results of the value-exchanging warp collectives for the lanes in Participants.
// One definition serves the fiber rendezvous (WarpCollectives.cpp, inputs and outputs in a CollectiveSlot's
// rows) and the dispatcher of region-split block functions (RegionRendezvous.cpp, which reads and writes the
// block function's per-thread arrays in place, one call per warp), so both modes answer alike. Each takes
// In(L), lane L's inputs, and Out(L, result, predicate).
#pragma once

#include "Runtime.h"

namespace ptxforge::codegen::exec {

template <class F> inline void forLanes(uint32_t Mask, F &&Fn) {
  for (; Mask; Mask &= Mask - 1)
    Fn(static_cast<uint32_t>(__builtin_ctz(Mask)));
}

struct ShflIn {
  uint64_t Value;
  uint32_t B, C, Mode; ///< Mode: 0 up, 1 down, 2 bfly, 3 idx
};

/// shfl.sync: Out(L, the source lane's value, in range).
template <class InFn, class OutFn> inline void shflLanes(uint32_t Participants, InFn &&In, OutFn &&Out) {
  forLanes(Participants, [&](uint32_t L) {
    ShflIn I = In(L);
    uint32_t B = I.B & 31, Cl = I.C & 31, Seg = (I.C >> 8) & 31;
    int MaxLane = static_cast<int>((L & Seg) | (Cl & ~Seg)), MinLane = static_cast<int>(L & Seg);
    int J = 0;
    bool P = false;
    switch (I.Mode) {
    case 0:
      J = static_cast<int>(L) - static_cast<int>(B);
      P = J >= MaxLane;
      break;
    case 1:
      J = static_cast<int>(L + B);
      P = J <= MaxLane;
      break;
    case 2:
      J = static_cast<int>(L ^ B);
      P = J <= MaxLane;
      break;
    default:
      J = MinLane | static_cast<int>(B & ~Seg);
      P = J <= MaxLane;
      break;
    }
    if (!P)
      J = static_cast<int>(L);
    // A source lane outside the member mask (or exited) gives 0, as observed on sm_90.
    bool Source = J >= 0 && J < 32 && (Participants >> J & 1);
    Out(L, Source ? static_cast<uint32_t>(In(static_cast<uint32_t>(J)).Value) : 0u, P);
  });
}

/// vote.sync: In(L) = {predicate, mode: 0 all, 1 any, 2 uni, 3 ballot}; Out(L, result).
template <class InFn, class OutFn> inline void voteLanes(uint32_t Participants, InFn &&In, OutFn &&Out) {
  uint32_t Ballot = 0;
  forLanes(Participants, [&](uint32_t L) { Ballot |= static_cast<uint32_t>(In(L).first) << L; });
  forLanes(Participants, [&](uint32_t L) {
    switch (In(L).second) {
    case 0:
      Out(L, Ballot == Participants);
      break;
    case 1:
      Out(L, Ballot != 0);
      break;
    case 2:
      Out(L, Ballot == 0 || Ballot == Participants);
      break;
    default:
      Out(L, Ballot);
      break;
    }
  });
}

/// Bit J set where Values[J] == V, J < 32: vector compares where the CPU has them (WarpCollectives.cpp).
uint32_t equalLanes(const uint64_t *Values, uint64_t V);

/// match.any.sync / match.all.sync (All) over Values[L] (32 values, whatever those of other lanes than the
/// participants); Out(L, mask, predicate). Each group of equal values is found once, by one vector compare of
/// the warp's values (a lane per pair made match.any over 16M threads take 0.6 s, a scalar compare per lane
/// and group 0.48 s).
template <class OutFn> inline void matchLanes(uint32_t Participants, bool All, const uint64_t *Values, OutFn &&Out) {
  uint32_t GroupOf[32];
  for (uint32_t Left = Participants; Left;) {
    uint32_t Group = equalLanes(Values, Values[__builtin_ctz(Left)]) & Left;
    if (All) { // only whether the first group is everybody matters
      forLanes(Participants, [&](uint32_t L) {
        bool Same = Group == Participants;
        Out(L, Same ? Participants : 0u, Same);
      });
      return;
    }
    forLanes(Group, [&](uint32_t L) { GroupOf[L] = Group; });
    Left &= ~Group;
  }
  forLanes(Participants, [&](uint32_t L) { Out(L, GroupOf[L], false); });
}

/// redux.sync: Op 0 add, 1 min.u32, 2 max.u32, 3 min.s32, 4 max.s32, 5 and, 6 or, 7 xor over Value(L) (the
/// first participant's Op); Out(L, result).
template <class InFn, class OutFn> inline void reduxLanes(uint32_t Participants, InFn &&In, OutFn &&Out) {
  uint32_t First = static_cast<uint32_t>(__builtin_ctz(Participants));
  uint32_t Op = In(First).second, R = In(First).first;
  forLanes(Participants & ~(1u << First), [&](uint32_t L) {
    uint32_t V = In(L).first;
    switch (Op) {
    case 0:
      R += V;
      break;
    case 1:
      R = std::min(R, V);
      break;
    case 2:
      R = std::max(R, V);
      break;
    case 3:
      R = static_cast<uint32_t>(std::min(static_cast<int32_t>(R), static_cast<int32_t>(V)));
      break;
    case 4:
      R = static_cast<uint32_t>(std::max(static_cast<int32_t>(R), static_cast<int32_t>(V)));
      break;
    case 5:
      R &= V;
      break;
    case 6:
      R |= V;
      break;
    default:
      R ^= V;
      break;
    }
  });
  forLanes(Participants, [&](uint32_t L) { Out(L, R); });
}

// The fiber mode's slots: In {value, b, c, mode}, {pred, mode}, {value, all}, {value, op}; Out {result, pred}.
void computeShfl(CollectiveSlot &S);
void computeVote(CollectiveSlot &S);
void computeMatch(CollectiveSlot &S);
void computeRedux(CollectiveSlot &S);

/// A lane's deposits at a matrix collective cut of a region-split block function: Value (ldmatrix, stmatrix: the
/// row address; movmatrix: the register), Buffer (the address of its fragment registers, which the collective
/// reads and writes in place, laid out as the fiber helpers take them) and Counts (mma: the register counts).
struct MatrixLane {
  uint64_t Value, Buffer;
  uint32_t Counts;
};
/// The matrix collective Kind (RCMma, RCLdmatrix, RCStmatrix, RCMovmatrix of ptxforge/codegen/RegionCuts.h) with
/// mode Arg for the lanes in Participants (Lanes: the warp's 32), computed by the fiber mode's code
/// (WarpCollectives.cpp); movmatrix's results go to Out[L].
void computeMatrixCut(uint32_t Kind, uint32_t Arg, uint32_t Participants, const MatrixLane *Lanes, uint32_t *Out);

/// The dispatcher of region-split block functions with collective cuts (RegionRendezvous.cpp).
void registerRegionHelpers(HelperTable &T);

} // namespace ptxforge::codegen::exec
