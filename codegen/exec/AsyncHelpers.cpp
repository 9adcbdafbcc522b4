// Asynchronous copies and the barriers that track them, plus f16/bf16 atomics.
//
// * mbarrier: the 64-bit object in (shared) memory holds the whole state, so no side table is needed; each
//   change is one compare-and-swap of it, since a block of a cluster may arrive on another block's barrier from
//   another worker (.shared::cluster): bits 0-19 pending arrivals, 20-39 expected
//   arrivals, 40-60 transaction count (signed), 61-63 phase. The state token `arrive` returns is the phase
//   (bits 61-63) and the pending count before the arrival (bits 0-19), which mbarrier.pending_count gives on
//   an H100 (conformance case mbarrier/forms_per_thread).
// * cp.async / cp.async.bulk copy immediately, which is a legal schedule: commit/wait groups are no-ops and a
//   bulk copy completes its transaction bytes on the mbarrier at once.
#include "Runtime.h"

#include "llvm/ADT/bit.h"

#include <cmath>
#include <cstring>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

struct Mbar {
  uint32_t Pending, Expected, Phase;
  int32_t Tx;
};

Mbar decode(uint64_t V) {
  Mbar M;
  M.Pending = V & 0xfffff;
  M.Expected = (V >> 20) & 0xfffff;
  int64_t Tx = static_cast<int64_t>((V >> 40) & 0x1fffff);
  M.Tx = static_cast<int32_t>(Tx >= (1 << 20) ? Tx - (1 << 21) : Tx);
  M.Phase = static_cast<uint32_t>(V >> 61);
  return M;
}

Mbar load(uint64_t *P) { return decode(__atomic_load_n(P, __ATOMIC_ACQUIRE)); }

uint64_t encode(const Mbar &M) {
  return (M.Pending & 0xfffffull) | (M.Expected & 0xfffffull) << 20 |
         (static_cast<uint64_t>(static_cast<uint32_t>(M.Tx)) & 0x1fffff) << 40 |
         static_cast<uint64_t>(M.Phase & 7) << 61;
}

void store(uint64_t *P, const Mbar &M) { __atomic_store_n(P, encode(M), __ATOMIC_RELEASE); }

/// Applies Change to the barrier's state atomically; returns the state before. Whether the change completed
/// the phase is read from the state after, once (the block's progress counts it).
template <class F> Mbar update(uint64_t *P, BlockState *B, F &&Change) {
  uint64_t Old = __atomic_load_n(P, __ATOMIC_RELAXED);
  Mbar Before, After;
  do {
    Before = After = decode(Old);
    Change(After);
  } while (!__atomic_compare_exchange_n(P, &Old, encode(After), false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  if (B && After.Phase != Before.Phase)
    ++B->Progress;
  return Before;
}

/// Completes the current phase when nothing is pending any more.
void maybeComplete(Mbar &M) {
  if (M.Pending == 0 && M.Tx == 0) {
    M.Phase = (M.Phase + 1) & 7;
    M.Pending = M.Expected;
  }
}

uint16_t toF16(double D) {
  if (std::isnan(D))
    return 0x7fff;
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(D)); // correctly rounded from double
}

double fromF16(uint16_t U) { return static_cast<double>(llvm::bit_cast<_Float16>(U)); }

double fromBF16(uint16_t U) {
  uint32_t B = static_cast<uint32_t>(U) << 16;
  float F;
  memcpy(&F, &B, 4);
  return F;
}

uint16_t toBF16(double D) {
  if (std::isnan(D))
    return 0x7fff;
  // Round to odd at float precision, then to nearest even at bf16 precision: no double rounding.
  float F = static_cast<float>(D);
  if (static_cast<double>(F) != D && std::isfinite(D)) {
    if (std::fabs(static_cast<double>(F)) > std::fabs(D))
      F = std::nextafter(F, 0.0f);
    uint32_t U;
    memcpy(&U, &F, 4);
    U |= 1;
    memcpy(&F, &U, 4);
  }
  uint32_t U;
  memcpy(&U, &F, 4);
  return static_cast<uint16_t>((U + 0x7fff + ((U >> 16) & 1)) >> 16);
}

/// One 16-bit lane of a half-precision atomic: Op 0 add, 1 min, 2 max.
uint16_t halfOp(uint16_t Old, uint16_t V, bool BF, uint32_t Op) {
  double A = BF ? fromBF16(Old) : fromF16(Old), B = BF ? fromBF16(V) : fromF16(V);
  double R;
  if (Op == 0)
    R = A + B;
  else if (std::isnan(A) || std::isnan(B))
    R = std::isnan(A) ? B : A;
  else if (Op == 1)
    R = (A < B || (A == B && std::signbit(A))) ? A : B;
  else
    R = (A > B || (A == B && !std::signbit(A))) ? A : B;
  return BF ? toBF16(R) : toF16(R);
}

} // namespace

