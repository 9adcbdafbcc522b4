// Warp collectives in the thread-fiber mode: shfl/vote/match/redux/activemask/elect/bar.warp.sync,
// ldmatrix/stmatrix and mma/wmma. Every lane is a fiber; a collective is a per-warp rendezvous (a
// CollectiveSlot, see Runtime.h) that parks the arriving lane until every required lane (the member mask minus
// exited lanes) has deposited its inputs. The first lane to see the slot complete computes every lane's
// outputs at once, so memory read or written by the warp as a whole (ldmatrix/stmatrix) is accessed in one
// step, as on the GPU.
#include "MatrixCompute.h"
#include "MatrixProduct.h"
#include "Runtime.h"
#include "WarpCompute.h"

#include "ptxforge/codegen/RegionCuts.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <immintrin.h>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

bool slotComplete(BlockState &B, uint32_t W, const CollectiveSlot &S) {
  if (S.Computed)
    return true;
  uint32_t Live = B.liveLanes(W);
  if (S.Kind != CKActivemask) {
    uint32_t Need = S.Mask & Live;
    return (S.Arrived & Need) == Need;
  }
  // activemask: the lanes converged here are those that arrived while every other live lane of the warp is
  // parked somewhere it cannot leave yet (another path's collective, a barrier).
  for (uint32_t L = 0; L < 32; ++L) {
    if (!(Live >> L & 1) || (S.Arrived >> L & 1))
      continue;
    const WaitState &WS = B.Waits[W * 32 + L];
    if (!WS.Parked)
      return false;
    if (WS.Kind == CKActivemask) { // parked in another activemask: blocked unless that one completed
      if (WS.Slot && static_cast<const CollectiveSlot *>(WS.Slot)->Computed)
        return false;
      continue;
    }
    if (WS.Check && WS.Check(WS.Arg))
      return false;
  }
  return true;
}

/// Runs one collective for the calling lane: deposits In, waits for the other lanes, lets the first lane that
/// sees the slot complete run Compute(slot) for all participants, and copies this lane's outputs to Out.
template <class ComputeFn>
void collective(ThreadContext *C, uint32_t Kind, uint32_t Mask, uint32_t Site, const uint64_t *In, unsigned NIn,
                uint64_t *Out, unsigned NOut, ComputeFn &&Compute) {
  BlockState &B = blockOf(C);
  uint32_t W = C->WarpId, Lane = C->LaneId, Bit = 1u << Lane;
  if (Kind != CKActivemask)
    Mask |= Bit; // a lane outside its own member mask is undefined behaviour: let it take part
  WarpState &WS = B.Warps[W];
  CollectiveSlot *S = nullptr;
  for (auto &P : WS.Slots)
    if (P->InUse && !P->Computed && P->Kind == Kind && P->Mask == Mask && P->Site == Site && !(P->Arrived & Bit)) {
      S = P.get();
      break;
    }
  if (!S) {
    for (auto &P : WS.Slots)
      if (!P->InUse) {
        S = P.get();
        break;
      }
    if (!S) {
      WS.Slots.push_back(std::make_unique<CollectiveSlot>());
      S = WS.Slots.back().get();
    }
    S->InUse = true;
    S->Computed = false;
    S->Kind = Kind;
    S->Mask = Mask;
    S->Site = Site;
    S->Arrived = S->Departed = S->Participants = 0;
  }
  for (unsigned I = 0; I < NIn && I < CollectiveSlot::MaxIn; ++I)
    S->In[Lane][I] = In[I];
  S->Arrived |= Bit;
  ++B.Progress;
  if (slotComplete(B, W, *S)) {
    if (S->Arrived != Bit)
      B.yieldToReleased(C->LinearTid, W * 32);
  } else {
    B.waitUntil(
        C->LinearTid, Kind, [&] { return slotComplete(B, W, *S); }, S);
  }
  if (!S->Computed) {
    S->Participants = S->Arrived;
    Compute(*S);
    S->Computed = true;
  }
  for (unsigned I = 0; I < NOut && I < CollectiveSlot::MaxOut; ++I)
    Out[I] = S->Out[Lane][I];
  S->Departed |= Bit;
  if ((S->Departed & S->Participants) == S->Participants)
    S->InUse = false;
}

// ---- element encodings for mma/wmma ----
// The per-element helpers are forced inline: a wmma moves 1.3K elements, and calls to them were half its time.
constexpr uint32_t ETNone = MENone, ETF16 = MEF16, ETBF16 = MEBF16, ETTF32 = METF32, ETF32 = MEF32, ETF64 = MEF64,
                   ETS8 = MES8, ETU8 = MEU8, ETS32 = MES32, ETS4 = MES4, ETU4 = MEU4, ETE4M3 = MEE4M3, ETE5M2 = MEE5M2;

[[gnu::always_inline]] inline unsigned elemBits(uint32_t T) {
  switch (T) {
  case ETF16:
  case ETBF16:
    return 16;
  case ETF64:
    return 64;
  case ETS8:
  case ETU8:
  case ETE4M3:
  case ETE5M2:
    return 8;
  case ETS4:
  case ETU4:
    return 4;
  default:
    return 32;
  }
}

[[gnu::always_inline]] inline double decode(uint32_t T, uint64_t Bits) {
  switch (T) {
  case ETF16:
    return halfToFloat(static_cast<uint16_t>(Bits));
  case ETBF16: {
    uint32_t U = static_cast<uint32_t>(Bits & 0xffff) << 16;
    float F;
    memcpy(&F, &U, 4);
    return F;
  }
  case ETTF32: {
    uint32_t U = static_cast<uint32_t>(Bits) & ~0x1fffu;
    float F;
    memcpy(&F, &U, 4);
    return F;
  }
  case ETF32: {
    uint32_t U = static_cast<uint32_t>(Bits);
    float F;
    memcpy(&F, &U, 4);
    return F;
  }
  case ETF64: {
    double D;
    memcpy(&D, &Bits, 8);
    return D;
  }
  case ETS8:
    return static_cast<int8_t>(Bits);
  case ETU8:
    return static_cast<uint8_t>(Bits);
  case ETS4:
    return static_cast<int8_t>(static_cast<uint8_t>(Bits << 4)) >> 4;
  case ETU4:
    return Bits & 15;
  case ETS32:
    return static_cast<int32_t>(Bits);
  case ETE4M3:
  case ETE5M2:
    return fp8ToDouble(static_cast<uint32_t>(Bits & 0xff), T == ETE5M2);
  default:
    return 0;
  }
}

uint64_t encodeFloat(uint32_t T, double V) {
  switch (T) {
  case ETF16: {
    _Float16 F = static_cast<_Float16>(V);
    uint16_t H;
    memcpy(&H, &F, 2);
    return H;
  }
  case ETBF16: {
    float F = static_cast<float>(V);
    uint32_t U;
    memcpy(&U, &F, 4);
    if ((U & 0x7fffffff) > 0x7f800000)
      return 0x7fff;
    return (U + 0x7fff + ((U >> 16) & 1)) >> 16;
  }
  case ETF64: {
    uint64_t U;
    memcpy(&U, &V, 8);
    return U;
  }
  default: {
    float F = static_cast<float>(V);
    uint32_t U;
    memcpy(&U, &F, 4);
    return U;
  }
  }
}

/// Reads element E of a fragment made of 32-bit registers (or 64-bit ones for f64) packing elements of type T.
[[gnu::always_inline]] inline uint64_t fragElem(const uint64_t *Regs, uint32_t T, unsigned E) {
  unsigned Bits = elemBits(T);
  if (Bits >= 32)
    return Regs[E];
  unsigned At = E * Bits; // the bit offset in the 32-bit registers: no division per element
  return (Regs[At >> 5] >> (At & 31)) & ((1ull << Bits) - 1);
}

