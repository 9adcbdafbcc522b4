// wgmma.mma_async: the warpgroup's D (64 x N) = A (64 x K) * B (K x N) + scale-d * D, run at once (the
// asynchronous product completes before wgmma.commit_group/wait_group, a legal schedule). Warp w of the
// warpgroup owns rows 16w..16w+15 of A and D, so each warp's product is independent of the others': with A in
// shared memory every thread computes its own D elements; with A in registers a warp collective gathers the
// warp's A fragments first. B (and A) in shared memory follow the matrix descriptors' canonical layouts.
// wgmma.mma_async.sp doubles K: A holds the stored half of each row (64 x K/2, in registers or behind a
// descriptor laid out as a dense A of K/2 columns), and each warp's 16 rows expand by its lanes' metadata words
// exactly as mma.sp's m16n8 rows do (MatrixCompute.h expandSparseRows; tests/conformance/cases/wgmma/sp_*, an
// H200: every thread's metadata valid, so another lane or bit would have shown), so a sparse product is always
// a warp collective.
//
// Descriptor: bits 0-13 start address >> 4, 16-29 leading dimension byte offset (LBO) >> 4, 32-45 stride
// dimension byte offset (SBO) >> 4, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B). In the K-major layout
// (no transpose) 8 rows of 16 bytes make a core matrix: without swizzle the rows of one are consecutive, core
// matrices LBO apart along K and SBO apart along M/N; with a swizzle of S bytes a row's K extent lies in an
// S-byte row, 8 such rows consecutive, groups of 8 rows SBO apart. In the MN-major layout (transposed) 16 bytes
// along M/N make a row and 8 rows (consecutive along K) a core matrix: without swizzle those core matrices are
// SBO apart along M/N and LBO apart along K; with a swizzle S bytes along M/N make a row, 8 rows are
// consecutive, S-byte blocks along M/N are LBO apart and groups of 8 rows along K are SBO apart. A swizzle then
// moves 16-byte chunks as the tensor copies do (swizzleSharedOffset).
//
// tcgen05 (sm_100a; no GPU here has it): alloc/dealloc/relinquish_alloc_permit, ld/st (.32x32b, .16x64b, .16x128b,
// .16x256b, .16x32bx2, with .pack::16b/.unpack::16b; sm_103a's ld.red), cp (every shape, the .b8x16 decompressing
// forms, cta_group::2), shift.down, mma(.ws, with its zero-column mask).cta_group::1 and mma.cta_group::2, the
// block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4 with their scale factors in Tensor Memory; one CTA or a pair), and
// .sp/.ws.sp (2:4, tf32's 1:2, or the fp4 kinds' pairwise 4:8, with the metadata in Tensor Memory; one CTA's M = 128,
// .ws, a pair's M = 256) with B behind a shared-memory descriptor and A behind one or in Tensor Memory (kinds f16,
// tf32, f8f6f4 with e4m3/e5m2/e2m3/e3m2/e2m1, i8; M = 64 and 128, .ws M = 32, 64, 128, a pair's M = 128 and 256; f32,
// f16 or s32 D), from the ISA's definitions and CuTe's Tensor Memory layouts, and the products by the same
// descriptor layouts and arithmetic as wgmma's. Refused at run time, their layouts being figures in the ISA: .sp at
// M = 64 without .ws and at a pair's M = 128 (Layout C), f16/tf32 sparsity selectors other than 0, the mxf4 kinds'
// K = 96.
#include "MatrixCompute.h"
#include "Runtime.h"
#include "ptxforge/codegen/MatrixElements.h"

#include "ptxforge/codegen/TensorMap.h"

#include "llvm/ADT/bit.h"

#include "Cluster.h"
#include "LaunchStop.h"
#include "WarpCompute.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sched.h>
#include <string>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

struct WgmmaCall {
  uint32_t AType, BType, DType, N, Flags;
  uint64_t ADesc, BDesc;
  uint32_t ScaleD;
};

unsigned typeBytes(uint32_t T) { return T == MEF16 || T == MEBF16 ? 2 : T == METF32 ? 4 : 1; }
/// K of a product step: 32 bytes of each row of A and B (64 for e2m1, two to a byte).
unsigned kOf(uint32_t T) { return T == MEE2M1 ? 64 : 32 / typeBytes(T); }

/// An e2m1 (fp4) value: sign, two exponent bits (bias 1), one mantissa bit.
double e2m1Value(uint32_t Bits) {
  static constexpr double Magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (Bits & 8 ? -1 : 1) * Magnitudes[Bits & 7];
}

double decode(uint32_t T, uint32_t Bits) {
  switch (T) {
  case MEF16:
    return halfToFloat(static_cast<uint16_t>(Bits));
  case MEBF16:
    return bf16ToFloat(static_cast<uint16_t>(Bits));
  case METF32: {
    uint32_t U = Bits & 0xffffe000u; // the 10 mantissa bits tf32 keeps
    float F;
    memcpy(&F, &U, 4);
    return F;
  }
  case MES8:
    return static_cast<int8_t>(Bits);
  case MEU8:
    return static_cast<uint8_t>(Bits);
  case MEE4M3:
    return fp8ToDouble(Bits & 0xff, false);
  case MEE5M2:
    return fp8ToDouble(Bits & 0xff, true);
  case MEE2M1:
  case MEE2M1Byte: // an 8-bit container's low bits, where tcgen05.cp's decompression puts them
    return e2m1Value(Bits & 15);
  case MEE2M3:
    return miniFloat(Bits & 63, 2, 3);
  case MEE3M2:
    return miniFloat(Bits & 63, 3, 2);
  default:
    return 0;
  }
}

/// The shared-memory window offset of element (MN, K) of a descriptor's matrix (Trans: MN-major).
uint32_t descOffset(uint64_t Desc, unsigned MN, unsigned K, unsigned Bytes, bool Trans) {
  uint32_t Start = static_cast<uint32_t>(Desc & 0x3fff) << 4, LBO = static_cast<uint32_t>((Desc >> 16) & 0x3fff) << 4,
           SBO = static_cast<uint32_t>((Desc >> 32) & 0x3fff) << 4;
  static constexpr unsigned Spans[4] = {0, 128, 64, 32};
  unsigned S = Spans[Desc >> 62];
  uint32_t Off;
  if (!Trans) {
    unsigned KB = K * Bytes;
    Off = S ? Start + (MN / 8) * SBO + (MN % 8) * S + KB
            : Start + (MN / 8) * SBO + (KB / 16) * LBO + (MN % 8) * 16 + KB % 16;
  } else {
    unsigned MB = MN * Bytes;
    Off = S ? Start + MB % S + (MB / S) * LBO + (K % 8) * S + (K / 8) * SBO
            : Start + (MB / 16) * SBO + MB % 16 + (K % 8) * 16 + (K / 8) * LBO;
  }
  return swizzleSharedOffset(Off, S);
}

/// Whether T is an fp6 or fp4 type with a byte's place in the layout (tcgen05.mma's f8f6f4 kinds).
bool narrowType(uint32_t T) { return T == MEE2M3 || T == MEE3M2 || T == MEE2M1Byte; }

double loadElem(const char *Shared, uint64_t Desc, unsigned MN, unsigned K, uint32_t T, bool Trans) {
  if (T == MEE2M1) // two to a byte along K, the low nibble first (K-major only: the mxf4 kinds do not transpose)
    return decode(T, static_cast<uint8_t>(Shared[descOffset(Desc, MN, K / 2, 1, false)]) >> (4 * (K % 2)));
  if (narrowType(T)) { // each 16 bytes of the 8-bit layout: 16 elements packed from bit 0, then padding (K-major)
    unsigned Width = T == MEE2M1Byte ? 4 : 6, Bit = Width * (K % 16);
    uint32_t Off = descOffset(Desc, MN, 16 * (K / 16) + Bit / 8, 1, false);
    uint32_t Two = static_cast<uint8_t>(Shared[Off]) | uint32_t(static_cast<uint8_t>(Shared[Off + 1])) << 8;
    return decode(T, Two >> (Bit % 8));
  }
  unsigned Bytes = typeBytes(T);
  uint32_t Bits = 0;
  memcpy(&Bits, Shared + descOffset(Desc, MN, K, Bytes, Trans), Bytes);
  return decode(T, Bits);
}