void ptxforge::codegen::exec::mbarCompleteTx(ThreadContext *C, uint64_t *P, uint32_t Tx) {
  update(P, C ? C->Block : nullptr, [&](Mbar &M) {
    M.Tx -= static_cast<int32_t>(Tx);
    maybeComplete(M);
  });
}

extern "C" {

static void ptxrt_mbar_init(uint64_t *P, uint32_t Count) {
  Mbar M{Count & 0xfffff, Count & 0xfffff, 0, 0};
  store(P, M);
}

static void ptxrt_mbar_inval(uint64_t *P) { memset(P, 0, 8); }

/// mbarrier.arrive(.expect_tx)/arrive_drop: Tx transaction bytes are expected first, then Count arrivals.
static uint64_t ptxrt_mbar_arrive(ThreadContext *C, uint64_t *P, uint32_t Count, uint32_t Drop, uint32_t Tx) {
  BlockState *B = C ? C->Block : nullptr;
  if (B)
    ++B->Progress;
  Mbar Before = update(P, B, [&](Mbar &M) {
    M.Tx += static_cast<int32_t>(Tx);
    M.Pending = Count > M.Pending ? 0 : M.Pending - Count;
    if (Drop)
      M.Expected = Count > M.Expected ? 0 : M.Expected - Count;
    maybeComplete(M);
  });
  return static_cast<uint64_t>(Before.Phase) << 61 | Before.Pending; // the GPU's pending_count: before arriving
}

static void ptxrt_mbar_expect_tx(uint64_t *P, uint32_t Tx) {
  update(P, nullptr, [&](Mbar &M) { M.Tx += static_cast<int32_t>(Tx); });
}

static void ptxrt_mbar_complete_tx(ThreadContext *C, uint64_t *P, uint32_t Tx) { mbarCompleteTx(C, P, Tx); }

/// test_wait / try_wait. Flags: bit 0 .parity (State is the phase parity to wait for), bit 1 try_wait. test_wait
/// gives the other threads one round. try_wait waits while the block moves on (some thread arrives, completes,
/// exits or passes a barrier during each round); a round in which nothing moved is its time limit running out,
/// and it answers false as the GPU does after its suspend time. Either answer false for a phase that cannot
/// complete now, which is no deadlock for a thread that only tests or tries: the scheduler counts these polls
/// (Launch.cpp), so only a loop around them that cannot succeed is reported as a deadlock.
static uint32_t ptxrt_mbar_wait(ThreadContext *C, uint64_t *P, uint64_t State, uint32_t Flags) {
  auto Done = [&] {
    Mbar M = load(P);
    if (Flags & 1)
      return (M.Phase & 1) != (State & 1);
    return M.Phase != static_cast<uint32_t>(State >> 61);
  };
  if (Done())
    return 1;
  BlockState &B = blockOf(C);
  uint64_t Seen;
  do {
    Seen = B.Progress;
    // This round may be the one that runs out of time; in a cluster the phase may be completed by another
    // block, on another worker, so the scheduler lets it spin as a loop waiting for another block does.
    ++(C->Cluster ? B.SpinYields : B.WaitTimeouts);
    B.pollOnce(C->LinearTid, Done);
  } while ((Flags & 2) && B.UseFibers && !Done() && B.Progress != Seen);
  return Done();
}

static uint32_t ptxrt_mbar_pending_count(uint64_t State) { return State & 0xfffff; }

/// cp.async.mbarrier.arrive: the copies are done already; .noinc counts as an arrival, the plain form
/// increments the pending count before its arrival, i.e. changes nothing.
static void ptxrt_mbar_cp_arrive(ThreadContext *C, uint64_t *P, uint32_t NoInc) {
  if (NoInc)
    ptxrt_mbar_arrive(C, P, 1, 0, 0);
}

/// cp.async: copies min(SrcSize, CpSize) bytes and zero-fills the rest of CpSize.
static void ptxrt_cp_async(char *Dst, const char *Src, uint32_t CpSize, uint32_t SrcSize) {
  uint32_t N = SrcSize < CpSize ? SrcSize : CpSize;
  if (N)
    memcpy(Dst, Src, N);
  if (N < CpSize)
    memset(Dst + N, 0, CpSize - N);
}

/// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster: the Size bytes land at
/// Dst's offset in the shared memory of every block of the cluster in Mask, each completing them on its mbarrier
/// at Mbar's offset.
static void ptxrt_cp_bulk_multicast(ThreadContext *C, char *Dst, const char *Src, uint32_t Size, uint64_t *MbarP,
                                    uint32_t Mask) {
  char *DstWindow = sharedWindowOf(C, Dst), *BarWindow = sharedWindowOf(C, reinterpret_cast<char *>(MbarP));
  if (!DstWindow || !BarWindow)
    raiseFault(C, LaunchFault::IllegalAddress, "cp.async.bulk.multicast::cluster: not a shared-memory address", true);
  for (uint32_t R = 0; R < 16; ++R)
    if (char *Window = Mask >> R & 1 ? clusterWindow(C, R) : nullptr) {
      memmove(Window + (Dst - DstWindow), Src, Size);
      mbarCompleteTx(C, reinterpret_cast<uint64_t *>(Window + (reinterpret_cast<char *>(MbarP) - BarWindow)), Size);
    }
}

/// cp.async.bulk: copies Size bytes, then (Mbar non-null) completes Size transaction bytes on the mbarrier.
static void ptxrt_cp_bulk(ThreadContext *C, char *Dst, const char *Src, uint32_t Size, uint64_t *MbarP) {
  memmove(Dst, Src, Size);
  if (MbarP)
    ptxrt_mbar_complete_tx(C, MbarP, Size);
}

/// Half-precision atomics: Code bit 0 bf16, bit 1 x2 (two lanes in 32 bits), bits 2-3 op (0 add, 1 min, 2 max).
static uint32_t ptxrt_atom_half(void *P, uint32_t V, uint32_t Code) {
  bool BF = Code & 1, X2 = Code & 2;
  uint32_t Op = (Code >> 2) & 3;
  if (X2) {
    auto *A = static_cast<uint32_t *>(P);
    uint32_t Old = __atomic_load_n(A, __ATOMIC_RELAXED);
    for (;;) {
      uint32_t New =
          halfOp(static_cast<uint16_t>(Old), static_cast<uint16_t>(V), BF, Op) |
          static_cast<uint32_t>(halfOp(static_cast<uint16_t>(Old >> 16), static_cast<uint16_t>(V >> 16), BF, Op)) << 16;
      if (__atomic_compare_exchange_n(A, &Old, New, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        return Old;
    }
  }
  auto *A = static_cast<uint16_t *>(P);
  uint16_t Old = __atomic_load_n(A, __ATOMIC_RELAXED);
  for (;;) {
    uint16_t New = halfOp(Old, static_cast<uint16_t>(V), BF, Op);
    if (__atomic_compare_exchange_n(A, &Old, New, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return Old;
  }
}

/// atom/red .add.f32 on global memory: the GPU flushes subnormal inputs (the value in memory too) and results
/// to zeros of their sign (shared memory keeps them); NaN results are the canonical 0x7fffffff. Flush 0 (a
/// generic address inside the block's shared window) adds exactly. Returns the old bits.
static uint32_t ptxrt_atom_add_f32(uint32_t *P, uint32_t V, uint32_t Flush) {
  auto flush = [&](uint32_t X) { return Flush && (X & 0x7f800000u) == 0 ? X & 0x80000000u : X; };
  auto value = [](uint32_t X) {
    float F;
    memcpy(&F, &X, 4);
    return F;
  };
  uint32_t Old = __atomic_load_n(P, __ATOMIC_RELAXED);
  for (;;) {
    float Sum = value(flush(Old)) + value(flush(V));
    uint32_t New;
    memcpy(&New, &Sum, 4);
    New = Sum != Sum ? 0x7fffffffu : flush(New);
    if (__atomic_compare_exchange_n(P, &Old, New, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return Old;
  }
}
}

void ptxforge::codegen::exec::mbarArrive(ThreadContext *C, uint64_t *P) { ptxrt_mbar_arrive(C, P, 1, 0, 0); }

void ptxforge::codegen::exec::registerAsyncHelpers(HelperTable &T) {
  T.insert(T.end(),
           {PTXRT_HELPER(ptxrt_mbar_init), PTXRT_HELPER(ptxrt_mbar_inval), PTXRT_HELPER(ptxrt_mbar_arrive),
            PTXRT_HELPER(ptxrt_mbar_expect_tx), PTXRT_HELPER(ptxrt_mbar_complete_tx),
            PTXRT_HELPER(ptxrt_cp_bulk_multicast), PTXRT_HELPER(ptxrt_mbar_wait),
            PTXRT_HELPER(ptxrt_mbar_pending_count), PTXRT_HELPER(ptxrt_mbar_cp_arrive), PTXRT_HELPER(ptxrt_cp_async),
            PTXRT_HELPER(ptxrt_cp_bulk), PTXRT_HELPER(ptxrt_atom_half), PTXRT_HELPER(ptxrt_atom_add_f32)});
}