[[gnu::always_inline]] inline void setFragElem(uint64_t *Regs, uint32_t T, unsigned E, uint64_t V) {
  unsigned Bits = elemBits(T);
  if (Bits >= 32) {
    Regs[E] = V;
    return;
  }
  unsigned At = E * Bits, Sh = At & 31;
  uint64_t M = ((1ull << Bits) - 1) << Sh;
  Regs[At >> 5] = (Regs[At >> 5] & ~M) | ((V << Sh) & M);
}

unsigned fragElems(uint32_t T, unsigned NRegs) { return elemBits(T) >= 32 ? NRegs : NRegs * (32 / elemBits(T)); }

/// A fragment's elements (type T, in NRegs registers) decoded into Out, the common types without a dispatch per
/// element.
void decodeFragment(uint32_t T, const uint64_t *R, unsigned NRegs, double *Out) {
  switch (T) {
  case ETF16:
    for (unsigned I = 0; I < NRegs; ++I) {
      Out[2 * I] = halfToFloat(static_cast<uint16_t>(R[I]));
      Out[2 * I + 1] = halfToFloat(static_cast<uint16_t>(R[I] >> 16));
    }
    return;
  case ETS8:
    for (unsigned I = 0; I < 4 * NRegs; ++I)
      Out[I] = static_cast<int8_t>(R[I >> 2] >> (8 * (I & 3)));
    return;
  case ETU8:
    for (unsigned I = 0; I < 4 * NRegs; ++I)
      Out[I] = static_cast<uint8_t>(R[I >> 2] >> (8 * (I & 3)));
    return;
  case ETBF16:
    for (unsigned I = 0; I < NRegs; ++I) {
      Out[2 * I] = bf16ToFloat(static_cast<uint16_t>(R[I]));
      Out[2 * I + 1] = bf16ToFloat(static_cast<uint16_t>(R[I] >> 16));
    }
    return;
  case ETTF32:
    for (unsigned I = 0; I < NRegs; ++I)
      Out[I] = decode(ETTF32, R[I]);
    return;
  case ETF32:
    for (unsigned I = 0; I < NRegs; ++I)
      Out[I] = decode(ETF32, R[I]);
    return;
  case ETF64:
    for (unsigned I = 0; I < NRegs; ++I)
      Out[I] = decode(ETF64, R[I]);
    return;
  default:
    for (unsigned I = 0, E = fragElems(T, NRegs); I < E; ++I)
      Out[I] = decode(T, fragElem(R, T, I));
  }
}

/// An element of Bytes bytes in memory (sizes the compiler knows: no memcpy call per element).
[[gnu::always_inline]] inline uint64_t loadElem(const char *P, unsigned Bytes) {
  uint16_t V2;
  uint32_t V4;
  uint64_t V8;
  switch (Bytes) {
  case 1:
    return static_cast<uint8_t>(*P);
  case 2:
    return memcpy(&V2, P, 2), V2;
  case 4:
    return memcpy(&V4, P, 4), V4;
  default:
    return memcpy(&V8, P, 8), V8;
  }
}

[[gnu::always_inline]] inline void storeElem(char *P, unsigned Bytes, uint64_t V) {
  uint16_t V2 = static_cast<uint16_t>(V);
  uint32_t V4 = static_cast<uint32_t>(V);
  switch (Bytes) {
  case 1:
    *P = static_cast<char>(V);
    return;
  case 2:
    memcpy(P, &V2, 2);
    return;
  case 4:
    memcpy(P, &V4, 4);
    return;
  default:
    memcpy(P, &V, 8);
    return;
  }
}

MmaShape shapeOf(uint32_t Code) {
  // By the low four bits of the lowering's shape code; 0 and the unused codes 12-15 read as m16n8k16.
  static constexpr MmaShape Shapes[16] = {
      {16, 8, 16, false}, {16, 8, 16, false}, {16, 8, 8, false},  {16, 8, 32, false},
      {16, 8, 4, false},  {8, 8, 4, false},   {16, 16, 16, true}, {32, 8, 16, true},
      {8, 32, 16, true},  {16, 8, 64, false}, {16, 16, 8, true},  {8, 8, 4, true},
      {16, 8, 16, false}, {16, 8, 16, false}, {16, 8, 16, false}, {16, 8, 16, false}};
  return Shapes[Code & 15];
}

// mma.sync fragment layouts (PTX ISA "Matrix fragments for mma.m16n8k*" and m8n8k4 .f64): lane = 4 * groupID +
// threadID_in_group; element I of a fragment packs PerReg = 32/bits elements per register.
void mmaA(const MmaShape &S, uint32_t T, unsigned Lane, unsigned I, unsigned &Row, unsigned &Col) {
  unsigned G = Lane >> 2, Tg = Lane & 3;
  if (S.M == 8) { // m8n8k4 f64
    Row = G, Col = Tg;
    return;
  }
  unsigned PerReg = std::max(1u, 32 / elemBits(T)), R = I / PerReg, E = I % PerReg;
  Row = G + 8 * (R & 1);
  Col = Tg * PerReg + E + (R >> 1) * (S.K / 2);
}

void mmaB(const MmaShape &S, uint32_t T, unsigned Lane, unsigned I, unsigned &Row, unsigned &Col) {
  unsigned G = Lane >> 2, Tg = Lane & 3;
  if (S.M == 8) {
    Row = Tg, Col = G;
    return;
  }
  unsigned PerReg = std::max(1u, 32 / elemBits(T)), R = I / PerReg, E = I % PerReg;
  Row = Tg * PerReg + E + R * (S.K / 2);
  Col = G;
}

void mmaC(const MmaShape &S, unsigned Lane, unsigned I, unsigned &Row, unsigned &Col) {
  unsigned G = Lane >> 2, Tg = Lane & 3;
  if (S.M == 8) {
    Row = G, Col = Tg * 2 + I;
    return;
  }
  Row = G + 8 * (I >> 1);
  Col = Tg * 2 + (I & 1);
}

// wmma fragments are opaque: this implementation lets lane l hold, for an R x C matrix with F elements per
// lane, the elements (l * F + e) mod (R * C) in row-major order (A and C/D) or column-major order (B).
void wmmaPos(unsigned R, unsigned C, bool ColMajor, unsigned F, unsigned Lane, unsigned E, unsigned &Row,
             unsigned &Col) {
  unsigned Idx = (Lane * F + E) % (R * C);
  if (ColMajor)
    Row = Idx % R, Col = Idx / R;
  else
    Row = Idx / C, Col = Idx % C;
}

/// The position after (Row, Col) in an R x C matrix walked in row-major (column-major) order, wrapping.
void nextPosition(unsigned R, unsigned C, bool ColMajor, unsigned &Row, unsigned &Col) {
  unsigned &Minor = ColMajor ? Row : Col, &Major = ColMajor ? Col : Row;
  if (++Minor == (ColMajor ? R : C)) {
    Minor = 0;
    if (++Major == (ColMajor ? C : R))
      Major = 0;
  }
}

/// One mma.sync / wmma.mma.sync as ptxrt_mma received it: the code (shape, types, flags) and register counts.
struct MmaCall {
  uint32_t Code;
  unsigned NA, NB, NC, ND;
  bool Pack; ///< the inputs came two 32-bit registers per slot word
};

/// The matrices of one product as flat arrays, decoded: A row-major M x K, B row-major K x N, C and D
/// row-major M x N (sizes: the largest shapes, mma m16n8k64 and wmma m32n8k16 / m8n32k16).
struct MmaMatrices {
  double A[1024], B[512], C[256], D[256];
};