/// Row and column (within the warp's 16 rows) of element I of a lane's D fragment.
void dPosition(unsigned Lane, unsigned I, unsigned &Row, unsigned &Col) {
  Row = Lane / 4 + 8 * ((I / 2) % 2);
  Col = (I / 4) * 8 + 2 * (Lane % 4) + (I % 2);
}

uint16_t toHalf(double D) {
  if (std::isnan(D))
    return 0x7fff;
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(D));
}

/// K of the call's product: the dense K of its A type, twice that for a sparse A.
unsigned productK(const WgmmaCall &W) { return (W.Flags & WgSparse ? 2 : 1) * kOf(W.AType); }

/// One lane's D update: A is the warp's 16 x K slice (row-major, signs applied), D the lane's D registers.
void laneProduct(const char *Shared, const WgmmaCall &W, const double *A, unsigned Lane, uint32_t *D) {
  unsigned K = productK(W);
  double SignB = (W.Flags & WgNegB) ? -1.0 : 1.0;
  bool Int = W.DType == MES32, Half = W.DType == MEF16;
  for (unsigned I = 0; I < W.N / 2; ++I) {
    unsigned Row, Col;
    dPosition(Lane, I, Row, Col);
    double Acc = 0;
    int64_t IAcc = 0;
    if (W.ScaleD) {
      if (Half)
        Acc = halfToFloat(static_cast<uint16_t>(D[I / 2] >> (16 * (I % 2))));
      else if (Int)
        IAcc = static_cast<int32_t>(D[I]);
      else
        Acc = llvm::bit_cast<float>(D[I]);
    }
    for (unsigned Kk = 0; Kk < K; ++Kk) {
      double P = A[Row * K + Kk] * SignB * loadElem(Shared, W.BDesc, Col, Kk, W.BType, W.Flags & WgTransB);
      if (Int)
        IAcc += static_cast<int64_t>(P);
      else
        Acc += P;
    }
    if (Int) {
      if (W.Flags & WgSat)
        IAcc = std::clamp<int64_t>(IAcc, INT32_MIN, INT32_MAX);
      D[I] = static_cast<uint32_t>(IAcc);
    } else if (Half) {
      unsigned Sh = 16 * (I % 2);
      D[I / 2] = (D[I / 2] & ~(0xffffu << Sh)) | static_cast<uint32_t>(toHalf(Acc)) << Sh;
    } else {
      D[I] = llvm::bit_cast<uint32_t>(static_cast<float>(Acc));
    }
  }
}

/// The warp's 16 x K slice of A from the descriptor (rows 16 * Warp...).
void loadA(const char *Shared, const WgmmaCall &W, unsigned Warp, double *A) {
  unsigned K = kOf(W.AType);
  for (unsigned R = 0; R < 16; ++R)
    for (unsigned Kk = 0; Kk < K; ++Kk)
      A[R * K + Kk] = loadElem(Shared, W.ADesc, 16 * Warp + R, Kk, W.AType, W.Flags & WgTransA);
}

/// Element E of register Reg of lane Lane's A fragment: its row and column in the warp's 16 x K slice.
void aPosition(unsigned Lane, unsigned Reg, unsigned E, unsigned PerReg, unsigned K, unsigned &Row, unsigned &Col) {
  Row = Lane / 4 + 8 * (Reg % 2);
  Col = (Lane % 4) * PerReg + E + (K / 2) * (Reg / 2);
}

/// In words of a lane at the collective: A registers 0-3, then the D buffer, the call's fields, the lane's
/// sparsity metadata and its warp of the warpgroup.
enum InWord { InA0, InD = 4, InADesc, InBDesc, InTypes, InN, InMeta, InWarp, InNWords };

/// The warp's 16 x K slice of A from the lanes' registers (K the stored columns of a sparse A), unsigned.
void gatherA(const CollectiveSlot &S, const WgmmaCall &W, double *A) {
  unsigned K = kOf(W.AType), Bytes = typeBytes(W.AType), PerReg = 4 / Bytes;
  forLanes(S.Participants, [&](uint32_t L) {
    for (unsigned Reg = 0; Reg < 4; ++Reg)
      for (unsigned E = 0; E < PerReg; ++E) {
        unsigned Row, Col;
        aPosition(L, Reg, E, PerReg, K, Row, Col);
        uint32_t Bits = static_cast<uint32_t>(S.In[L][InA0 + Reg]) >> (8 * Bytes * E);
        A[Row * K + Col] = decode(W.AType, Bytes == 4 ? Bits : Bits & ((1u << (8 * Bytes)) - 1));
      }
  });
}

void computeWarp(CollectiveSlot &S, void *Shared) {
  uint32_t First = static_cast<uint32_t>(__builtin_ctz(S.Participants));
  const uint64_t *F = S.In[First];
  WgmmaCall W{static_cast<uint32_t>(F[InTypes] & 0xff),
              static_cast<uint32_t>((F[InTypes] >> 8) & 0xff),
              static_cast<uint32_t>((F[InTypes] >> 16) & 0xff),
              static_cast<uint32_t>(F[InN] & 0xffff),
              static_cast<uint32_t>(F[InTypes] >> 32),
              F[InADesc],
              F[InBDesc],
              static_cast<uint32_t>(F[InN] >> 32)};
  double A[16 * 64] = {}, Stored[16 * 32] = {};
  if (W.Flags & WgSparse) {
    if (W.Flags & WgARegs)
      gatherA(S, W, Stored);
    else
      loadA(static_cast<const char *>(Shared), W, static_cast<unsigned>(F[InWarp]), Stored);
    uint32_t Meta[32] = {};
    forLanes(S.Participants, [&](uint32_t L) { Meta[L] = static_cast<uint32_t>(S.In[L][InMeta]); });
    expandSparseRows(W.AType, productK(W), (W.Flags >> WgSelectorShift) & 3, Meta, Stored, A);
  } else {
    gatherA(S, W, A);
  }
  if (W.Flags & WgNegA)
    for (double &X : A)
      X = -X;
  forLanes(S.Participants, [&](uint32_t L) {
    laneProduct(static_cast<const char *>(Shared), W, A, L, reinterpret_cast<uint32_t *>(S.In[L][InD]));
  });
}

// ---- tcgen05 (sm_100a): a block's Tensor Memory is BlockState::Tmem, 128 lanes x 512 columns of 32 bits; a
// Tensor Memory address is lane << 16 | column. Its operations complete at once, so tcgen05.wait, fence and commit
// only order (commit arrives on its mbarrier at once).
constexpr uint32_t TmemLanes = 128, TmemColumns = 512;

/// The cell at lane Lane, column Col of block B's Tensor Memory; faults outside it or before any allocation.
uint32_t *tmemCellOf(ThreadContext *C, BlockState &B, uint32_t Lane, uint32_t Col, uint32_t Count, const char *What) {
  if (!B.Tmem || Lane >= TmemLanes || Col + uint64_t(Count) > TmemColumns)
    raiseFault(C, LaunchFault::IllegalAddress, std::string(What) + ": outside the allocated Tensor Memory", true);
  return &B.Tmem[Lane * TmemColumns + Col];
}

/// The cell at lane Lane, column Col of the caller's Tensor Memory.
uint32_t *tmemCell(ThreadContext *C, uint32_t Lane, uint32_t Col, uint32_t Count, const char *What) {
  return tmemCellOf(C, *C->Block, Lane, Col, Count, What);
}

