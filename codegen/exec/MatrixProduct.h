// The arithmetic of one warp's matrix product (mma.sync, wmma.mma, exec/WarpCollectives.cpp): D = A * B + C on
// decoded matrices, each element summed in k order from C in double and rounded once by the caller. A whole
// product is one call, vectorized across a row of D where the CPU allows, so that a warp's mma costs a few
// hundred cycles instead of a scalar loop per element.
#pragma once

#include "ptxforge/codegen/MatrixElements.h"

#include <cstdint>

namespace ptxforge::codegen::exec {

/// D = A * B + C: A row-major M x K, B row-major K x N, C and D row-major M x N (D may be C). Each D element is
/// ((C + a0 b0) + a1 b1) + ... in double, a product rounded before its sum; ExactProducts says every product is
/// exact in double (f16, bf16, tf32 and integer inputs), which lets a fused multiply-add stand for the two
/// steps. The result is the same on every host, vectorized or not.
void multiplyMatrices(unsigned M, unsigned N, unsigned K, const double *A, const double *B, const double *C, double *D,
                      bool ExactProducts);

// Element types: ptxforge/codegen/MatrixElements.h (Code bits 4-19 of ptxrt_mma).

/// Count elements of type T (f16, bf16, tf32, f32, f64, s8, u8 or s32), stored packed and little-endian at In,
/// as the doubles a product takes (tf32: its low 13 bits cleared), exactly. False for the other types.
bool decodeElements(uint32_t T, const void *In, unsigned Count, double *Out);

/// Copies Count 4-byte words (at most 32: a fragment's registers) between unaligned addresses, with masked vector
/// moves where the CPU has them: memcpy of a size known only at run time became `rep movs` or a call, whose
/// startup cost more than the copy (it was a fifth of a wmma loop's time).
void copyWords(void *Dst, const void *Src, unsigned Count);

/// Count doubles rounded to f32 (to nearest), as bit patterns.
void doublesToF32(const double *In, unsigned Count, uint32_t *Out);

/// Whether this CPU has AVX-512F: the runtime's vector and embedded-rounding paths (probed once).
bool hasAvx512();

/// Count doubles rounded to f32 (to nearest) in place: each the double of its f32 (what decodeElements gives
/// back for the f32's bits).
void roundToF32(double *Vals, unsigned Count);

/// Out (Cols x Rows, row-major) = In (Rows x Cols, row-major) transposed; In and Out do not overlap.
void transposeMatrix(const double *In, unsigned Rows, unsigned Cols, double *Out);

/// Out (Len x Lines, row-major) from Lines runs of Len doubles at Base, LineBytes apart: a column-major matrix in
/// memory (a B fragment's columns in shared memory) read into row-major order; f64 m8n8k4's 8 x 4 by vector
/// permutes where the CPU has AVX-512 (32 scalar copies were a twelfth of an f64 GEMM's time).
void transposeLines(const char *Base, uint64_t LineBytes, unsigned Lines, unsigned Len, double *Out);

} // namespace ptxforge::codegen::exec