/// Everything one product works in (27 KiB). One per worker thread, not on the computing lane's fiber stack: a
/// new stack per warp pushed the 256 fibers' frames out of the caches, and each lane reloads its frame after
/// every switch. A product never yields, so one at a time runs on a worker.
struct MmaScratch {
  MmaMatrices M;
  double BCols[512];
  alignas(8) unsigned char Bytes[32 * 16 * 8];
  int64_t DI[256];
  uint32_t Words[256];
  uint64_t Enc[256];
};
/// The worker's scratch, made at its first product (not a static TLS block in every thread of the host program).
MmaScratch &scratch() {
  thread_local std::unique_ptr<MmaScratch> S;
  if (!S)
    S = std::make_unique<MmaScratch>();
  return *S;
}

/// Lane L's fragment Frag (0 A, 1 B, 2 C) into its matrix. A wmma fragment of E elements per lane holds
/// elements L*E... of the matrix in row-major order (B: column-major), wrapping when the lanes hold more than
/// the matrix has (every element then twice); all sizes are powers of two, so positions are masks and shifts.
void gatherFragment(const MmaShape &Sh, unsigned Frag, uint32_t T, uint32_t L, const uint64_t *R, unsigned NRegs,
                    MmaMatrices &M) {
  unsigned E = fragElems(T, NRegs);
  unsigned Rows = Frag == 1 ? Sh.K : Sh.M, Cols = Frag == 0 ? Sh.K : Sh.N;
  double *Out = Frag == 0 ? M.A : Frag == 1 ? M.B : M.C;
  double Vals[128];
  decodeFragment(T, R, NRegs, Vals);
  if (Sh.Wmma) {
    unsigned Mask = Rows * Cols - 1, RowShift = __builtin_ctz(Rows), ColShift = __builtin_ctz(Cols);
    for (unsigned I = 0; I < E; ++I) {
      unsigned Idx = (L * E + I) & Mask;
      if (Frag == 1) // column-major: Idx = col * Rows + row
        Idx = (Idx & (Rows - 1)) << ColShift | Idx >> RowShift;
      Out[Idx] = Vals[I];
    }
    return;
  }
  for (unsigned I = 0; I < E; ++I) {
    unsigned Row, Col;
    if (Frag == 0)
      mmaA(Sh, T, L, I, Row, Col);
    else if (Frag == 1)
      mmaB(Sh, T, L, I, Row, Col);
    else
      mmaC(Sh, L, I, Row, Col);
    if (Row < Rows && Col < Cols)
      Out[Row * Cols + Col] = Vals[I];
  }
}

/// D = A * B + C, each element summed in k order from C in double (multiplyMatrices); for integer types the sums
/// are exact integers (below 2^53), truncated to s32 or saturated when Sat.
/// An integer product's results (D's exact sums), saturated to s32 with Sat.
void integerResults(const double *D, unsigned MN, bool Sat, int64_t *DI) {
  for (unsigned I = 0; I < MN; ++I)
    DI[I] = Sat ? std::clamp<int64_t>(static_cast<int64_t>(D[I]), INT32_MIN, INT32_MAX) : static_cast<int64_t>(D[I]);
}

void multiply(const MmaShape &Sh, bool Int, bool Sat, bool ExactProducts, MmaMatrices &M, int64_t *DI) {
  multiplyMatrices(Sh.M, Sh.N, Sh.K, M.A, M.B, M.C, M.D, ExactProducts);
  if (Int)
    integerResults(M.D, Sh.M * Sh.N, Sat, DI);
}

/// Lane L's ND D registers from the product, in the fragment layout.
void scatterD(const MmaShape &Sh, uint32_t TD, bool Int, uint32_t L, unsigned ND, const MmaMatrices &M,
              const int64_t *DI, uint64_t *RD) {
  unsigned ED = fragElems(TD, ND), Mask = Sh.M * Sh.N - 1;
  for (unsigned I = 0; I < ED; ++I) {
    unsigned Idx;
    if (Sh.Wmma) {
      Idx = (L * ED + I) & Mask;
    } else {
      unsigned Row, Col;
      mmaC(Sh, L, I, Row, Col);
      if (Row >= Sh.M || Col >= Sh.N)
        continue;
      Idx = Row * Sh.N + Col;
    }
    setFragElem(RD, TD, I, Int ? static_cast<uint32_t>(DI[Idx]) : encodeFloat(TD, M.D[Idx]));
  }
}

/// Lane L's input register K (A's, then B's, then C's registers).
[[gnu::always_inline]] inline uint64_t inputRegister(const CollectiveSlot &S, const MmaCall &Call, uint32_t L,
                                                     unsigned K) {
  return Call.Pack ? (S.In[L][K / 2] >> (32 * (K & 1))) & 0xffffffffu : S.In[L][K];
}

/// A full warp's wmma fragment Frag (0 A, 1 B, 2 C: type T, NRegs registers from input register First) decoded
/// into Out in the fragment's order (row-major A and C, column-major B). Lanes L0... hold the last whole copy of
/// the matrix, in order: what gatherFragment leaves, lane by lane, when every lane takes part. False for a
/// fragment whose elements do not tile the matrix.
bool warpFragment(const CollectiveSlot &S, const MmaCall &Call, const MmaShape &Sh, unsigned Frag, uint32_t T,
                  unsigned First, unsigned NRegs, double *Out) {
  unsigned Total = (Frag == 1 ? Sh.K : Sh.M) * (Frag == 0 ? Sh.K : Sh.N), E = fragElems(T, NRegs);
  if (!E || NRegs > 16 || Total % E || (32 * E) % Total)
    return false;
  unsigned L0 = 32 - Total / E, RegBytes = elemBits(T) == 64 ? 8 : 4;
  // The copy's registers back to back: its elements packed in order, as the lanes loaded them.
  unsigned char *Bytes = scratch().Bytes, *P = Bytes;
  for (unsigned L = L0; L < 32; ++L) {
    if (Call.Pack) { // registers 2k and 2k + 1 are the low and high halves of word k
      copyWords(P, reinterpret_cast<const unsigned char *>(S.In[L]) + First * 4, NRegs);
      P += NRegs * 4;
      continue;
    }
    for (unsigned R = 0; R < NRegs && RegBytes == 4; ++R, P += 4) { // the low half of each 64-bit word
      uint32_t W = static_cast<uint32_t>(S.In[L][First + R]);
      memcpy(P, &W, 4);
    }
    for (unsigned R = 0; R < NRegs && RegBytes == 8; ++R, P += 8)
      memcpy(P, &S.In[L][First + R], 8);
  }
  return decodeElements(T, Bytes, Total, Out);
}

/// The A (unless KeepA), B and C matrices of a wmma in which every lane takes part, from whole copies of the
/// fragments; false where only the lane-by-lane gather knows the layout.
bool gatherWarpWmma(const CollectiveSlot &S, const MmaCall &Call, const MmaShape &Sh, uint32_t TA, uint32_t TB,
                    uint32_t TC, MmaMatrices &M, bool KeepA) {
  if (!Sh.Wmma || S.Participants != 0xffffffffu)
    return false;
  double *BCols = scratch().BCols;
  if ((!KeepA && !warpFragment(S, Call, Sh, 0, TA, 0, Call.NA, M.A)) ||
      !warpFragment(S, Call, Sh, 1, TB, Call.NA, Call.NB, BCols) ||
      !warpFragment(S, Call, Sh, 2, TC, Call.NA + Call.NB, Call.NC, M.C))
    return false;
  for (unsigned J = 0; J < Sh.N; ++J) // column-major fragment -> the row-major B the product takes
    for (unsigned K = 0; K < Sh.K; ++K)
      M.B[K * Sh.N + J] = BCols[J * Sh.K + K];
  return true;
}