/// The block of rank Rank of the caller's cluster running the caller's cluster (the caller's own block for its
/// rank), waiting up to a few seconds for it to start; faults when it does not (no cluster, no such rank), and
/// ends the block when the launch failed meanwhile (the peer may be the block that failed: LaunchStop.h).
BlockState &clusterBlockOf(ThreadContext *C, uint32_t Rank, const char *What) {
  ClusterState *S = C->Cluster;
  if (S && Rank == S->Rank)
    return *C->Block;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (S && Rank < S->Group->Size && std::chrono::steady_clock::now() < Deadline) {
    if (launchFailed())
      abandonBlock(C);
    {
      std::scoped_lock L(S->Group->TmemLock);
      if (S->Group->Running[Rank].Sequence.load(std::memory_order_acquire) == S->Sequence)
        return *S->Group->Running[Rank].Block.load(std::memory_order_relaxed);
    }
    sched_yield();
  }
  raiseFault(C, LaunchFault::IllegalInstruction, std::string(What) + ": the peer CTA of the pair is not running", true);
}

/// The lock over Tensor Memory allocations that a cluster's pairs share (none outside a cluster launch).
std::unique_lock<std::mutex> tmemAllocLock(ThreadContext *C) {
  return C->Cluster ? std::unique_lock<std::mutex>(C->Cluster->Group->TmemLock) : std::unique_lock<std::mutex>();
}

/// The first run of Units free 32-column units in every one of Blocks' Tensor Memories, marked used in each (made at
/// the first allocation); its column. The GPU waits until another warp deallocates; nothing here would, so that
/// faults, after letting go of the allocation lock L (a fault does not return).
uint32_t allocColumns(ThreadContext *C, std::unique_lock<std::mutex> &L, std::initializer_list<BlockState *> Blocks,
                      uint32_t Units) {
  uint32_t Mask = Units >= 32 ? ~0u : (1u << Units) - 1, Used = 0;
  const char *Why = "tcgen05.alloc: not enough free Tensor Memory";
  for (BlockState *B : Blocks) {
    if (B->TmemRelinquished)
      Why = "tcgen05.alloc after tcgen05.relinquish_alloc_permit", Used = ~0u;
    Used |= B->TmemUsed;
  }
  for (uint32_t First = 0; First + Units <= TmemColumns / 32; First += Units) {
    if (Used & (Mask << First))
      continue;
    for (BlockState *B : Blocks) {
      if (!B->Tmem)
        B->Tmem = std::make_unique<uint32_t[]>(TmemLanes * TmemColumns);
      B->TmemUsed |= Mask << First;
    }
    return First * 32;
  }
  L = {};
  raiseFault(C, LaunchFault::IllegalInstruction, Why, true);
}

/// tcgen05.alloc.cta_group::2 for one of the pair's two warps: the first to come allocates the same columns in both
/// CTAs' Tensor Memories and writes the address to both CTAs' destination (the same shared-memory offset, as both
/// must name); the second finds its allocation made.
void allocPair(ThreadContext *C, uint32_t Units, char *Dst) {
  const char *What = "tcgen05.alloc.cta_group::2";
  uint32_t Peer = C->Cluster ? C->Cluster->Rank ^ 1 : 1;
  BlockState &P = clusterBlockOf(C, Peer, What);
  if (static_cast<uint64_t>(Dst - C->Shared) + 4 > C->TotalSmemSize)
    raiseFault(C, LaunchFault::IllegalAddress, std::string(What) + ": the destination is not in shared memory", true);
  auto L = tmemAllocLock(C);
  std::vector<uint32_t> &Mine = C->Cluster->Group->PairAllocs[C->Cluster->Rank];
  if (!Mine.empty()) {
    Mine.erase(Mine.begin());
    return;
  }
  uint32_t Addr = allocColumns(C, L, {C->Block, &P}, Units);
  memcpy(Dst, &Addr, 4);
  memcpy(clusterWindow(C, Peer) + (Dst - C->Shared), &Addr, 4);
  C->Cluster->Group->PairAllocs[Peer].push_back(Addr);
}

/// tcgen05.alloc/dealloc for a warp, computed once: In words 0 the operation (1 alloc, 2 dealloc, 3 alloc for a
/// cta_group::2 pair), 1 the column count, 2 the shared-memory destination (alloc) or the Tensor Memory address
/// (dealloc: each CTA of a pair frees its own).
void computeTmemAlloc(CollectiveSlot &S, void *Arg) {
  auto *C = static_cast<ThreadContext *>(Arg);
  BlockState &B = *C->Block;
  const uint64_t *F = S.In[__builtin_ctz(S.Participants)];
  uint32_t Cols = static_cast<uint32_t>(F[1]);
  if (Cols < 32 || Cols > TmemColumns || (Cols & (Cols - 1)))
    raiseFault(C, LaunchFault::IllegalInstruction,
               "tcgen05.alloc/dealloc: the column count is no power of 2 in 32..512", true);
  uint32_t Units = Cols / 32;
  if (F[0] == 3)
    return allocPair(C, Units, reinterpret_cast<char *>(F[2]));
  auto L = tmemAllocLock(C);
  if (F[0] == 2) {
    B.TmemUsed &= ~((Units >= 32 ? ~0u : (1u << Units) - 1) << (static_cast<uint32_t>(F[2] & 0xffff) / 32));
    return;
  }
  uint32_t Addr = allocColumns(C, L, {&B}, Units);
  memcpy(reinterpret_cast<char *>(F[2]), &Addr, 4);
}

/// The element code (MatrixElements.h) of an instruction descriptor's A or B type field for a kind (tcgen05.mma's
/// Kind: 0 f16, 1 tf32, 2 f8f6f4, 3 i8, 4 mxf8f6f4, 5 mxf4, 6 mxf4nvf4); MENone for a value the ISA leaves undefined.
uint32_t tcgenType(uint32_t Kind, uint32_t Field) {
  static constexpr uint32_t F8f6f4[8] = {MEE4M3, MEE5M2, MENone, MEE2M3, MEE3M2, MEE2M1Byte, MENone, MENone};
  switch (Kind) {
  case 2:
  case 4:
    return F8f6f4[Field & 7];
  case 5:
  case 6:
    return Field == 1 ? MEE2M1 : MENone;
  case 0:
    return Field == 0 ? MEF16 : Field == 1 ? MEBF16 : MENone;
  case 1:
    return Field == 2 ? METF32 : MENone;
  default:
    return Field == 0 ? MEU8 : Field == 1 ? MES8 : MENone;
  }
}

/// A tcgen05 shared-memory descriptor as a wgmma one (the same address and offset fields; swizzle codes 2, 4 and
/// 6 are wgmma's 1, 2 and 3), or 0 for the 128-byte swizzle with 32-byte atomicity, not done here.
uint64_t hopperDescriptor(uint64_t Desc) {
  static constexpr uint64_t Codes[8] = {0, ~0ull, 1, ~0ull, 2, ~0ull, 3, ~0ull};
  uint64_t Code = Codes[Desc >> 61];
  return Code == ~0ull ? 0 : (Desc & 0x00003fff3fff3fffull) | Code << 62;
}

/// Where register R of a tcgen05.ld/st of shape Shape (0 .32x32b, 1 .16x64b, 2 .16x128b, 3 .16x256b,
/// 4 .16x32bx2) puts lane Lane's value, as lane and column offsets from the address (CUTLASS's SM100 TMEM_LOAD
/// layouts): .32x32b lane l, column R; .16x64b lane l/4 + 8 (l mod 2), column 2R + (l/2 mod 2); .16x128b (two
/// registers a repeat) lane l/4 + 8 (R mod 2), column 4 (R/2) + l mod 4; .16x256b (four) lane l/4 + 8 (R/2 mod 2),
/// column 8 (R/4) + 2 (l mod 4) + R mod 2; .16x32bx2 lane l mod 16, column R (its lanes 16-31 Imm columns on, which
/// the caller adds: Imm counts 32-bit columns, packed or not, as CUTLASS's _16b atoms' immediates say).
void tmemPosition(uint32_t Shape, uint32_t Lane, unsigned R, uint32_t &Row, uint32_t &Col) {
  switch (Shape) {
  case 1:
    Row = Lane / 4 + 8 * (Lane % 2), Col = 2 * R + (Lane / 2) % 2;
    return;
  case 2:
    Row = Lane / 4 + 8 * (R % 2), Col = 4 * (R / 2) + Lane % 4;
    return;
  case 3:
    Row = Lane / 4 + 8 * ((R / 2) % 2), Col = 8 * (R / 4) + 2 * (Lane % 4) + R % 2;
    return;
  case 4:
    Row = Lane % 16, Col = R;
    return;
  default:
    Row = Lane, Col = R;
  }
}

