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

} // namespace

extern "C" {

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
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_wgmma)});
}