/// The product of one mma for every lane of the slot: gathers the fragments, multiplies, writes each lane's D.
// Out of line: its 20 KiB of matrices would otherwise be every lane's frame in ptxrt_mma, probed page by page on
// each call, on 32 fiber stacks per product.
// KeepA: the scratch's A is this product's already (the previous product of a batch read the same registers).
[[gnu::noinline]] void computeMma(CollectiveSlot &S, const MmaCall &Call, bool KeepA = false) {
  MmaShape Sh = shapeOf(Call.Code);
  uint32_t TA = (Call.Code >> 4) & 15, TB = (Call.Code >> 8) & 15, TC = (Call.Code >> 12) & 15,
           TD = (Call.Code >> 16) & 15;
  bool Sat = Call.Code >> 20 & 1, Int = TD == ETS32;
  MmaScratch &Scratch = scratch();
  MmaMatrices &M = Scratch.M;
  if (!gatherWarpWmma(S, Call, Sh, TA, TB, TC, M, KeepA)) {
    // zero where no lane (an exited one) provides an element
    if (!KeepA)
      std::fill(M.A, M.A + Sh.M * Sh.K, 0.0);
    std::fill(M.B, M.B + Sh.K * Sh.N, 0.0);
    std::fill(M.C, M.C + Sh.M * Sh.N, 0.0);
    unsigned NA = std::min(Call.NA, 16u), NB = std::min(Call.NB, 16u), NC = std::min(Call.NC, 16u);
    forLanes(S.Participants, [&](uint32_t L) {
      uint64_t RA[16] = {}, RB[16] = {}, RC[16] = {};
      for (unsigned I = 0; I < NA; ++I)
        RA[I] = inputRegister(S, Call, L, I);
      for (unsigned I = 0; I < NB; ++I)
        RB[I] = inputRegister(S, Call, L, Call.NA + I);
      for (unsigned I = 0; I < NC; ++I)
        RC[I] = inputRegister(S, Call, L, Call.NA + Call.NB + I);
      if (!KeepA)
        gatherFragment(Sh, 0, TA, L, RA, NA, M);
      gatherFragment(Sh, 1, TB, L, RB, NB, M);
      gatherFragment(Sh, 2, TC, L, RC, NC, M);
    });
  }
  int64_t *DI = Scratch.DI;
  multiply(Sh, Int, Sat, TA != ETF64, M, DI);
  unsigned ND = std::min<unsigned>(Call.ND, CollectiveSlot::MaxOut * 2);
  // wmma: every element encoded once, each lane's registers a run of them (ED consecutive elements).
  unsigned MN = Sh.M * Sh.N, ED = fragElems(TD, ND), DBits = elemBits(TD);
  bool Runs = Sh.Wmma && ED && MN % ED == 0 && (DBits == 16 || DBits == 32 || DBits == 64);
  if (Runs && DBits == 32 && ND > CollectiveSlot::MaxOut) { // packed two per word: each lane's run as it is
    uint32_t *Words = Scratch.Words;
    if (TD == ETF32)
      doublesToF32(M.D, MN, Words);
    else
      for (unsigned I = 0; I < MN; ++I)
        Words[I] = static_cast<uint32_t>(Int ? DI[I] : encodeFloat(TD, M.D[I]));
    forLanes(S.Participants, [&](uint32_t L) {
      const uint32_t *Run = Words + ((L * ED) & (MN - 1));
      if (ND == 8) // the usual f32 fragment: a copy of known size, which loads what the vector stores just wrote
        memcpy(S.Out[L], Run, 32);
      else
        copyWords(S.Out[L], Run, ND);
    });
    return;
  }
  uint64_t *Enc = Scratch.Enc;
  if (Runs)
    for (unsigned I = 0; I < MN; ++I)
      Enc[I] = Int ? static_cast<uint32_t>(DI[I]) : encodeFloat(TD, M.D[I]);
  forLanes(S.Participants, [&](uint32_t L) {
    uint64_t RD[CollectiveSlot::MaxOut * 2] = {};
    if (Runs) {
      const uint64_t *First = Enc + ((L * ED) & (MN - 1));
      for (unsigned I = 0; I < ND; ++I)
        RD[I] = DBits == 16 ? First[2 * I] | First[2 * I + 1] << 16 : First[I];
    } else {
      scatterD(Sh, TD, Int, L, ND, M, DI, RD);
    }
    // D registers go back two per word when there are more than MaxOut of them.
    if (ND > CollectiveSlot::MaxOut)
      for (unsigned I = 0; I < ND; I += 2)
        S.Out[L][I / 2] = (RD[I] & 0xffffffffu) | (I + 1 < ND ? (RD[I + 1] & 0xffffffffu) << 32 : 0);
    else
      for (unsigned I = 0; I < ND; ++I)
        S.Out[L][I] = RD[I];
  });
}

/// ldmatrix for the slot's participants: In[L] = {row address, matrices, trans}; Out[L] the lane's registers.
void computeLdmatrix(CollectiveSlot &S) {
  uint32_t First = static_cast<uint32_t>(__builtin_ctz(S.Participants));
  unsigned Num = static_cast<unsigned>(S.In[First][1]);
  bool Trans = S.In[First][2] != 0;
  auto elem = [&](unsigned Mat, unsigned Row, unsigned Col) -> uint32_t {
    unsigned Src = Mat * 8 + Row;
    if (!(S.Participants >> Src & 1))
      return 0;
    uint16_t V;
    memcpy(&V, reinterpret_cast<const char *>(S.In[Src][0]) + 2 * Col, 2);
    return V;
  };
  forLanes(S.Participants, [&](uint32_t L) {
    for (unsigned I = 0; I < Num && I < 4; ++I) {
      unsigned R = L / 4, C0 = 2 * (L % 4);
      uint32_t Lo = Trans ? elem(I, C0, R) : elem(I, R, C0);
      uint32_t Hi = Trans ? elem(I, C0 + 1, R) : elem(I, R, C0 + 1);
      S.Out[L][I] = Lo | Hi << 16;
    }
  });
}

/// A lane's stmatrix slot row: {row address, matrices, trans, registers...} (Mode: matrices * 2 + trans).
void stmatrixInputs(uint64_t Addr, uint32_t Mode, const uint32_t *Regs, uint64_t *In) {
  In[0] = Addr, In[1] = Mode / 2, In[2] = Mode & 1;
  for (unsigned I = 0; I < 4; ++I)
    In[3 + I] = I < Mode / 2 ? Regs[I] : 0;
}

/// stmatrix for the slot's participants (rows as stmatrixInputs makes them).
void computeStmatrix(CollectiveSlot &S) {
  uint32_t First = static_cast<uint32_t>(__builtin_ctz(S.Participants));
  unsigned Num = static_cast<unsigned>(S.In[First][1]);
  bool Trans = S.In[First][2] != 0;
  // Fragment element (r, c) of matrix I lives in lane 4r + c/2, register I, half c&1.
  auto frag = [&](unsigned Mat, unsigned R, unsigned Cc) -> uint16_t {
    unsigned L = 4 * R + Cc / 2;
    return static_cast<uint16_t>(S.In[L][3 + Mat] >> (16 * (Cc & 1)));
  };
  for (unsigned I = 0; I < Num && I < 4; ++I)
    for (unsigned R = 0; R < 8; ++R) {
      unsigned Src = I * 8 + R;
      if (!(S.Participants >> Src & 1))
        continue;
      char *Row = reinterpret_cast<char *>(S.In[Src][0]);
      for (unsigned Cc = 0; Cc < 8; ++Cc) {
        uint16_t V = Trans ? frag(I, Cc, R) : frag(I, R, Cc);
        memcpy(Row + 2 * Cc, &V, 2);
      }
    }
}