/// Register R's word moved to or from Tensor Memory at (Row, Col): the cell itself, or with .pack::16b/.unpack::16b
/// (Pack) the low halves of columns 2 Col and 2 Col + 1, the register's low and high half (CUTLASS's _16b TMEM
/// atoms read each logical 32-bit column from two 16-bit halves); unpacking zeroes the columns' high halves.
void tmemMove(ThreadContext *C, uint32_t Row, uint32_t Col, bool Pack, bool Store, uint32_t &Reg) {
  const char *What = Store ? "tcgen05.st" : "tcgen05.ld";
  if (!Pack) {
    uint32_t *Cell = tmemCell(C, Row, Col, 1, What);
    Store ? void(*Cell = Reg) : void(Reg = *Cell);
    return;
  }
  uint32_t *Lo = tmemCell(C, Row, Col, 2, What);
  if (Store)
    Lo[0] = Reg & 0xffff, Lo[1] = Reg >> 16;
  else
    Reg = (Lo[0] & 0xffff) | Lo[1] << 16;
}

/// A key that orders f32 bits as min/max.f32 do (-0 below +0): the sign-magnitude bits made two's complement.
int32_t orderedF32(uint32_t Bits) { return static_cast<int32_t>(Bits ^ ((0u - (Bits >> 31)) & 0x7fffffffu)); }

/// tcgen05.ld.red's redVal: the min or max of a lane's Count loaded words (Flags: Tcgen05CopyFlag), as min/max of
/// their type take it: u32 or s32 integers, or f32 values (min/max.f32: a NaN input is ignored unless .NaN, which
/// makes any NaN the result; all NaN gives the canonical NaN; .abs reduces the magnitudes). The ISA requires
/// .num of .x2 or more, so Count >= 2.
uint32_t reduceLoaded(const uint32_t *Regs, uint32_t Count, uint32_t Flags) {
  bool Max = Flags & TgRedMax;
  if (Flags & (TgRedU32 | TgRedS32)) {
    bool Signed = Flags & TgRedS32;
    uint32_t Best = Regs[0];
    for (uint32_t R = 1; R < Count; ++R) {
      bool Less = Signed ? static_cast<int32_t>(Regs[R]) < static_cast<int32_t>(Best) : Regs[R] < Best;
      if (Max ? !Less && Regs[R] != Best : Less)
        Best = Regs[R];
    }
    return Best;
  }
  bool Any = false, SawNaN = false;
  int32_t Best = 0;
  for (uint32_t R = 0; R < Count; ++R) {
    uint32_t Bits = Flags & TgRedAbs ? Regs[R] & 0x7fffffffu : Regs[R];
    if ((Bits & 0x7fffffffu) > 0x7f800000u) {
      SawNaN = true;
      continue;
    }
    int32_t Key = orderedF32(Bits);
    if (!Any || (Max ? Key > Best : Key < Best))
      Best = Key;
    Any = true;
  }
  if (!Any || (SawNaN && (Flags & TgRedNaN)))
    return 0x7fffffffu;
  return static_cast<uint32_t>(orderedF32(static_cast<uint32_t>(Best)));
}

/// One tcgen05.ld/st for every lane of the warp at once (In: the lane's address, register buffer, count, store flag,
/// shape with TgPack16, and immediate): the instruction is warp-synchronous, and its shapes other than .32x32b reach
/// lanes of Tensor Memory that other threads' stores wrote, so no lane may run ahead of, or behind, the others'
/// accesses.
void computeTmemCopy(CollectiveSlot &S, void *Arg) {
  auto *C = static_cast<ThreadContext *>(Arg);
  forLanes(S.Participants, [&](uint32_t L) {
    const uint64_t *F = S.In[L];
    uint32_t Addr = static_cast<uint32_t>(F[0]), Count = static_cast<uint32_t>(F[2]),
             Flags = static_cast<uint32_t>(F[4]), Shape = Flags & 7;
    auto *Regs = reinterpret_cast<uint32_t *>(F[1]);
    bool Pack = Flags & TgPack16;
    for (unsigned R = 0; R < Count; ++R) {
      uint32_t Row, Col;
      tmemPosition(Shape, L, R, Row, Col);
      uint32_t Imm = Shape == 4 && L >= 16 ? static_cast<uint32_t>(F[5]) : 0;
      tmemMove(C, (Addr >> 16) + Row, (Addr & 0xffff) + (Pack ? 2 * Col : Col) + Imm, Pack, F[3] != 0, Regs[R]);
    }
    if (Flags & TgRed)
      Regs[Count] = reduceLoaded(Regs, Count, Flags);
  });
}

/// A tcgen05.mma as its instruction descriptor and flags describe it; descriptors in wgmma's form. A cta_group::2
/// pair's CTA v (0 the even rank) holds rows v M/2.. of A and D and columns v N/2.. of B; Tmem and Shared are each
/// CTA's Tensor Memory and shared window (only [0] for one CTA).
struct UmmaCall {
  uint32_t AType, BType, M, N, Flags;
  bool Int, Half, Sat, TransA, TransB;
  double SignA, SignB;
  uint64_t ADesc, BDesc;
  uint32_t ATmem, DAddr;
  BlockState *Tmem[2];
  const char *Shared[2];
  uint64_t ZeroColumns; ///< .ws's zero-column mask descriptor (with TgZeroColumns)
  /// Block scaling: scales per row of A and column of B (0: none), their Tensor Memory addresses, the scale factor
  /// data IDs (the byte of each word where the scales start), and whether they are ue4m3 (else ue8m0).
  uint32_t ScaleVec, SfaAddr, SfbAddr, SfaId, SfbId;
  bool Ue4m3;
  bool Sparse;       ///< tcgen05.mma.sp: A holds half of each row's K, the metadata places it
  uint32_t MetaAddr; ///< the sparsity metadata's Tensor Memory address
};

/// K of the call's product: twice the stored K for a sparse A.
unsigned ummaK(const UmmaCall &U) { return kOf(U.AType) * (U.Sparse ? 2 : 1); }

/// The CTAs sharing the product: 2 for a cta_group::2 pair.
unsigned ummaCtas(const UmmaCall &U) { return U.Flags & TgPair ? 2 : 1; }

/// The shapes tcgen05.mma takes: for one CTA M = 64 (N a multiple of 8) or 128 (of 16) up to N = 256, and .ws
/// M = 32, 64 or 128 with N = 64, 128 or 256 (.ws.sp 64 or 128); for a pair M = 128 or 256 with N a multiple of 16
/// up to 256.
bool ummaShape(uint32_t M, uint32_t N, uint32_t Flags) {
  if (Flags & TgWs)
    return (M == 32 || M == 64 || M == 128) && (N == 64 || N == 128 || (N == 256 && !(Flags & TgSparse)));
  if (Flags & TgPair)
    return N && N <= 256 && N % 16 == 0 && (M == 128 || M == 256);
  return N && N <= 256 && ((M == 64 && N % 8 == 0) || (M == 128 && N % 16 == 0));
}

