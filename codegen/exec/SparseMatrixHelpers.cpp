// mma.sp and mma.sp::ordered_metadata: the warp's sparse A fragments and metadata become the dense M x K matrix,
// which the dense mma path multiplies (MatrixCompute.h).
//
// A's fragments hold the non-zero half of each row (M x K/2), laid out as the dense fragments of an m16n8k(K/2)
// product of the type: lane 4g + t, register r, element e is compressed row g + 8 (r & 1), column
// t * PerReg + e + (r >> 1) * K/4. Every chunk of four elements of a row (two for tf32) has a 4-bit metadata field
// whose two 2-bit indices place the chunk's two stored values (tf32: the field describes the element pair as four
// 16-bit halves, 0b0100 the first element and 0b1110 the second). Which lane's metadata word holds the field of
// row R (g = R mod 8, high = R >= 8) and chunk c, as an H100 reads it (tests/conformance/cases/matrix/mma_sp_*):
// - 16- and 32-bit types: the group's lanes 4g + selector * n + c / 4, n = chunks per row / 4 (1 or 2), bits
//   16 * high + 4 * (c mod 4): each lane covers four chunks of both rows.
// - 8-bit types: lane 4g + 2 * selector + high + 2 * (c / 8), bits 4 * (c mod 8): each lane covers eight chunks
//   of one row.
// - 4-bit types (s4/u4, m16n8k64 and k128): as 8-bit ones, a chunk being eight elements of which two pairs of
//   neighbours are stored, each 2-bit index placing a pair (matrix/mma_sp_int4).
// B follows the dense layout extended along K (lane 4g + t, register r, element e: row t * PerReg + e +
// 4 * PerReg * r, column g); C and D are the dense m16n8 fragments.
#include "MatrixCompute.h"
#include "Runtime.h"
#include "WarpCompute.h"

#include <algorithm>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

constexpr unsigned M = 16, N = 8;
constexpr uint32_t TF32 = 3;

/// The call's shape and types, decoded from the lowering's code (lower/SparseMatrixOps.cpp): bits 0-3 the dense
/// shape (1 m16n8k16, 2 m16n8k8, 3 m16n8k32, 9 m16n8k64, 12 m16n8k128), 4-7 A type, 8-11 B, 12-15 C, 16-19 D, 20
/// satfinite, 24-25 the sparsity selector.
struct SparseCall {
  uint32_t Code, TA, TB, TC, TD, Selector;
  unsigned K, NA, NB, NC, ND;
  explicit SparseCall(uint32_t Code)
      : Code(Code), TA((Code >> 4) & 15), TB((Code >> 8) & 15), TC((Code >> 12) & 15), TD((Code >> 16) & 15),
        Selector((Code >> 24) & 3) {
    static constexpr unsigned Ks[16] = {16, 16, 8, 32, 16, 16, 16, 16, 16, 64, 16, 16, 128, 16, 16, 16};
    K = Ks[Code & 15];
    NA = M * (K / 2) * matrixElementBits(TA) / 1024;
    NB = K * N * matrixElementBits(TB) / 1024;
    NC = matrixElementBits(TC) == 16 ? 2 : 4;
    ND = matrixElementBits(TD) == 16 ? 2 : 4;
  }
};

/// Slot words of a lane: its A, B and C registers two to a word, then the metadata, its D buffer, the code.
enum InWord { InRegs, InMeta = 6, InOut, InCode, InNWords };

uint32_t reg(const CollectiveSlot &S, uint32_t Lane, unsigned I) {
  return static_cast<uint32_t>(S.In[Lane][InRegs + I / 2] >> (32 * (I & 1)));
}

uint32_t field(uint32_t Word, uint32_t T, unsigned I) {
  unsigned Bits = matrixElementBits(T);
  return Bits >= 32 ? Word : (Word >> (Bits * (I % (32 / Bits)))) & ((1u << Bits) - 1);
}

/// The warp's stored half of A (M x K/2, decoded, row-major) from the participants' fragments.
void gatherStored(const CollectiveSlot &S, const SparseCall &Call, double *Comp, uint32_t *Meta) {
  unsigned Bits = matrixElementBits(Call.TA), PerReg = 32 / Bits, Kc = Call.K / 2;
  forLanes(S.Participants, [&](uint32_t L) {
    Meta[L] = static_cast<uint32_t>(S.In[L][InMeta]);
    unsigned G = L / 4, T = L % 4;
    for (unsigned R = 0; R < Call.NA; ++R)
      for (unsigned E = 0; E < PerReg; ++E)
        Comp[(G + 8 * (R & 1)) * Kc + T * PerReg + E + (R >> 1) * (Kc / 2)] =
            decodeMatrixElement(Call.TA, field(reg(S, L, R), Call.TA, E));
  });
}