/// movmatrix.trans for the slot's participants: In[L][0] the lane's register, Out[L][0] its result.
void computeMovmatrix(CollectiveSlot &S) {
  auto frag = [&](unsigned R, unsigned Cc) -> uint32_t {
    return static_cast<uint32_t>(S.In[4 * R + Cc / 2][0] >> (16 * (Cc & 1))) & 0xffff;
  };
  forLanes(S.Participants, [&](uint32_t L) {
    unsigned R = L / 4, C0 = 2 * (L % 4);
    S.Out[L][0] = frag(C0, R) | frag(C0 + 1, R) << 16;
  });
}

/// ptxrt_mma's call from its code and register counts (NA | NB << 8 | NC << 16 | ND << 24). Inputs may not fit
/// one slot's words: wmma has 8 + 8 + 8 registers of 32 bits, so they go two per word (Pack).
MmaCall mmaCall(uint32_t Code, uint32_t Counts) {
  MmaCall Call{Code, Counts & 0xff, Counts >> 8 & 0xff, Counts >> 16 & 0xff, Counts >> 24, false};
  Call.Pack = Call.NA + Call.NB + Call.NC > CollectiveSlot::MaxIn;
  return Call;
}

/// Whether the call's registers are 32-bit words (else 64-bit ones).
bool mmaWords(const MmaCall &Call) { return Call.Code >> 21 & 1; }

/// Where the D registers follow the inputs in a lane's buffer, in bytes (32-bit words: an even count of them).
unsigned mmaOutOffset(const MmaCall &Call) {
  unsigned N = Call.NA + Call.NB + Call.NC;
  return mmaWords(Call) ? (N + 1) / 2 * 2 * 4 : N * 8;
}

/// A lane's inputs as its slot row, register I read by Reg(I) (its bits, zero-extended); returns the row's words.
template <class RegFn> unsigned packInputs(const MmaCall &Call, RegFn &&Reg, uint64_t *Packed) {
  // No zeroing: the slot takes the words given, no more.
  unsigned N = std::min(Call.NA + Call.NB + Call.NC, 2 * CollectiveSlot::MaxIn);
  for (unsigned I = 0; Call.Pack && I < (N + 1) / 2; ++I)
    Packed[I] = (Reg(2 * I) & 0xffffffffu) | (2 * I + 1 < N ? Reg(2 * I + 1) << 32 : 0);
  for (unsigned I = 0; !Call.Pack && I < N; ++I)
    Packed[I] = Reg(I);
  return Call.Pack ? (N + 1) / 2 : N;
}

/// A lane's D registers from its slot row O: Put(I, register I's bits).
template <class PutFn> void unpackOutputs(const MmaCall &Call, const uint64_t *O, PutFn &&Put) {
  unsigned ND = std::min<unsigned>(Call.ND, 2 * CollectiveSlot::MaxOut);
  for (unsigned I = 0; I < ND; ++I)
    Put(I, ND > CollectiveSlot::MaxOut ? (O[I / 2] >> (32 * (I & 1))) & 0xffffffffu : O[I]);
}

/// A lane's inputs (Regs, as the lowering writes them) as its slot row; returns the row's words.
unsigned packMmaInputs(const MmaCall &Call, const void *Regs, uint64_t *Packed) {
  // Loads as wide as the generated code's stores, which they read right after: a wider load would wait for the
  // stores to retire instead of taking their data (a fifth of a wmma loop's time, as `rep movs` or masked moves).
  const auto *In32 = static_cast<const uint32_t *>(Regs);
  const auto *In64 = static_cast<const uint64_t *>(Regs);
  if (mmaWords(Call))
    return packInputs(
        Call, [&](unsigned I) -> uint64_t { return In32[I]; }, Packed);
  return packInputs(
      Call, [&](unsigned I) { return In64[I]; }, Packed);
}

/// A lane's D registers from its slot row O into its buffer (after the inputs).
void unpackMmaOutputs(const MmaCall &Call, const uint64_t *O, void *Regs) {
  void *Out = static_cast<char *>(Regs) + mmaOutOffset(Call);
  if (mmaWords(Call))
    unpackOutputs(Call, O, [&](unsigned I, uint64_t V) { static_cast<uint32_t *>(Out)[I] = static_cast<uint32_t>(V); });
  else
    unpackOutputs(Call, O, [&](unsigned I, uint64_t V) { static_cast<uint64_t *>(Out)[I] = V; });
}

/// One product of a batch for the slot's participants, each lane's registers in its words (LaneWords[L]) at the
/// places Idx names (its A, B, C registers, then D's).
void computeBatchProduct(CollectiveSlot &S, const MmaCall &Call, const uint32_t *Idx, uint64_t *const *LaneWords,
                         bool KeepA) {
  bool Words = mmaWords(Call);
  forLanes(S.Participants, [&](uint32_t L) {
    const uint64_t *W = LaneWords[L];
    packInputs(
        Call, [&](unsigned I) { return Words ? W[Idx[I]] & 0xffffffffu : W[Idx[I]]; }, S.In[L]);
  });
  computeMma(S, Call, KeepA);
  const uint32_t *OutIdx = Idx + Call.NA + Call.NB + Call.NC;
  forLanes(S.Participants, [&](uint32_t L) {
    uint64_t *W = LaneWords[L];
    unpackOutputs(Call, S.Out[L], [&](unsigned I, uint64_t V) { W[OutIdx[I]] = Words ? V & 0xffffffffu : V; });
  });
}

/// Whether product P of a batch multiplies the A that product Prev just did (a GEMM's unrolled k step: one row
/// of A tiles against every column of B tiles): the same shape, A type and A registers, none of them Prev's D.
bool sameA(const uint32_t *Prev, const uint32_t *P) {
  MmaCall Before = mmaCall(Prev[0], Prev[1]), Call = mmaCall(P[0], P[1]);
  constexpr uint32_t ShapeAndA = 0xff | 1u << 21 | 1u << 23;
  if ((Before.Code & ShapeAndA) != (Call.Code & ShapeAndA) || Before.NA != Call.NA ||
      !std::equal(P + 2, P + 2 + Call.NA, Prev + 2))
    return false;
  const uint32_t *D = Prev + 2 + Before.NA + Before.NB + Before.NC;
  return std::none_of(D, D + Before.ND,
                      [&](uint32_t W) { return std::find(P + 2, P + 2 + Call.NA, W) != P + 2 + Call.NA; });
}

/// ptxrt_mma_batch's products in order (Desc: {count, then per product: code, counts, the word of each of its
/// A, B, C and D registers}; lower/MatrixOps.cpp lowerMmaBatch): a later product reads what an earlier one wrote.
void computeMmaBatch(CollectiveSlot &S, const uint32_t *Desc, uint64_t *const *LaneWords) {
  if (S.Participants == 0xffffffffu && computeWarpMmaBatch(Desc, LaneWords))
    return;
  loadBatchFragments(Desc, S.Participants, LaneWords);
  const uint32_t *P = Desc + 1, *Prev = nullptr;
  for (uint32_t I = 0; I < Desc[0]; ++I) {
    MmaCall Call = mmaCall(P[0], P[1]);
    computeBatchProduct(S, Call, P + 2, LaneWords, Prev && sameA(Prev, P));
    Prev = P;
    P += 2 + Call.NA + Call.NB + Call.NC + Call.ND;
  }
}

} // namespace

namespace {
uint32_t equalLanesScalar(const uint64_t *Values, uint64_t V) {
  uint32_t M = 0;
  for (uint32_t J = 0; J < 32; ++J)
    M |= static_cast<uint32_t>(Values[J] == V) << J;
  return M;
}

[[gnu::target("avx2")]] uint32_t equalLanesAvx2(const uint64_t *Values, uint64_t V) {
  __m256i X = _mm256_set1_epi64x(static_cast<long long>(V));
  uint32_t M = 0;
  for (unsigned K = 0; K < 8; ++K) {
    __m256i Y = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(Values + 4 * K));
    M |= static_cast<uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(X, Y)))) << (4 * K);
  }
  return M;
}