/// The block-scaled kinds' instruction descriptor (the ISA's tables for .kind::mxf8f6f4 and .kind::mxf4(nvf4)) into U,
/// whose descriptors decodeUmma set: M in bits 27-28 (M >> 7), B's and A's scale factor data IDs in bits 4-5 and
/// 29-30, the scale type in bit 23 (1 ue8m0; mxf4nvf4 with four scales a row may take 0, ue4m3), D always f32.
/// M is 128 for one CTA, 128 or 256 for a pair (256 when sparse; the ISA's shape table). False for what the ISA
/// leaves undefined or is not done here: K = 96 (bit 31, whose scale layouts the ISA gives only as figures),
/// transposed fp4, an ID the scale vector does not allow, .ws.
bool decodeScaledUmma(uint32_t IDesc, uint32_t Flags, UmmaCall &U) {
  uint32_t Kind = Flags & TgKindMask;
  U.M = ((IDesc >> 27) & 3) << 7;
  U.Half = U.Int = U.Sat = false;
  uint32_t Vec = (Flags >> TgScaleVecShift) & 3;
  U.ScaleVec = Vec ? 1u << (Vec - 1) : 0;
  U.SfaId = (IDesc >> 29) & 3, U.SfbId = (IDesc >> 4) & 3;
  U.Ue4m3 = !(IDesc >> 23 & 1);
  bool Fp4 = Kind != 4;
  if (Fp4) // btype is two bits wide here
    U.BType = tcgenType(Kind, (IDesc >> 10) & 3);
  bool IdsOk = U.ScaleVec == 1 || (U.ScaleVec == 2 ? !(U.SfaId & 1) && !(U.SfbId & 1) : !U.SfaId && !U.SfbId);
  bool ScaleOk = !U.Ue4m3 || (Kind == 6 && U.ScaleVec == 4);
  bool MOk = Flags & TgPair ? U.M == 256 || (U.M == 128 && !U.Sparse) : U.M == 128;
  return U.ScaleVec && MOk && ummaShape(U.M, U.N, Flags) && !(Fp4 && (IDesc >> 31)) &&
         !(Fp4 && (U.TransA || U.TransB)) && U.AType != MENone && U.BType != MENone && IdsOk && ScaleOk &&
         !(Flags & TgWs);
}

/// Decodes a tcgen05.mma's instruction descriptor (types, saturation, negations, transposes, N, M) and descriptors;
/// false for what is not done here: the 128-byte swizzle with 32-byte atomicity, a transposed A in Tensor Memory, A
/// in Tensor Memory under .ws's folded layouts, transposed fp6/fp4 (the ISA's Table 52 has them K-major only). D is
/// f32 or (kinds f16 and f8f6f4) f16, or s32 for kind::i8.
bool decodeUmma(uint32_t IDesc, uint32_t Flags, uint64_t ADesc, uint64_t BDesc, UmmaCall &U) {
  uint32_t Kind = Flags & TgKindMask, DType = (IDesc >> 4) & 3;
  bool ATmem = Flags & TgATmem;
  U = UmmaCall{tcgenType(Kind, (IDesc >> 7) & 7),
               tcgenType(Kind, (IDesc >> 10) & 7),
               ((IDesc >> 24) & 0x1f) << 4,
               ((IDesc >> 17) & 0x3f) << 3,
               Flags,
               Kind == 3,
               DType == 0,
               Kind == 3 && (IDesc >> 3 & 1),
               (IDesc >> 15 & 1) != 0,
               (IDesc >> 16 & 1) != 0,
               (IDesc >> 13 & 1) ? -1.0 : 1.0,
               (IDesc >> 14 & 1) ? -1.0 : 1.0,
               ATmem ? 0 : hopperDescriptor(ADesc),
               hopperDescriptor(BDesc),
               0,
               0,
               {},
               {},
               0,
               0,
               0,
               0,
               0,
               0,
               false,
               (Flags & TgSparse) != 0,
               0};
  // .sp (sparsity bit 2 of the descriptor with it) where each CTA holds 128 rows (M = 128, a pair's M = 256) or under
  // .ws (M = 32, 64, 128), with selector 0 (the ISA: the 8-bit kinds must use 0, the block-scaled ones assume it).
  // Not done: f16's and tf32's other selectors, M = 64 without .ws and a pair's M = 128 (Layout C), whose metadata
  // layouts the ISA gives only as figures.
  if ((IDesc >> 2 & 1) != U.Sparse ||
      (U.Sparse && ((IDesc & 3) || (U.M / ummaCtas(U) != 128 && !(Flags & TgWs)))))
    return false;
  if ((narrowType(U.AType) && U.TransA) || (narrowType(U.BType) && U.TransB))
    return false;
  if (Kind >= 4)
    return decodeScaledUmma(IDesc, Flags, U) && (ATmem || !ADesc || U.ADesc) && (!BDesc || U.BDesc);
  bool ADone = ATmem ? !U.TransA && (U.M == 128 || !(Flags & TgWs)) : (!ADesc || U.ADesc);
  bool DDone = U.Int ? DType == 2 : DType == 1 || (DType == 0 && Kind != 1);
  return ummaShape(U.M, U.N, Flags) && U.AType != MENone && U.BType != MENone && DDone && ADone && (!BDesc || U.BDesc);
}

/// Where element (Row, Col) of D lies: the CTA of the pair, and lane and column from D's address by the ISA's
/// data-path layouts (CuTe's tmem_frg atoms for a CTA's M rows): 128 rows row r in lane r; 64 rows of one CTA rows
/// 16w..16w+15 in the first 16 lanes of warp w's 32; .ws's 64 and 32 rows and a pair's 64 fold N's halves or
/// quarters onto the next 64 or 32 lanes.
unsigned dPlace(const UmmaCall &U, unsigned Row, unsigned Col, uint32_t &Lane, uint32_t &Column) {
  unsigned M = U.M / ummaCtas(U), Cta = Row / M;
  Lane = Row % M, Column = Col;
  if (M == 128)
    return Cta;
  if (!(U.Flags & (TgWs | TgPair))) {
    Lane = 32 * (Lane / 16) + Lane % 16;
    return Cta;
  }
  unsigned Part = U.N / (128 / M);
  Lane += M * (Col / Part), Column = Col % Part;
  return Cta;
}

/// Element (Row, K) of A with its sign: behind its shared-memory descriptor (in its CTA's shared memory), or in its
/// CTA's Tensor Memory in the lane of D's row (of its first copy where a pair's M = 128 duplicates the rows in the
/// other two lane partitions, CuTe's TmemAllocMode::Duplicated), K packed into 32-bit columns from the low bits up:
/// a byte or more an element, the mxf4 kinds' e2m1 two to a byte.
double ummaA(ThreadContext *C, const UmmaCall &U, unsigned Row, unsigned K) {
  unsigned M = U.M / ummaCtas(U);
  if (!(U.Flags & TgATmem))
    return U.SignA * loadElem(U.Shared[Row / M], U.ADesc, Row % M, K, U.AType, U.TransA);
  unsigned Width = U.AType == MEE2M1 ? 4 : 8 * typeBytes(U.AType), Bit = K * Width;
  uint32_t Lane, Col;
  unsigned Cta = dPlace(U, Row, 0, Lane, Col);
  uint32_t Word =
      *tmemCellOf(C, *U.Tmem[Cta], (U.ATmem >> 16) + Lane, (U.ATmem & 0xffff) + Bit / 32, 1, "tcgen05.mma A");
  uint32_t Bits = Width == 32 ? Word : (Word >> (Bit % 32)) & ((1u << Width) - 1);
  return U.SignA * decode(U.AType, Bits);
}

/// Whether bit Col of the N-bit mask a zero-column mask descriptor Z generates for an M-row .ws product is set (the
/// ISA's Zero-Column Mask Descriptor): 128 / M sub-masks of N M / 128 bits each, sub-mask i starting with the value
/// of First Span i, Start Count i of its bits skipped, then alternating runs of Skip Span + 1 ones (columns of zeros)
/// and Use Span + 1 zeros (columns of B), as the ISA's four worked examples read.
bool zeroColumnBit(uint64_t Z, unsigned M, unsigned N, unsigned Col) {
  if (!(Z >> 39 & 1))
    return false;
  unsigned Width = N / (128 / M), Sub = Col / Width;
  unsigned Ones = static_cast<unsigned>(Z >> 40 & 0xff) + 1, Zeros = static_cast<unsigned>(Z >> 48 & 0xff) + 1;
  unsigned Q = (Col % Width + static_cast<unsigned>(Z >> (8 * Sub) & 0xff)) % (Ones + Zeros);
  return (Z >> (32 + Sub) & 1) ? Q < Ones : Q >= Zeros;
}

