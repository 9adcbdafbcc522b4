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
// .16x256b, .16x32bx2; no .pack/.unpack) and mma.cta_group::1
// with A and B behind shared-memory descriptors (kinds f16, tf32, f8f6f4 with e4m3/e5m2, i8; M = 128, f32 or s32
// D), from the ISA's definitions, and the products by the same descriptor layouts and arithmetic as wgmma's.
#include "MatrixCompute.h"
#include "Runtime.h"
#include "ptxforge/codegen/MatrixElements.h"

#include "ptxforge/codegen/TensorMap.h"

#include "llvm/ADT/bit.h"

#include "WarpCompute.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
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
unsigned kOf(uint32_t T) { return 32 / typeBytes(T); }

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

double loadElem(const char *Shared, uint64_t Desc, unsigned MN, unsigned K, uint32_t T, bool Trans) {
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

/// The cell at lane Lane, column Col of the caller's Tensor Memory; faults outside it or before any allocation.
uint32_t *tmemCell(ThreadContext *C, uint32_t Lane, uint32_t Col, uint32_t Count, const char *What) {
  BlockState &B = *C->Block;
  if (!B.Tmem || Lane >= TmemLanes || Col + uint64_t(Count) > TmemColumns)
    raiseFault(C, LaunchFault::IllegalAddress, std::string(What) + ": outside the allocated Tensor Memory", true);
  return &B.Tmem[Lane * TmemColumns + Col];
}

/// tcgen05.alloc/dealloc for a warp, computed once: In words 0 the operation (1 alloc, 2 dealloc), 1 the column
/// count, 2 the shared-memory destination (alloc) or the Tensor Memory address (dealloc).
void computeTmemAlloc(CollectiveSlot &S, void *Arg) {
  auto *C = static_cast<ThreadContext *>(Arg);
  BlockState &B = *C->Block;
  const uint64_t *F = S.In[__builtin_ctz(S.Participants)];
  uint32_t Cols = static_cast<uint32_t>(F[1]);
  if (Cols < 32 || Cols > TmemColumns || (Cols & (Cols - 1)))
    raiseFault(C, LaunchFault::IllegalInstruction,
               "tcgen05.alloc/dealloc: the column count is no power of 2 in "
               "32..512",
               true);
  uint32_t Units = Cols / 32, Mask = (Units >= 32 ? ~0u : (1u << Units) - 1);
  if (F[0] == 2) {
    uint32_t First = static_cast<uint32_t>(F[2] & 0xffff) / 32;
    B.TmemUsed &= ~(Mask << First);
    return;
  }
  if (B.TmemRelinquished)
    raiseFault(C, LaunchFault::IllegalInstruction, "tcgen05.alloc after tcgen05.relinquish_alloc_permit", true);
  // The GPU waits until another warp of the block deallocates; a block here runs alone, so none would.
  for (uint32_t First = 0; First + Units <= TmemColumns / 32; First += Units)
    if (!(B.TmemUsed & (Mask << First))) {
      if (!B.Tmem)
        B.Tmem = std::make_unique<uint32_t[]>(TmemLanes * TmemColumns);
      B.TmemUsed |= Mask << First;
      uint32_t Addr = First * 32;
      memcpy(reinterpret_cast<char *>(F[2]), &Addr, 4);
      return;
    }
  raiseFault(C, LaunchFault::IllegalInstruction, "tcgen05.alloc: not enough free Tensor Memory", true);
}

/// The element code (MatrixElements.h) of an instruction descriptor's A or B type field for a kind (tcgen05.mma's
/// Kind: 0 f16, 1 tf32, 2 f8f6f4, 3 i8); MENone for the types not done here.
uint32_t tcgenType(uint32_t Kind, uint32_t Field) {
  switch (Kind) {
  case 0:
    return Field == 0 ? MEF16 : Field == 1 ? MEBF16 : MENone;
  case 1:
    return Field == 2 ? METF32 : MENone;
  case 2:
    return Field == 0 ? MEE4M3 : Field == 1 ? MEE5M2 : MENone;
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
/// column 8 (R/4) + 2 (l mod 4) + R mod 2; .16x32bx2 lane l mod 16, column R + Imm for lanes 16-31.
void tmemPosition(uint32_t Shape, uint32_t Lane, unsigned R, uint32_t Imm, uint32_t &Row, uint32_t &Col) {
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
    Row = Lane % 16, Col = R + (Lane >= 16 ? Imm : 0);
    return;
  default:
    Row = Lane, Col = R;
  }
}

/// One tcgen05.ld/st for every lane of the warp at once (In: the lane's address, register buffer, count, store flag,
/// shape and immediate): the instruction is warp-synchronous, and its shapes other than .32x32b reach lanes of
/// Tensor Memory that other threads' stores wrote, so no lane may run ahead of, or behind, the others' accesses.
void computeTmemCopy(CollectiveSlot &S, void *Arg) {
  auto *C = static_cast<ThreadContext *>(Arg);
  forLanes(S.Participants, [&](uint32_t L) {
    const uint64_t *F = S.In[L];
    uint32_t Addr = static_cast<uint32_t>(F[0]), Count = static_cast<uint32_t>(F[2]),
             Shape = static_cast<uint32_t>(F[4]);
    auto *Regs = reinterpret_cast<uint32_t *>(F[1]);
    bool Store = F[3] != 0;
    const char *What = Store ? "tcgen05.st" : "tcgen05.ld";
    for (unsigned R = 0; R < Count; ++R) {
      uint32_t Row, Col;
      tmemPosition(Shape, L, R, static_cast<uint32_t>(F[5]), Row, Col);
      uint32_t *Cell = tmemCell(C, (Addr >> 16) + Row, (Addr & 0xffff) + Col, 1, What);
      if (Store)
        *Cell = Regs[R];
      else
        Regs[R] = *Cell;
    }
  });
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

/// tcgen05.ld / tcgen05.st: Count registers of the calling lane, to (Store 0) or from (Store 1) Regs, at the cells
/// tmemPosition gives from the address's lane and column (Imm: .16x32bx2's second half's column offset).
static void ptxrt_tcgen05_ldst(ThreadContext *C, uint32_t Addr, uint32_t *Regs, uint32_t Count, uint32_t Store,
                               uint32_t Shape, uint32_t Imm) {
  uint64_t In[6] = {Addr, reinterpret_cast<uint64_t>(Regs), Count, Store, Shape, Imm};
  warpCollective(C, CKMma, 0xd1000000u | Shape << 1 | Store, In, 6, computeTmemCopy, C);
}

/// tcgen05.mma.cta_group::1 with A and B behind shared-memory descriptors and D in Tensor Memory at DAddr: D (M x
/// N) = A * B (+ D when EnableD), as the instruction descriptor IDesc says (types, negations, transposes, M, N;
/// Kind as tcgenType reads it). Rows of D are lanes, its elements 32-bit columns (M = 128, f32 or s32 D; other
/// shapes and D types fault as not done). Products are summed in double and rounded once, as wgmma's are, so the
/// same data gives wgmma's result (tests/lit/run/tcgen05-mma.test).
static void ptxrt_tcgen05_mma(ThreadContext *C, uint32_t DAddr, uint64_t ADesc, uint64_t BDesc, uint32_t IDesc,
                              uint32_t EnableD, uint32_t Kind) {
  uint32_t DType = (IDesc >> 4) & 3, AType = tcgenType(Kind, (IDesc >> 7) & 7),
           BType = tcgenType(Kind, (IDesc >> 10) & 7);
  unsigned N = ((IDesc >> 17) & 0x3f) << 3, M = ((IDesc >> 24) & 0x1f) << 4;
  uint64_t A = hopperDescriptor(ADesc), B = hopperDescriptor(BDesc);
  bool Int = Kind == 3;
  if (M != 128 || !N || (IDesc & 4) || AType == MENone || BType == MENone || DType != (Int ? 2u : 1u) ||
      (ADesc && !A) || (BDesc && !B))
    raiseFault(C, LaunchFault::IllegalInstruction, "tcgen05.mma: a shape, type, sparsity or swizzle not done", true);
  unsigned K = kOf(AType);
  bool TransA = IDesc >> 15 & 1, TransB = IDesc >> 16 & 1, Sat = Int && (IDesc >> 3 & 1);
  double SignA = (IDesc >> 13 & 1) ? -1.0 : 1.0, SignB = (IDesc >> 14 & 1) ? -1.0 : 1.0;
  uint32_t *D = tmemCell(C, DAddr >> 16, DAddr & 0xffff, N, "tcgen05.mma");
  tmemCell(C, (DAddr >> 16) + M - 1, DAddr & 0xffff, N, "tcgen05.mma");
  for (unsigned Row = 0; Row < M; ++Row) {
    double ARow[32];
    for (unsigned Kk = 0; Kk < K; ++Kk)
      ARow[Kk] = SignA * loadElem(C->Shared, A, Row, Kk, AType, TransA);
    uint32_t *Out = D + Row * TmemColumns;
    for (unsigned Col = 0; Col < N; ++Col) {
      double Acc = 0;
      int64_t IAcc = EnableD ? static_cast<int32_t>(Out[Col]) : 0;
      if (EnableD && !Int)
        Acc = llvm::bit_cast<float>(Out[Col]);
      for (unsigned Kk = 0; Kk < K; ++Kk) {
        double P = ARow[Kk] * SignB * loadElem(C->Shared, B, Col, Kk, BType, TransB);
        if (Int)
          IAcc += static_cast<int64_t>(P);
        else
          Acc += P;
      }
      Out[Col] = Int ? static_cast<uint32_t>(Sat ? std::clamp<int64_t>(IAcc, INT32_MIN, INT32_MAX) : IAcc)
                     : llvm::bit_cast<uint32_t>(static_cast<float>(Acc));
    }
  }
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
            PTXRT_HELPER(ptxrt_tcgen05_ldst), PTXRT_HELPER(ptxrt_tcgen05_mma)});
}