[[gnu::target("avx512f")]] uint32_t equalLanesAvx512(const uint64_t *Values, uint64_t V) {
  __m512i X = _mm512_set1_epi64(static_cast<long long>(V));
  uint32_t M = 0;
  for (unsigned K = 0; K < 4; ++K)
    M |= static_cast<uint32_t>(_mm512_cmpeq_epi64_mask(X, _mm512_loadu_si512(Values + 8 * K))) << (8 * K);
  return M;
}
} // namespace

uint32_t ptxforge::codegen::exec::equalLanes(const uint64_t *Values, uint64_t V) {
  static uint32_t (*const Best)(const uint64_t *, uint64_t) = __builtin_cpu_supports("avx512f") ? equalLanesAvx512
                                                              : __builtin_cpu_supports("avx2")  ? equalLanesAvx2
                                                                                                : equalLanesScalar;
  return Best(Values, V);
}

void ptxforge::codegen::exec::computeShfl(CollectiveSlot &S) {
  shflLanes(
      S.Participants,
      [&](uint32_t L) {
        return ShflIn{S.In[L][0], static_cast<uint32_t>(S.In[L][1]), static_cast<uint32_t>(S.In[L][2]),
                      static_cast<uint32_t>(S.In[L][3])};
      },
      [&](uint32_t L, uint32_t V, bool P) { S.Out[L][0] = V, S.Out[L][1] = P; });
}

void ptxforge::codegen::exec::computeVote(CollectiveSlot &S) {
  voteLanes(
      S.Participants,
      [&](uint32_t L) { return std::pair<bool, uint32_t>(S.In[L][0] & 1, static_cast<uint32_t>(S.In[L][1])); },
      [&](uint32_t L, uint32_t R) { S.Out[L][0] = R; });
}

void ptxforge::codegen::exec::computeMatch(CollectiveSlot &S) {
  uint64_t Values[32] = {}; // a contiguous copy (the slot's rows are 96 bytes apart)
  forLanes(S.Participants, [&](uint32_t L) { Values[L] = S.In[L][0]; });
  matchLanes(S.Participants, S.In[__builtin_ctz(S.Participants)][1] != 0, Values,
             [&](uint32_t L, uint32_t M, bool P) { S.Out[L][0] = M, S.Out[L][1] = P; });
}

void ptxforge::codegen::exec::computeRedux(CollectiveSlot &S) {
  reduxLanes(
      S.Participants,
      [&](uint32_t L) {
        return std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(S.In[L][0]), static_cast<uint32_t>(S.In[L][1]));
      },
      [&](uint32_t L, uint32_t R) { S.Out[L][0] = R; });
}