/// The column of B that column Col of D reads (moved by a zero-column mask's Column Shift), and whether the mask
/// makes it a column of zeros.
unsigned bColumn(const UmmaCall &U, unsigned Col, bool &Zero) {
  Zero = false;
  if (!(U.Flags & TgZeroColumns))
    return Col;
  Zero = zeroColumnBit(U.ZeroColumns, U.M, U.N, Col);
  return Col + static_cast<unsigned>(U.ZeroColumns >> 56 & 63);
}

/// One element of D: the row of A (signs applied) times column Col of B (in its CTA's shared memory), plus the old
/// value scaled by 2^-s when EnableD. Products are summed in double and rounded once, as wgmma's are, so the same
/// data gives wgmma's result. An f16 D element takes a column of its own, in its low half (CuTe's tmem_frg of 16-bit
/// values in 32-bit storage); the high half is written zero.
uint32_t ummaElement(const UmmaCall &U, const double *ARow, unsigned Col, uint32_t Old, uint32_t EnableD,
                     const double *ScaleB) {
  unsigned K = ummaK(U), N = U.N / ummaCtas(U);
  double In = U.Half ? halfToFloat(static_cast<uint16_t>(Old)) : llvm::bit_cast<float>(Old);
  double Acc = EnableD && !U.Int ? std::ldexp(In, -int((U.Flags >> TgScaleDShift) & 15)) : 0;
  int64_t IAcc = EnableD ? static_cast<int32_t>(Old) : 0;
  // A pair's CTA v holds columns v N/2.. of B; one CTA all of them, and a zero-column mask's shift may read past N.
  bool Zero, Pair = ummaCtas(U) == 2;
  unsigned BCol = bColumn(U, Col, Zero);
  const char *BShared = U.Shared[Pair ? BCol / N : 0];
  for (unsigned Kk = 0; Kk < K; ++Kk) {
    double P = ARow[Kk] * U.SignB *
               (Zero ? 0.0 : loadElem(BShared, U.BDesc, Pair ? BCol % N : BCol, Kk, U.BType, U.TransB));
    if (ScaleB)
      P *= ScaleB[Kk / (K / U.ScaleVec)];
    if (U.Int)
      IAcc += static_cast<int64_t>(P);
    else
      Acc += P;
  }
  if (U.Int)
    return static_cast<uint32_t>(U.Sat ? std::clamp<int64_t>(IAcc, INT32_MIN, INT32_MAX) : IAcc);
  return U.Half ? toHalf(Acc) : llvm::bit_cast<uint32_t>(static_cast<float>(Acc));
}

/// Scale factor J of row or column MN (of A or B) for the rows of D in lane partition Part of Tensor Memory Tmem (the
/// CTA's whose part of D it scales): as CuTe's tmem_sf_frg lays the scales out (the ISA's scale factor layouts),
/// MN's 32-row group in the address's column + MN / 32, lane MN mod 32 of each partition (the ISA wants the scales
/// duplicated into all four), the scales of one row in consecutive bytes of the word from the data ID's byte. ue8m0
/// is 2^(e - 127) (255 NaN), ue4m3 an e4m3 without its sign.
double scaleFactor(ThreadContext *C, const UmmaCall &U, BlockState &Tmem, uint32_t Addr, uint32_t Id, unsigned MN,
                   unsigned Part, unsigned J) {
  uint32_t Word = *tmemCellOf(C, Tmem, (Addr >> 16) + MN % 32 + 32 * Part, (Addr & 0xffff) + MN / 32, 1,
                              "tcgen05.mma scale factors");
  uint32_t Bits = Word >> (8 * (Id + J)) & 0xff;
  if (U.Ue4m3)
    return fp8ToDouble(Bits & 0x7f, false);
  return Bits == 255 ? std::nan("") : std::ldexp(1.0, int(Bits) - 127);
}

/// The 4-bit metadata of chunk Chunk of row Row of a sparse A (four elements; tf32's two), in the Tensor Memory of
/// the row's CTA (a pair's CTA v holds rows v M/2.. as one CTA's M = 128), as CuTe's tmem_e_frg (M = 128) and
/// tmem_e_frg_ws (.ws M = 128, 64, 32) lay it out (the ISA's sparsity metadata figures): a row's nibbles in chunk
/// order, chunk c at bits 4c..4c+3. 8-bit kinds: row r in lane r, bit b in column b / 32; f16 and tf32 (whose atom
/// has f16's lanes and bits at 2 bits an element): row r0 + 8 r1 + 16 r2, bit b = 4c as k0 + 16 k1 in lane
/// r0 + 16 r2 + 8 k1, bit k0 + 16 r1 of the one column. The .ws layouts of M = 64 and 32 repeat those lanes M lanes
/// on (where D's folded columns lie); this reads the first copy.
uint32_t metadataNibble(ThreadContext *C, const UmmaCall &U, unsigned Row, unsigned Chunk) {
  unsigned M = U.M / ummaCtas(U), Cta = Row / M;
  Row %= M;
  unsigned Bit = 4 * Chunk, Lane = Row, Col = Bit / 32;
  if (typeBytes(U.AType) >= 2) {
    Lane = Row % 8 + 16 * (Row / 16) + 8 * (Bit / 16);
    Bit = Bit % 16 + 16 * ((Row / 8) % 2), Col = 0;
  }
  uint32_t Word = *tmemCellOf(C, *U.Tmem[Cta], (U.MetaAddr >> 16) + Lane, (U.MetaAddr & 0xffff) + Col, 1,
                              "tcgen05.mma.sp metadata");
  return Word >> (Bit % 32) & 15;
}

/// Row Row of a sparse A expanded to its logical K: 2:4, each 4-element chunk takes the row's next two stored
/// elements at the positions its metadata's two 2-bit indices name, zeros elsewhere; the fp4 kinds' pairwise 4:8,
/// each 8-element chunk its next two stored pairs at the 2-element sub-chunks the indices name (the chunk's nibble
/// where a 2:4 kind's 4-element chunk's would be, CuTe's tmem_e_frg of fp4 having the 8-bit kinds' layout); tf32's
/// 1:2, each 2-element chunk its next stored element, first for the index pair 0b0100 and second for 0b1110 (the
/// indices name 16-bit halves, as mma.sp's tf32 metadata does).
void sparseRow(ThreadContext *C, const UmmaCall &U, unsigned Row, double *ARow) {
  unsigned K = ummaK(U), Width = U.AType == MEE2M1 ? 2 : 1;
  std::fill(ARow, ARow + K, 0.0);
  if (U.AType == METF32) {
    for (unsigned Chunk = 0; Chunk < K / 2; ++Chunk)
      ARow[2 * Chunk + (metadataNibble(C, U, Row, Chunk) & 3) / 2] = ummaA(C, U, Row, Chunk);
    return;
  }
  for (unsigned Chunk = 0; Chunk < K / (4 * Width); ++Chunk) {
    uint32_t Nibble = metadataNibble(C, U, Row, Chunk);
    for (unsigned Half = 0; Half < 2; ++Half)
      for (unsigned E = 0; E < Width; ++E)
        ARow[4 * Width * Chunk + Width * (Nibble >> (2 * Half) & 3) + E] =
            ummaA(C, U, Row, 2 * Width * Chunk + Width * Half + E);
  }
}

