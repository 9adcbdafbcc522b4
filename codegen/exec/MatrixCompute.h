// Private to codegen/exec: the dense mma.sync arithmetic of WarpCollectives.cpp, for matrix helpers that build
// their operands another way (SparseMatrixHelpers.cpp expands mma.sp's sparse A). Element types use the
// lowering's numbering (lower/MatrixOps.cpp matrixElementCode); Code is ptxrt_mma's (bits 4-7 A type, 8-11 B,
// 12-15 C, 16-19 D, 20 satfinite).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ptxforge::codegen::exec {

/// An mma/wmma shape: M x N x K, and whether it is a wmma one (its fragments in this implementation's layout).
struct MmaShape {
  unsigned M, N, K;
  bool Wmma;
};
/// The shape of ptxrt_mma's Code (its low four bits).
MmaShape mmaShapeOf(uint32_t Code);

/// A wmma.load or wmma.store whose lane registers are each one run of memory (lower/MatrixOps.cpp runLayout packs
/// Layout): lane Lane's first element is (Lane * E) mod Total in the fragment's order, line Idx / Len, place
/// Idx % Len, lines Stride elements apart; its registers (Regs, 64-bit words) are the run's bytes in order.
inline void wmmaRunAccess(uint32_t Lane, uint32_t Layout, uint32_t Stride, char *Ptr, uint64_t *Regs) {
  uint32_t E = Layout & 127, Idx = (Lane * E) & ((1u << (Layout >> 8 & 15)) - 1), LenShift = Layout >> 12 & 15;
  char *Run = Ptr + ((uint64_t(Idx >> LenShift) * Stride + (Idx & ((1u << LenShift) - 1))) << (Layout >> 16 & 3));
  unsigned NRegs = Layout >> 18 & 31;
  bool Wide = Layout >> 23 & 1, Store = Layout >> 24 & 1;
  for (unsigned R = 0; R < NRegs; ++R) {
    if (Wide && Store)
      __builtin_memcpy(Run + 8 * R, &Regs[R], 8);
    else if (Wide)
      __builtin_memcpy(&Regs[R], Run + 8 * R, 8);
    else if (Store) {
      uint32_t V = static_cast<uint32_t>(Regs[R]);
      __builtin_memcpy(Run + 4 * R, &V, 4);
    } else {
      uint32_t V;
      __builtin_memcpy(&V, Run + 4 * R, 4);
      Regs[R] = V;
    }
  }
}

/// The fragment loads a batch took over (Desc's part after its bitmap), done lane by lane into the
/// participating lanes' words, as the loads themselves would have: the per-product path's first step.
void loadBatchFragments(const uint32_t *Desc, uint32_t Participants, uint64_t *const *LaneWords);

/// ptxrt_mma_batch's products for a full warp (LaneWords[L]: lane L's batch words; Desc as
/// lower/MatrixOps.cpp lowerMmaBatch writes it) when every one is a wmma whose fragments tile their matrices
/// (MmaBatch.cpp); false, having changed nothing, otherwise.
bool computeWarpMmaBatch(const uint32_t *Desc, uint64_t *const *LaneWords);

/// JIT'd code went away (a CompiledModule was destroyed): the batch descriptors computeWarpMmaBatch keeps parsed
/// by address are checked word for word again before their next use (another module's may lie there now).
void noteCodeUnloaded();

/// A sign-magnitude float of Exp exponent bits (bias 2^(Exp-1) - 1) and Man mantissa bits, without infinities or
/// NaN: the fp6 and fp4 types (e3m2, e2m3, e2m1) of mma.sync's and tcgen05.mma's narrow kinds.
double miniFloat(uint32_t Bits, unsigned Exp, unsigned Man);
/// Bits of one element of type T.
unsigned matrixElementBits(uint32_t T);
/// The value of an element of type T (its low bits in Bits), exact in a double.
double decodeMatrixElement(uint32_t T, uint64_t Bits);
/// D = A * B + C for an M x N x K product (M * N <= 256) as mma.sync computes it:
/// A row-major M x K, B row-major K x N, C row-major M x N, all decoded; D receives each element's bits in the D
/// type, row-major.
void mmaProduct(uint32_t Code, unsigned M, unsigned N, unsigned K, const double *A, const double *B, const double *C,
                uint64_t *D);
/// The dense 16 x K rows (row-major, into A) of a warp's structured-sparse A of element type T: Comp holds each
/// row's stored half (16 x K/2, decoded), Meta the warp's 32 metadata words, Selector the sparsity selector
/// (SparseMatrixHelpers.cpp says which lane's bits describe which chunk). mma.sp and wgmma.mma_async.sp share it.
void expandSparseRows(uint32_t T, unsigned K, uint32_t Selector, const uint32_t *Meta, const double *Comp, double *A);

/// Adds ScaledMatrixHelpers.cpp's helper (mma.sync .kind::f8f6f4, .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4).
void registerScaledMatrixHelpers(std::vector<std::pair<std::string, void *>> &T);
} // namespace ptxforge::codegen::exec