extern "C" {

/// shfl.sync: Mode 0 up, 1 down, 2 bfly, 3 idx. *Pred receives the in-range predicate.
static uint32_t ptxrt_shfl(ThreadContext *C, uint32_t Mode, uint32_t Val, uint32_t Bv, uint32_t Cv, uint32_t Mask,
                           uint32_t *Pred) {
  uint64_t In[4] = {Val, Bv, Cv, Mode}, Out[2];
  collective(C, CKShfl, Mask, 0, In, 4, Out, 2, computeShfl);
  if (Pred)
    *Pred = static_cast<uint32_t>(Out[1]);
  return static_cast<uint32_t>(Out[0]);
}

/// vote.sync: Mode 0 all, 1 any, 2 uni, 3 ballot.
static uint32_t ptxrt_vote(ThreadContext *C, uint32_t Mode, uint32_t Pred, uint32_t Mask) {
  uint64_t In[2] = {Pred != 0, Mode}, Out[1];
  collective(C, CKVote, Mask, 0, In, 2, Out, 1, computeVote);
  return static_cast<uint32_t>(Out[0]);
}

/// match.any.sync (All = 0) / match.all.sync (All = 1).
static uint32_t ptxrt_match(ThreadContext *C, uint32_t All, uint64_t Val, uint32_t Mask, uint32_t *Pred) {
  uint64_t In[2] = {Val, All}, Out[2];
  collective(C, All ? CKMatchAll : CKMatchAny, Mask, 0, In, 2, Out, 2, computeMatch);
  if (Pred)
    *Pred = static_cast<uint32_t>(Out[1]);
  return static_cast<uint32_t>(Out[0]);
}

/// redux.sync: Op 0 add, 1 min.u32, 2 max.u32, 3 min.s32, 4 max.s32, 5 and, 6 or, 7 xor.
static uint32_t ptxrt_redux(ThreadContext *C, uint32_t Op, uint32_t Val, uint32_t Mask) {
  uint64_t In[2] = {Val, Op}, Out[1];
  collective(C, CKRedux, Mask, Op, In, 2, Out, 1, computeRedux);
  return static_cast<uint32_t>(Out[0]);
}

/// activemask: the lanes that reach this instruction together (see slotComplete).
static uint32_t ptxrt_activemask(ThreadContext *C, uint32_t Site) {
  uint64_t Out[1];
  collective(C, CKActivemask, 0, Site, nullptr, 0, Out, 1,
             [](CollectiveSlot &S) { forLanes(S.Participants, [&](uint32_t L) { S.Out[L][0] = S.Participants; }); });
  return static_cast<uint32_t>(Out[0]);
}

/// elect.sync: returns the leader's lane id, *Pred = this lane is the leader.
static uint32_t ptxrt_elect(ThreadContext *C, uint32_t Mask, uint32_t *Pred) {
  uint64_t Out[1];
  collective(C, CKElect, Mask, 0, nullptr, 0, Out, 1, [](CollectiveSlot &S) {
    uint32_t Leader = static_cast<uint32_t>(__builtin_ctz(S.Participants));
    forLanes(S.Participants, [&](uint32_t L) { S.Out[L][0] = Leader; });
  });
  if (Pred)
    *Pred = Out[0] == C->LaneId;
  return static_cast<uint32_t>(Out[0]);
}

/// bar.warp.sync: waits until every non-exited lane of the mask has reached a warp sync.
static void ptxrt_warp_sync(ThreadContext *C, uint32_t Mask) {
  collective(C, CKWarpSync, Mask, 0, nullptr, 0, nullptr, 0, [](CollectiveSlot &) {});
}

/// ldmatrix.m8n8.x{Num}(.trans).b16: Addr is this lane's row address (host pointer), Mode Num * 2 + Trans; Out
/// gets Num registers.
static void ptxrt_ldmatrix(ThreadContext *C, const char *Addr, uint32_t Mode, uint32_t *Out) {
  uint64_t In[3] = {reinterpret_cast<uint64_t>(Addr), Mode / 2, Mode & 1}, O[4];
  unsigned Num = Mode / 2;
  collective(C, CKLdmatrix, 0xffffffffu, Mode, In, 3, O, 4, computeLdmatrix);
  for (unsigned I = 0; I < Num && I < 4; ++I)
    Out[I] = static_cast<uint32_t>(O[I]);
}

/// stmatrix.m8n8.x{Num}(.trans).b16: Addr is this lane's row address, Mode as ldmatrix's; Regs its Num fragment
/// registers.
static void ptxrt_stmatrix(ThreadContext *C, char *Addr, uint32_t Mode, const uint32_t *Regs) {
  uint64_t In[7];
  stmatrixInputs(reinterpret_cast<uint64_t>(Addr), Mode, Regs, In);
  collective(C, CKStmatrix, 0xffffffffu, Mode, In, 7, nullptr, 0, computeStmatrix);
}

/// Byte Col of the 16-byte row at P, as an ldmatrix b8 form reads it: Form 0 the byte itself, 1 (.b4x16_p64) the
/// Col-th 4-bit element of the row's first 8 bytes, 2 (.b6x16_p32) the Col-th 6-bit element of its first 12 bytes
/// (elements packed from bit 0 up), zero-extended into the byte as the f8f6f4 mma containers want fp6 (fp4 then
/// needs a shift by two, as CUTLASS does).
static uint32_t rowElement(const unsigned char *P, uint32_t Form, unsigned Col) {
  if (Form == 1)
    return P[Col / 2] >> (4 * (Col & 1)) & 15;
  if (Form == 2) {
    unsigned Bit = 6 * Col;
    return (P[Bit / 8] | uint32_t(P[Bit / 8 + 1]) << 8) >> (Bit % 8) & 63;
  }
  return P[Col];
}

/// ldmatrix's sm_100 b8 forms (CUTLASS's SM100 LDSM layouts): Form 0 .m16n16.trans.b8 (Num matrices, two registers
/// each): register j, byte b of lane l is byte l/4 + 8 (b/2) of the row lane (b mod 2) + 2 (j mod 2) + 4 (l mod 4) +
/// 16 (j/2) addresses; Forms 1 and 2 .m8n16.b8x16 (one register per matrix): register j, byte b of lane l is
/// element 4 (l mod 4) + b of the row lane l/4 + 8j addresses. Lanes that address no row read zeros.
static void ptxrt_ldmatrix_b8(ThreadContext *C, const char *Addr, uint32_t Form, uint32_t Num, uint32_t *Out) {
  uint64_t In[3] = {reinterpret_cast<uint64_t>(Addr), Form, Num}, O[4];
  collective(C, CKLdmatrix, 0xffffffffu, 0x200 | Form << 4 | Num, In, 3, O, 4, [](CollectiveSlot &S) {
    uint32_t First = static_cast<uint32_t>(__builtin_ctz(S.Participants));
    uint32_t Form = static_cast<uint32_t>(S.In[First][1]), Regs = static_cast<uint32_t>(S.In[First][2]);
    if (Form == 0)
      Regs *= 2;
    forLanes(S.Participants, [&](uint32_t L) {
      for (unsigned J = 0; J < Regs && J < 4; ++J) {
        uint32_t W = 0;
        for (unsigned B = 0; B < 4; ++B) {
          unsigned Row = Form == 0 ? (B & 1) + 2 * (J & 1) + 4 * (L % 4) + 16 * (J / 2) : L / 4 + 8 * J;
          unsigned Col = Form == 0 ? L / 4 + 8 * (B / 2) : 4 * (L % 4) + B;
          if (S.Participants >> Row & 1)
            W |= rowElement(reinterpret_cast<const unsigned char *>(S.In[Row][0]), Form, Col) << (8 * B);
        }
        S.Out[L][J] = W;
      }
    });
  });
  for (unsigned I = 0; I < (Form == 0 ? 2 * Num : Num) && I < 4; ++I)
    Out[I] = static_cast<uint32_t>(O[I]);
}

/// stmatrix.m16n8.x{Num}.trans.b8 (CUTLASS's SM100 STSM layouts): byte c of the row lane r addresses is byte
/// (r mod 2) + 2 (c/8) of register r/8 of lane 4 (c mod 8) + (r mod 8)/2.
static void ptxrt_stmatrix_b8(ThreadContext *C, char *Addr, uint32_t Num, const uint32_t *Regs) {
  uint64_t In[6] = {reinterpret_cast<uint64_t>(Addr), Num, 0, 0, 0, 0};
  for (unsigned I = 0; I < Num && I < 4; ++I)
    In[2 + I] = Regs[I];
  collective(C, CKStmatrix, 0xffffffffu, 0x200 | Num, In, 6, nullptr, 0, [](CollectiveSlot &S) {
    uint32_t Num = static_cast<uint32_t>(S.In[__builtin_ctz(S.Participants)][1]);
    for (unsigned R = 0; R < 8 * Num && R < 32; ++R) {
      if (!(S.Participants >> R & 1))
        continue;
      auto *Row = reinterpret_cast<unsigned char *>(S.In[R][0]);
      for (unsigned Col = 0; Col < 16; ++Col) {
        unsigned Lane = 4 * (Col % 8) + (R % 8) / 2, Byte = (R % 2) + 2 * (Col / 8);
        Row[Col] = static_cast<unsigned char>(S.In[Lane][2 + R / 8] >> (8 * Byte));
      }
    }
  });
}

/// movmatrix.sync.aligned.m8n8.trans.b16: transposes the 8x8 fragment held by the warp.
static uint32_t ptxrt_movmatrix(ThreadContext *C, uint32_t A) {
  uint64_t In[1] = {A}, Out[1];
  collective(C, CKLdmatrix, 0xffffffffu, 0x100, In, 1, Out, 1, computeMovmatrix);
  return static_cast<uint32_t>(Out[0]);
}

/// mma.sync / wmma.mma.sync. Code: bits 0-3 shape, 4-7 A type, 8-11 B type, 12-15 C type, 16-19 D type,
/// bit 20 satfinite, bit 21 registers as 32-bit words, bit 23 wmma. Counts: NA | NB << 8 | NC << 16 | ND << 24.
/// Regs: NA A registers, NB B registers, NC C registers (64-bit words, or 32-bit ones with bit 21, padded to an
/// even count), then room for the ND D registers, which it writes, alike.
static void ptxrt_mma(ThreadContext *C, uint32_t Code, uint32_t Counts, void *Regs) {
  MmaCall Call = mmaCall(Code, Counts);
  uint64_t Packed[CollectiveSlot::MaxIn], O[CollectiveSlot::MaxOut];
  unsigned NIn = packMmaInputs(Call, Regs, Packed);
  uint32_t Key = Code ^ (Call.NA << 24) ^ (Call.NB << 27);
  collective(C, Code & (1u << 23) ? CKWmma : CKMma, 0xffffffffu, Key, Packed, NIn, O,
             std::min<unsigned>(Call.ND, CollectiveSlot::MaxOut), [=](CollectiveSlot &S) { computeMma(S, Call); });
  unpackMmaOutputs(Call, O, Regs);
}

/// A run of products as one collective (lower/MatrixOps.cpp lowerMmaBatch): Key tells runs apart, Desc says
/// what each computes, Words holds the lane's registers, which the products read and write in place.
static void ptxrt_mma_batch(ThreadContext *C, uint32_t Key, const uint32_t *Desc, uint64_t *Words) {
  uint64_t In = reinterpret_cast<uint64_t>(Words);
  collective(C, CKMmaBatch, 0xffffffffu, Key, &In, 1, nullptr, 0, [=](CollectiveSlot &S) {
    uint64_t *LaneWords[32];
    forLanes(S.Participants, [&](uint32_t L) { LaneWords[L] = reinterpret_cast<uint64_t *>(S.In[L][0]); });
    computeMmaBatch(S, Desc, LaneWords);
  });
}

/// A wmma.load or wmma.store in which lane Lane's registers are one run of memory (MatrixCompute.h
/// wmmaRunAccess). Powers of two and fixed-size copies: a few cycles, where ptxrt_wmma_ldst's walk took a sixth
/// of a GEMM's time.
static void ptxrt_wmma_run(uint32_t Lane, uint32_t Layout, uint32_t Stride, char *Ptr, uint64_t *Regs) {
  wmmaRunAccess(Lane, Layout, Stride, Ptr, Regs);
}

/// wmma.load.{a,b,c} (Which 0/1/2) and wmma.store.d (Which 3): per-lane accesses in this implementation's
/// fragment layout (see wmmaPos). Code as for ptxrt_mma; T is the element type of the fragment; ColMajor the
/// memory layout; Stride the leading dimension in elements.
static void ptxrt_wmma_ldst(ThreadContext *C, uint32_t Code, uint32_t Which, uint32_t T, uint32_t ColMajor, char *Ptr,
                            uint32_t Stride, uint32_t NRegs, uint64_t *Regs) {
  MmaShape Sh = shapeOf(Code);
  unsigned R = Which == 0 ? Sh.M : Which == 1 ? Sh.K : Sh.M;
  unsigned Cc = Which == 0 ? Sh.K : Sh.N;
  unsigned Bits = elemBits(T), Bytes = std::max(1u, Bits / 8);
  unsigned E = Bits == 64 ? NRegs : NRegs * std::max(1u, 32 / Bits);
  bool FragColMajor = Which == 1;
  if (Which != 3)
    for (unsigned I = 0; I < NRegs; ++I)
      Regs[I] = 0;
  // The lane's elements are consecutive in the fragment's order: step from the first one's position.
  unsigned Row, Col;
  wmmaPos(R, Cc, FragColMajor, E, C->LaneId, 0, Row, Col);
  if (ColMajor == FragColMajor && Bits >= 8 && E * Bytes <= 256) {
    // Memory in the fragment's order: the elements are runs of whole rows (columns), copied as bytes.
    unsigned Len = FragColMajor ? R : Cc, Lines = FragColMajor ? Cc : R;
    unsigned Minor = FragColMajor ? Row : Col, Major = FragColMajor ? Col : Row;
    alignas(8) char Buf[256];
    if (Which == 3)
      for (unsigned I = 0; I < NRegs; ++I)
        storeElem(Buf + I * (Bits == 64 ? 8 : 4), Bits == 64 ? 8 : 4, Regs[I]);
    for (unsigned Done = 0; Done < E; Minor = 0, Major = Major + 1 == Lines ? 0 : Major + 1) {
      unsigned Run = std::min(E - Done, Len - Minor);
      char *P = Ptr + (uint64_t(Major) * Stride + Minor) * Bytes;
      unsigned N = Run * Bytes; // whole words (the usual case) without a call to memcpy per run
      char *Dst = Which == 3 ? P : Buf + Done * Bytes;
      const char *Src = Which == 3 ? Buf + Done * Bytes : P;
      if (N % 4 == 0)
        copyWords(Dst, Src, N / 4);
      else
        memcpy(Dst, Src, N);
      Done += Run;
    }
    if (Which != 3)
      for (unsigned I = 0; I < NRegs; ++I)
        Regs[I] = loadElem(Buf + I * (Bits == 64 ? 8 : 4), Bits == 64 ? 8 : 4);
    return;
  }
  for (unsigned I = 0; I < E; ++I, nextPosition(R, Cc, FragColMajor, Row, Col)) {
    uint64_t Off = ColMajor ? uint64_t(Col) * Stride + Row : uint64_t(Row) * Stride + Col;
    char *P = Ptr + Off * Bytes;
    if (Which == 3)
      storeElem(P, Bytes, fragElem(Regs, T, I));
    else
      setFragElem(Regs, T, I, loadElem(P, Bytes));
  }
}
}