/// D = A * B (+ D) over the data-path layout, skipping the lanes disable-output-lane's Mask names; block-scaled
/// kinds multiply each K block of A's rows and B's columns by its scale factor.
void ummaProduct(ThreadContext *C, const UmmaCall &U, uint32_t EnableD, const uint32_t *Mask) {
  unsigned K = ummaK(U);
  for (unsigned Row = 0; Row < U.M; ++Row) {
    double ARow[128]; // K up to 128: a sparse fp4 row
    if (U.Sparse)
      sparseRow(C, U, Row, ARow);
    else
      for (unsigned Kk = 0; Kk < K; ++Kk)
        ARow[Kk] = ummaA(C, U, Row, Kk);
    // A sparse product's scale blocks divide its logical K (CUTLASS's sparse block-scaled atoms: 64 elements a scale
    // for mxf8f6f4's 1X, 64 or 32 for the fp4 kinds' 2X or 4X over K = 128). A row's scales are its CTA's, by its
    // row there.
    unsigned MCta = U.M / ummaCtas(U), CtaRow = Row % MCta;
    for (unsigned Kk = 0; Kk < K && U.ScaleVec; ++Kk)
      ARow[Kk] *= scaleFactor(C, U, *U.Tmem[Row / MCta], U.SfaAddr, U.SfaId, CtaRow, CtaRow / 32 % 4,
                              Kk / (K / U.ScaleVec));
    for (unsigned Col = 0; Col < U.N; ++Col) {
      uint32_t Lane, Column;
      unsigned Cta = dPlace(U, Row, Col, Lane, Column);
      Lane += U.DAddr >> 16;
      if (Lane < TmemLanes && (Mask[Lane / 32] >> (Lane % 32) & 1))
        continue;
      // A pair's M = 128 runs the 2x2 datapath: each half of N takes its scales from the two lane partitions that
      // hold its half of D, from the scale address's column on (CuTe's ScaleFactorDuplicated2by2).
      unsigned SfCol = MCta == 64 && ummaCtas(U) == 2 ? Col % (U.N / 2) : Col;
      double ScaleB[4];
      for (unsigned J = 0; J < U.ScaleVec; ++J)
        ScaleB[J] = scaleFactor(C, U, *U.Tmem[Cta], U.SfbAddr, U.SfbId, SfCol, (Lane % TmemLanes) / 32, J);
      uint32_t *Out = tmemCellOf(C, *U.Tmem[Cta], Lane, (U.DAddr & 0xffff) + Column, 1, "tcgen05.mma");
      *Out = ummaElement(U, ARow, Col, *Out, EnableD, U.ScaleVec ? ScaleB : nullptr);
    }
  }
}

/// The CTAs of the call: the caller's, or both of its cta_group::2 pair (ranks r & ~1 and r | 1 of its cluster).
void ummaCtasOf(ThreadContext *C, UmmaCall &U) {
  U.Tmem[0] = C->Block, U.Shared[0] = C->Shared;
  if (!(U.Flags & TgPair))
    return;
  uint32_t Base = C->Cluster ? C->Cluster->Rank & ~1u : 0;
  for (uint32_t V = 0; V < 2; ++V) {
    U.Tmem[V] = &clusterBlockOf(C, Base + V, "tcgen05.mma.cta_group::2");
    U.Shared[V] = clusterWindow(C, Base + V);
  }
}

/// Byte Byte of a 16-byte group of a decompressing tcgen05.cp's source Group (.b8x16 from Form's .b4x16_p64 or
/// .b6x16_p32: 16 elements of 4 or 6 bits packed from bit 0 up, then padding): element Byte zero-extended, as
/// ldmatrix's .b8x16 forms unpack the same source formats (WarpCollectives.cpp rowElement); without a form the
/// byte itself.
uint8_t decompressedByte(const uint8_t *Group, uint32_t Form, unsigned Byte) {
  if (Form & TgCpB4x16P64)
    return Group[Byte / 2] >> (4 * (Byte & 1)) & 15;
  if (Form & TgCpB6x16P32) {
    unsigned Bit = 6 * Byte;
    return (Group[Bit / 8] | uint32_t(Group[Bit / 8 + 1]) << 8) >> (Bit % 8) & 63;
  }
  return Group[Byte];
}

/// Row R of a tcgen05.cp source (Bytes bytes, behind descriptor D in the shared window Shared of Size bytes) into
/// Out, decompressed by Form; the source and destination rows have the same size (16 bytes a group of 16 elements).
void copySourceRow(ThreadContext *C, const char *Shared, uint32_t Size, uint64_t D, unsigned R, unsigned Bytes,
                   uint32_t Form, uint8_t *Out) {
  for (unsigned G = 0; G < Bytes; G += 16) {
    uint8_t Group[17] = {};
    for (unsigned B = 0; B < 16; ++B) {
      uint32_t Off = descOffset(D, R, G + B, 1, false);
      if (Off >= Size)
        raiseFault(C, LaunchFault::IllegalAddress, "tcgen05.cp: the matrix leaves shared memory", true);
      Group[B] = static_cast<uint8_t>(Shared[Off]);
    }
    for (unsigned B = 0; B < 16; ++B)
      Out[G + B] = decompressedByte(Group, Form, B);
  }
}

} // namespace