void computeSparse(CollectiveSlot &S, void *) {
  SparseCall Call(static_cast<uint32_t>(S.In[__builtin_ctz(S.Participants)][InCode]));
  double Comp[M * 64] = {}, A[M * 128], B[128 * N] = {}, C[M * N] = {};
  uint32_t Meta[32] = {};
  uint64_t D[M * N];
  gatherStored(S, Call, Comp, Meta);
  expandSparseRows(Call.TA, Call.K, Call.Selector, Meta, Comp, A);
  unsigned PerB = 32 / matrixElementBits(Call.TB), PerC = 32 / matrixElementBits(Call.TC);
  forLanes(S.Participants, [&](uint32_t L) {
    unsigned G = L / 4, T = L % 4;
    for (unsigned R = 0; R < Call.NB; ++R)
      for (unsigned E = 0; E < PerB; ++E)
        B[(T * PerB + E + 4 * PerB * R) * N + G] =
            decodeMatrixElement(Call.TB, field(reg(S, L, Call.NA + R), Call.TB, E));
    for (unsigned I = 0; I < 4; ++I)
      C[(G + 8 * (I >> 1)) * N + 2 * T + (I & 1)] =
          decodeMatrixElement(Call.TC, field(reg(S, L, Call.NA + Call.NB + I / PerC), Call.TC, I));
  });
  mmaProduct(Call.Code, M, N, Call.K, A, B, C, D);
  unsigned PerD = 32 / matrixElementBits(Call.TD);
  forLanes(S.Participants, [&](uint32_t L) {
    auto *Out = reinterpret_cast<uint32_t *>(S.In[L][InOut]);
    unsigned G = L / 4, T = L % 4;
    std::fill(Out, Out + Call.ND, 0u);
    for (unsigned I = 0; I < 4; ++I) {
      uint64_t V = D[(G + 8 * (I >> 1)) * N + 2 * T + (I & 1)];
      unsigned Sh = (32 / PerD) * (I % PerD);
      Out[I / PerD] |= static_cast<uint32_t>(V & (PerD == 1 ? 0xffffffffu : 0xffffu)) << Sh;
    }
  });
}

/// The 4-bit metadata field of row Row, chunk Chunk of Chunks (the lanes' words in Meta; see the file comment).
uint32_t metadataField(unsigned Bits, uint32_t Selector, const uint32_t *Meta, unsigned Row, unsigned Chunk,
                       unsigned Chunks) {
  unsigned G = Row % 8, High = Row >= 8;
  if (Bits <= 8)
    return Meta[4 * G + 2 * Selector + High + 2 * (Chunk / 8)] >> (4 * (Chunk % 8)) & 15;
  unsigned PerRow = std::max(1u, Chunks / 4);
  return Meta[(4 * G + Selector * PerRow + Chunk / 4) % 32] >> (16 * High + 4 * (Chunk % 4)) & 15;
}

} // namespace

void ptxforge::codegen::exec::expandSparseRows(uint32_t T, unsigned K, uint32_t Selector, const uint32_t *Meta,
                                               const double *Comp, double *A) {
  // A chunk of 2:4 sparsity holds two stored elements of four; tf32's 1:2 chunk one of two; a 4-bit chunk two
  // stored pairs of eight elements, each index placing a pair.
  unsigned Bits = matrixElementBits(T), Kc = K / 2;
  bool Tf32 = T == TF32, Nibble = Bits == 4;
  unsigned Stored = Tf32 ? 1 : Nibble ? 4 : 2, Width = 2 * Stored, Chunks = Kc / Stored;
  std::fill(A, A + M * K, 0.0);
  for (unsigned Row = 0; Row < M; ++Row)
    for (unsigned C = 0; C < Chunks; ++C) {
      uint32_t F = metadataField(Bits, Selector, Meta, Row, C, Chunks);
      for (unsigned J = 0; J < Stored; ++J) {
        unsigned Pos = Tf32 ? (F & 3) >> 1 : Nibble ? 2 * ((F >> (2 * (J / 2))) & 3) + J % 2 : (F >> (2 * J)) & 3;
        A[Row * K + C * Width + Pos] = Comp[Row * Kc + C * Stored + J];
      }
    }
}

extern "C" {

/// mma.sp(::ordered_metadata) for one lane: Code as SparseCall reads it; In the lane's A, B and C registers;
/// Meta its metadata word; Out receives its D registers.
static void ptxrt_mma_sp(ThreadContext *C, uint32_t Code, const uint32_t *In, uint32_t Meta, uint32_t *Out) {
  SparseCall Call(Code);
  uint64_t Words[InNWords] = {};
  for (unsigned I = 0, N = Call.NA + Call.NB + Call.NC; I < N && I < 12; ++I)
    Words[InRegs + I / 2] |= uint64_t(In[I]) << (32 * (I & 1));
  Words[InMeta] = Meta;
  Words[InOut] = reinterpret_cast<uint64_t>(Out);
  Words[InCode] = Code;
  warpCollective(C, CKMmaSp, Code, Words, InNWords, computeSparse, nullptr);
}
}

void ptxforge::codegen::exec::registerSparseMatrixHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_mma_sp)});
}