void ptxforge::codegen::exec::registerWarpHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_shfl), PTXRT_HELPER(ptxrt_vote), PTXRT_HELPER(ptxrt_match),
                     PTXRT_HELPER(ptxrt_redux), PTXRT_HELPER(ptxrt_activemask), PTXRT_HELPER(ptxrt_elect),
                     PTXRT_HELPER(ptxrt_warp_sync), PTXRT_HELPER(ptxrt_ldmatrix), PTXRT_HELPER(ptxrt_stmatrix),
                     PTXRT_HELPER(ptxrt_ldmatrix_b8), PTXRT_HELPER(ptxrt_stmatrix_b8), PTXRT_HELPER(ptxrt_mma),
                     PTXRT_HELPER(ptxrt_mma_batch), PTXRT_HELPER(ptxrt_movmatrix), PTXRT_HELPER(ptxrt_wmma_ldst),
                     PTXRT_HELPER(ptxrt_wmma_run)});
  registerRegionHelpers(T);
}

void ptxforge::codegen::exec::warpCollective(ThreadContext *C, uint32_t Kind, uint32_t Site, const uint64_t *In,
                                             unsigned NIn, void (*Compute)(CollectiveSlot &, void *), void *Arg) {
  collective(C, Kind, 0xffffffffu, Site, In, NIn, nullptr, 0, [&](CollectiveSlot &S) { Compute(S, Arg); });
}

unsigned ptxforge::codegen::exec::matrixElementBits(uint32_t T) { return elemBits(T); }

MmaShape ptxforge::codegen::exec::mmaShapeOf(uint32_t Code) { return shapeOf(Code); }

double ptxforge::codegen::exec::decodeMatrixElement(uint32_t T, uint64_t Bits) { return decode(T, Bits); }

void ptxforge::codegen::exec::mmaProduct(uint32_t Code, unsigned M, unsigned N, unsigned K, const double *A,
                                         const double *B, const double *C, uint64_t *D) {
  uint32_t TD = (Code >> 16) & 15;
  bool Int = TD == ETS32;
  double Sums[256];
  int64_t DI[256];
  multiplyMatrices(M, N, K, A, B, C, Sums, ((Code >> 4) & 15) != ETF64);
  if (Int)
    integerResults(Sums, M * N, Code >> 20 & 1, DI);
  for (unsigned I = 0; I < M * N; ++I)
    D[I] = Int ? static_cast<uint32_t>(DI[I]) : encodeFloat(TD, Sums[I]);
}

void ptxforge::codegen::exec::computeMatrixCut(uint32_t Kind, uint32_t Arg, uint32_t Participants,
                                               const MatrixLane *Lanes, uint32_t *Out) {
  // The fiber mode's slot, filled from the lanes' deposits: one per worker, as the product's scratch.
  thread_local std::unique_ptr<CollectiveSlot> Slot;
  if (!Slot)
    Slot = std::make_unique<CollectiveSlot>();
  CollectiveSlot &S = *Slot;
  S.Participants = Participants;
  auto regs = [&](uint32_t L) { return reinterpret_cast<void *>(Lanes[L].Buffer); };
  switch (Kind) {
  case RCMmaBatch: {
    uint64_t *LaneWords[32];
    forLanes(Participants, [&](uint32_t L) { LaneWords[L] = reinterpret_cast<uint64_t *>(Lanes[L].Buffer); });
    computeMmaBatch(S, reinterpret_cast<const uint32_t *>(Lanes[__builtin_ctz(Participants)].Value), LaneWords);
    return;
  }
  case RCMma: {
    MmaCall Call = mmaCall(Arg, Lanes[__builtin_ctz(Participants)].Counts);
    forLanes(Participants, [&](uint32_t L) { packMmaInputs(Call, regs(L), S.In[L]); });
    computeMma(S, Call);
    forLanes(Participants, [&](uint32_t L) { unpackMmaOutputs(Call, S.Out[L], regs(L)); });
    return;
  }
  case RCLdmatrix:
    forLanes(Participants,
             [&](uint32_t L) { S.In[L][0] = Lanes[L].Value, S.In[L][1] = Arg / 2, S.In[L][2] = Arg & 1; });
    computeLdmatrix(S);
    forLanes(Participants, [&](uint32_t L) {
      for (unsigned I = 0; I < Arg / 2 && I < 4; ++I)
        static_cast<uint32_t *>(regs(L))[I] = static_cast<uint32_t>(S.Out[L][I]);
    });
    return;
  case RCStmatrix:
    forLanes(Participants,
             [&](uint32_t L) { stmatrixInputs(Lanes[L].Value, Arg, static_cast<const uint32_t *>(regs(L)), S.In[L]); });
    computeStmatrix(S);
    return;
  default: // movmatrix
    forLanes(Participants, [&](uint32_t L) { S.In[L][0] = Lanes[L].Value; });
    computeMovmatrix(S);
    forLanes(Participants, [&](uint32_t L) { Out[L] = static_cast<uint32_t>(S.Out[L][0]); });
    return;
  }
}