extern "C" {

/// tcgen05.alloc (Op 1) and tcgen05.dealloc (Op 2) for cta_group::1, a warp at a time: Arg is alloc's
/// shared-memory destination of the address, or dealloc's Tensor Memory address.
static void ptxrt_tcgen05_alloc(ThreadContext *C, uint32_t Op, uint64_t Arg, uint32_t Cols) {
  uint64_t In[3] = {Op, Cols, Arg};
  warpCollective(C, CKMma, 0xd0000000u | Op, In, 3, computeTmemAlloc, C);
}

static void ptxrt_tcgen05_relinquish(ThreadContext *C) { C->Block->TmemRelinquished = true; }

/// tcgen05.cp (Flags: the shape as the lowering numbers it in bits 0-3, Tcgen05CpFlag): the rows of the matrix
/// behind the shared-memory descriptor Desc (its K-major canonical layout, K the row's 256 or 128 bits) into Tensor
/// Memory from TAddr, row r into lane r and the lanes CuTe's UTCCP atoms broadcast it to: 64x128b.warpx2::02_13
/// also lane r + 64, 64x128b.warpx2::01_23 rows 32.. from lane 64 and each row also 32 lanes on, 32x128b.warpx4
/// lanes r + 32 w; .4x256b's four rows go to lanes r. A decompressing form unpacks each 16-byte group of the source
/// into 16 bytes. With cta_group::2 both CTAs of the pair copy, each from its own shared memory at the descriptor's
/// offsets into its own Tensor Memory (as each CTA of a pair's mma reads its share of A and B from its own).
static void ptxrt_tcgen05_cp(ThreadContext *C, uint32_t TAddr, uint64_t Desc, uint32_t Flags) {
  static constexpr unsigned Rows[6] = {128, 128, 64, 64, 32, 4}, Copies[6] = {1, 1, 2, 2, 4, 1};
  uint32_t Shape = Flags & 15;
  uint64_t D = hopperDescriptor(Desc);
  if (!D && Desc)
    raiseFault(C, LaunchFault::IllegalInstruction, "tcgen05.cp: the 128-byte swizzle with 32-byte atomicity", true);
  unsigned Bytes = Shape == 0 || Shape == 5 ? 32 : 16;
  uint32_t Base = C->Cluster ? C->Cluster->Rank & ~1u : 0;
  for (uint32_t V = 0; V < (Flags & TgCpPair ? 2u : 1u); ++V) {
    BlockState &Block = Flags & TgCpPair ? clusterBlockOf(C, Base + V, "tcgen05.cp.cta_group::2") : *C->Block;
    const char *Shared = Flags & TgCpPair ? clusterWindow(C, Base + V) : C->Shared;
    for (unsigned R = 0; R < Rows[Shape]; ++R) {
      uint8_t Row[32];
      copySourceRow(C, Shared, C->TotalSmemSize, D, R, Bytes, Flags, Row);
      for (unsigned Copy = 0; Copy < Copies[Shape]; ++Copy) {
        uint32_t Lane = Shape == 3 ? 64 * (R / 32) + R % 32 + 32 * Copy : R + (Shape == 2 ? 64 : 32) * Copy;
        memcpy(tmemCellOf(C, Block, (TAddr >> 16) + Lane, TAddr & 0xffff, Bytes / 4, "tcgen05.cp"), Row, Bytes);
      }
    }
  }
}

/// tcgen05.shift.down (Pair: cta_group::2, in both CTAs of the pair): the 32-byte elements (eight columns from
/// TAddr's) of the rows from TAddr's lane, which the ISA requires to be a multiple of 32, to the last lane each move
/// one row down; the first row keeps its value.
static void ptxrt_tcgen05_shift(ThreadContext *C, uint32_t TAddr, uint32_t Pair) {
  uint32_t First = TAddr >> 16, Col = TAddr & 0xffff, Base = C->Cluster ? C->Cluster->Rank & ~1u : 0;
  if (First % 32)
    raiseFault(C, LaunchFault::IllegalInstruction, "tcgen05.shift: the address's lane is not a multiple of 32", true);
  for (uint32_t V = 0; V < (Pair ? 2u : 1u); ++V) {
    BlockState &Block = Pair ? clusterBlockOf(C, Base + V, "tcgen05.shift.cta_group::2") : *C->Block;
    for (uint32_t Lane = TmemLanes - 1; Lane > First; --Lane)
      memcpy(tmemCellOf(C, Block, Lane, Col, 8, "tcgen05.shift"),
             tmemCellOf(C, Block, Lane - 1, Col, 8, "tcgen05.shift"), 32);
  }
}

/// tcgen05.commit's .multicast::cluster: one arrival on the mbarrier at Bar's offset in the shared memory of each CTA
/// of the cluster that CtaMask names (the product is complete already).
static void ptxrt_tcgen05_commit_multicast(ThreadContext *C, char *Bar, uint32_t CtaMask) {
  char *Window = sharedWindowOf(C, Bar);
  for (uint32_t R = 0; R < 16; ++R) {
    char *Peer = CtaMask >> R & 1 ? clusterWindow(C, R) : nullptr;
    if ((CtaMask >> R & 1) && (!Window || !Peer))
      raiseFault(C, LaunchFault::IllegalAddress, "tcgen05.commit.multicast::cluster: a CTA outside the cluster", true);
    if (Peer)
      mbarArrive(C, reinterpret_cast<uint64_t *>(Peer + (Bar - Window)));
  }
}

/// tcgen05.ld / tcgen05.st: Count registers of the calling lane, to (Store 0) or from (Store 1) Regs, at the cells
/// tmemPosition gives from the address's lane and column (Imm: .16x32bx2's second half's column offset; Shape's
/// TgPack16: two 16-bit halves a register, tmemMove).
static void ptxrt_tcgen05_ldst(ThreadContext *C, uint32_t Addr, uint32_t *Regs, uint32_t Count, uint32_t Store,
                               uint32_t Shape, uint32_t Imm) {
  uint64_t In[6] = {Addr, reinterpret_cast<uint64_t>(Regs), Count, Store, Shape, Imm};
  warpCollective(C, CKMma, 0xd1000000u | Shape << 1 | Store, In, 6, computeTmemCopy, C);
}

/// tcgen05.mma(.ws): D (M x N, in Tensor Memory at DAddr) = A * B (+ D * 2^-scale-input-d when EnableD), as
/// decodeUmma reads the instruction descriptor IDesc and Flags (Tcgen05MmaFlag); A is behind the shared-memory
/// descriptor A or in Tensor Memory at address A (TgATmem); TgPair spreads the product over a cta_group::2 pair
/// (UmmaCall). Mask holds disable-output-lane's words (four, or eight for a pair, which must be zero here), a bit per
/// Tensor Memory lane that keeps its value, or with TgZeroColumns (.ws, which has no disable-output-lane) the
/// zero-column mask descriptor in its first two words, or (block scaling) the scale factors' addresses; .sp's
/// metadata address is its ninth word, past a pair's eight of disable-output-lane.
static void ptxrt_tcgen05_mma(ThreadContext *C, uint32_t DAddr, uint64_t A, uint64_t BDesc, uint32_t IDesc,
                              uint32_t EnableD, uint32_t Flags, const uint32_t *Mask) {
  UmmaCall U;
  // Block scaling's mask words are the scale factors' addresses; it has no disable-output-lane.
  bool PairMask = (Flags & TgPair) && !(Flags >> TgScaleVecShift & 3) &&
                  std::any_of(Mask, Mask + 8, [](uint32_t W) { return W != 0; });
  if (!decodeUmma(IDesc, Flags, A, BDesc, U) || PairMask)
    raiseFault(C, LaunchFault::IllegalInstruction,
               "tcgen05.mma: a shape, type, sparsity, swizzle or pair's disable-output-lane not done", true);
  static constexpr uint32_t NoLanes[8] = {};
  if (U.Sparse)
    U.MetaAddr = Mask[8];
  if (U.ScaleVec) {
    U.SfaAddr = Mask[0], U.SfbAddr = Mask[1];
    Mask = NoLanes;
  }
  if (Flags & TgZeroColumns) {
    U.ZeroColumns = Mask[0] | uint64_t(Mask[1]) << 32;
    if ((U.ZeroColumns >> 56 & 63) > (U.M == 32 ? 16u : 32u))
      raiseFault(C, LaunchFault::IllegalInstruction,
                 "tcgen05.mma.ws: the zero-column mask's column shift is above the maximum (16 for M = 32, else 32)",
                 true);
    Mask = NoLanes;
  }
  U.ATmem = static_cast<uint32_t>(A);
  U.DAddr = DAddr;
  ummaCtasOf(C, U);
  ummaProduct(C, U, EnableD, Mask);
}

/// wgmma.mma_async(.sp): Types = A type | B type << 8 | D type << 16 | flags << 32 (WgFlags); ARegs: the lane's
/// four A registers when WgARegs; D: its D registers (N/2 words for f32/s32, N/4 for f16), read and written;
/// Meta: its sparsity metadata (WgSparse).
static void ptxrt_wgmma(ThreadContext *C, uint64_t Types, uint32_t N, uint64_t ADesc, const uint32_t *ARegs,
                        uint64_t BDesc, uint32_t ScaleD, uint32_t *D, uint32_t Meta) {
  uint32_t Flags = static_cast<uint32_t>(Types >> 32);
  if (Flags & (WgARegs | WgSparse)) {
    uint64_t In[InNWords] = {(Flags & WgARegs) ? ARegs[0] : 0u,
                             (Flags & WgARegs) ? ARegs[1] : 0u,
                             (Flags & WgARegs) ? ARegs[2] : 0u,
                             (Flags & WgARegs) ? ARegs[3] : 0u,
                             reinterpret_cast<uint64_t>(D),
                             ADesc,
                             BDesc,
                             Types,
                             uint64_t(N) | uint64_t(ScaleD) << 32,
                             Meta,
                             (C->LinearTid / 32) % 4};
    // Lanes of one warp meet at their wgmma; the site keeps them apart from mma.sync's slots.
    warpCollective(C, CKMma, 0xc0000000u ^ static_cast<uint32_t>(Types) ^ N << 24, In, InNWords, computeWarp,
                   C->Shared);
    return;
  }
  WgmmaCall W{static_cast<uint32_t>(Types & 0xff),
              static_cast<uint32_t>((Types >> 8) & 0xff),
              static_cast<uint32_t>((Types >> 16) & 0xff),
              N,
              Flags,
              ADesc,
              BDesc,
              ScaleD};
  double A[16 * 32] = {};
  loadA(C->Shared, W, (C->LinearTid / 32) % 4, A);
  if (Flags & WgNegA)
    for (double &X : A)
      X = -X;
  laneProduct(C->Shared, W, A, C->LinearTid % 32, D);
}
}

void ptxforge::codegen::exec::registerWarpgroupHelpers(HelperTable &T) {
  T.insert(T.end(),
           {PTXRT_HELPER(ptxrt_wgmma), PTXRT_HELPER(ptxrt_tcgen05_alloc), PTXRT_HELPER(ptxrt_tcgen05_relinquish),
            PTXRT_HELPER(ptxrt_tcgen05_ldst), PTXRT_HELPER(ptxrt_tcgen05_mma),
            PTXRT_HELPER(ptxrt_tcgen05_commit_multicast), PTXRT_HELPER(ptxrt_tcgen05_cp),
            PTXRT_HELPER(ptxrt_tcgen05_shift)});
}
